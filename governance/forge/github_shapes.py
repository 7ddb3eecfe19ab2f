"""GitHub's JSON answers read into the forge's records, shape-checked.

The server decides what comes back; `head: null`, `labels: 7` or a PR other
than the one asked for must stop gov with a ForgeError naming the endpoint
and the field, never a KeyError or TypeError (exit 3), and never be taken as
the PR asked for: `GET /pulls/7` answered with PR 8 is refused.
"""

from __future__ import annotations

import re
from typing import Any

from governance.forge.base import CheckRun, Comment, ForgeError, PullRequest, PullState

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


class Shape:
    """Reads fields of one answer; every miss is a ForgeError at `where`."""

    def __init__(self, where: str) -> None:
        self.where = where  # "GET /repos/o/n/pulls/7"

    def fail(self, what: str) -> ForgeError:
        return ForgeError(
            f"GitHub {self.where}: unexpected answer: {what}",
            "check the API base URL (is it GitHub's REST API?) and try again",
        )

    def obj(self, value: Any, name: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{name} is {_kind(value)}, not an object")
        return value

    def text(self, data: dict[str, Any], key: str, name: str, *, optional: bool = False) -> str:
        value = data.get(key)
        if value is None and optional:
            return ""
        if not isinstance(value, str):
            raise self.fail(f"{name}.{key} is {_kind(value)}, not a string")
        return value

    def number(self, data: dict[str, Any], key: str, name: str) -> int:
        value = data.get(key)
        if type(value) is not int:
            raise self.fail(f"{name}.{key} is {_kind(value)}, not an integer")
        return value

    def sha(self, data: dict[str, Any], key: str, name: str, *, optional: bool = False) -> str:
        value = self.text(data, key, name, optional=optional)
        if value and not _SHA.fullmatch(value):
            raise self.fail(f"{name}.{key} is not a commit id")
        return value

    def items(self, value: Any, name: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(f"{name} is {_kind(value)}, not a list")
        return value


def _kind(value: Any) -> str:
    return "missing" if value is None else type(value).__name__


def pull_from(data: Any, where: str, slug: str, number: int | None = None) -> PullRequest:
    """A PullRequest from GitHub's pull object; `number`: the PR asked for."""
    shape = Shape(where)
    pr = shape.obj(data, "the pull request")
    got = shape.number(pr, "number", "pull")
    if number is not None and got != number:
        raise shape.fail(f"asked for PR #{number}, GitHub answered with PR #{got}")
    head = shape.obj(pr.get("head"), "pull.head")
    base = shape.obj(pr.get("base"), "pull.base")
    head_repo = _full_name(shape, head, "pull.head")
    base_repo = _full_name(shape, base, "pull.base") or slug
    if pr.get("merged_at"):
        state: PullState = "merged"
    else:
        state = "open" if shape.text(pr, "state", "pull") == "open" else "closed"
    labels = tuple(
        shape.text(shape.obj(label, "pull.labels[]"), "name", "pull.labels[]")
        for label in shape.items(pr.get("labels", []), "pull.labels")
    )
    merge_sha = pr.get("merge_commit_sha")
    return PullRequest(
        number=got,
        title=shape.text(pr, "title", "pull"),
        state=state,
        head_branch=shape.text(head, "ref", "pull.head"),
        head_sha=shape.sha(head, "sha", "pull.head"),
        base_branch=shape.text(base, "ref", "pull.base"),
        # A deleted fork has head.repo null: still not this repository.
        is_fork=head_repo is None or head_repo.lower() != base_repo.lower(),
        labels=labels,
        url=shape.text(pr, "html_url", "pull", optional=True),
        draft=pr.get("draft") is True,
        merge_commit_sha=shape.sha(pr, "merge_commit_sha", "pull", optional=True)
        if merge_sha is not None
        else None,
    )


def _full_name(shape: Shape, side: dict[str, Any], name: str) -> str | None:
    repo = side.get("repo")
    if repo is None:
        return None
    return shape.text(shape.obj(repo, f"{name}.repo"), "full_name", f"{name}.repo") or None


def comment_from(data: Any, where: str) -> Comment:
    shape = Shape(where)
    comment = shape.obj(data, "the comment")
    user = comment.get("user")
    author = shape.text(shape.obj(user, "comment.user"), "login", "comment.user") if user else ""
    return Comment(
        id=shape.number(comment, "id", "comment"),
        body=shape.text(comment, "body", "comment", optional=True),
        author=author,
        created_at=shape.text(comment, "created_at", "comment", optional=True),
        author_association=shape.text(comment, "author_association", "comment", optional=True),
    )


def check_from(data: Any, where: str, sha: str) -> CheckRun:
    """A CheckRun of commit `sha`; a run of another commit is refused."""
    shape = Shape(where)
    run = shape.obj(data, "the check run")
    head_sha = shape.sha(run, "head_sha", "check_run", optional=True) or sha
    if head_sha != sha:
        raise shape.fail(f"asked for the checks of {sha[:12]}, got one of {head_sha[:12]}")
    conclusion = run.get("conclusion")
    return CheckRun(
        name=shape.text(run, "name", "check_run"),
        status=shape.text(run, "status", "check_run"),
        conclusion=None if conclusion is None else shape.text(run, "conclusion", "check_run"),
        head_sha=head_sha,
        started_at=shape.text(run, "started_at", "check_run", optional=True),
        details_url=shape.text(run, "details_url", "check_run", optional=True),
    )
