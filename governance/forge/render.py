"""Plain-text views of forge records for `gov pr list` / `gov pr show`."""

from __future__ import annotations

from collections.abc import Sequence

from governance.forge.base import CheckRun, Comment, PullRequest


def render_pull(
    pr: PullRequest, comments: Sequence[Comment] = (), checks: Sequence[CheckRun] = ()
) -> str:
    lines = [
        f"#{pr.number} {pr.title}",
        f"  state:  {pr.state}{' (draft)' if pr.draft else ''}",
        f"  branch: {pr.head_branch} -> {pr.base_branch}{' (fork)' if pr.is_fork else ''}",
        f"  head:   {pr.head_sha or '(branch missing)'}",
        f"  labels: {', '.join(pr.labels) or '(none)'}",
    ]
    if pr.merge_commit_sha:
        lines.append(f"  merged as: {pr.merge_commit_sha}")
    if pr.url:
        lines.append(f"  url:    {pr.url}")
    if checks:
        lines.append("  checks:")
        lines += [f"    {c.name}: {c.conclusion or c.status}" for c in checks]
    if comments:
        lines.append("  comments:")
        for comment in comments:
            lines.append(f"    {comment.created_at} {comment.author}:")
            lines += [f"      {line}" for line in comment.body.splitlines() or [""]]
    return "\n".join(lines)


def render_pull_list(pulls: Sequence[PullRequest]) -> str:
    """One line per PR; a short sentence when there are none."""
    if not pulls:
        return "no pull requests"
    width = max(len(str(p.number)) for p in pulls) + 1
    rows = []
    for pr in pulls:
        labels = f" [{', '.join(pr.labels)}]" if pr.labels else ""
        rows.append(
            f"{'#' + str(pr.number):<{width}}  {pr.state:<6}  {pr.head_branch:<20}  "
            f"{pr.head_sha[:12] or '-':<12}  {pr.title}{labels}"
        )
    return "\n".join(rows)
