"""`gov queue run --forge github`: the train on GitHub (docs/queue.md).

Each car is prepared by prepare-merge's GitHub route (main is `origin/main`
just fetched, the prepared branch is pushed, the required checks of
`[tool.gov.queue]` are waited for, GitHub squash-merges with the prepared head
as `sha`), its settings read from main's tip on GitHub, never from the PR.
Before a car runs it is looked at again (a fork, a head pushed since it was
asked for); after GitHub merged it, the squash commit's tree as GitHub has it
must be the tree prepare-merge checked, on the main it prepared on, or the car
is refused at `land` and the queue pauses. Each PR gets one comment, edited in
place, saying where its car is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from governance.check.sides import main_settings
from governance.core.safe_text import markdown_code
from governance.core.settings import Settings
from governance.forge.base import Comment
from governance.forge.github import GitHubForge
from governance.forge.github_queue import commit_tree, edit_comment, may_write
from governance.forge.rest import GitHubHTTPError
from governance.git.repo import GitRepo
from governance.merge.queue import CarOptions, LandCar, prepare_one, utc_stamp
from governance.merge.queue_github import dequeue, moved, refuse
from governance.merge.queue_store import ACTIVE, Car, QueueStore
from governance.merge.report import MergeReport

MARKER = "<!-- gov-queue-status -->"  # how gov finds its own comment again


@dataclass(frozen=True, slots=True)
class GitHubSide:
    """Where main and the PRs live: the remote and main's name on it."""

    repo: GitRepo
    forge: GitHubForge
    remote: str
    main_branch: str

    def settings(self, overrides: Mapping[str, Any]) -> Settings:
        return github_settings(self.repo, self.remote, self.main_branch, overrides)


def github_settings(
    repo: GitRepo, remote: str, main: str, overrides: Mapping[str, Any]
) -> Settings:
    """Main's settings as GitHub has main now (fetched first), never the PR's."""
    repo.remotes.fetch(remote, f"+refs/heads/{main}:refs/remotes/{remote}/{main}")
    return main_settings(repo, main, overrides, remote=remote, local=False)


def land_car(side: GitHubSide, options: CarOptions) -> LandCar:
    """prepare-merge's GitHub route for one car, with main's settings of now."""

    def land(pr: int) -> MergeReport:
        settings = side.settings(options.overrides)
        return prepare_one(
            side.repo,
            settings,
            side.forge,
            options,
            pr,
            remote=side.remote,
            required_checks=settings.queue.required_checks,
        )

    return land


def admit(
    side: GitHubSide, store: QueueStore, settings: Settings, now: Callable[[], str] = utc_stamp
) -> Callable[[Car], str]:
    """Look at a waiting car again right before it runs: a fork is refused at
    `enqueue`, a head pushed since it was asked for is dequeued."""

    def check(car: Car) -> str:
        pull = side.forge.get_pull(car.pr)
        if pull.is_fork:
            why = f"its head is in a fork, not in {side.forge.slug}"
            refuse(store, car.pr, why, now())
            return why
        why = moved(store, pull, settings.queue)
        if why:
            dequeue(store, car.pr, why, now())
        return why

    return check


def verify(side: GitHubSide) -> Callable[[str, MergeReport], str]:
    """Tested = landed, read back from GitHub: the squash commit's tree and parent."""

    def check(commit: str, report: MergeReport) -> str:
        tree, parents = commit_tree(side.forge, commit)
        tested = side.repo.tree_id(report.prepared, "")
        if tree != tested:
            return (
                f"GitHub's squash commit {commit} has tree {tree}, not the tested tree"
                f" {tested} of {report.prepared}"
            )
        if report.main_tip and parents[:1] != (report.main_tip,):
            got = parents[0] if parents else "none"
            return (
                f"GitHub's squash commit {commit} is not one commit on {report.main_tip}"
                f" (parent {got})"
            )
        return ""

    return check


# -- one comment per PR, edited in place -----------------------------------------------


def status_body(car: Car, position: int | None, note: str) -> str:
    state = {
        "queued": f"waiting, position {position}" if position else "waiting",
        "running": "being landed now",
        "landed": f"landed as {car.landed_commit}",
        # The reason and the note quote text a PR wrote (its keys, its branch):
        # code spans, so no link, image or @mention in them is rendered.
        "refused": f"refused at `{car.refused_step}`: {markdown_code(car.refused_reason)}",
        "removed": "taken out of the queue" + (f": {markdown_code(note)}" if note else ""),
    }[car.state]
    return (
        f"{MARKER}\n**gov queue**: {state}\n\n"
        f"priority {car.priority}, attempts {car.attempts}, updated {car.updated_at}"
    )


def report(side: GitHubSide, store: QueueStore, pr: int, label: str) -> None:
    """Post or update gov's one status comment on PR `pr`, and label the PR
    with its car's state (`LABEL: STATE`, `label` the queue label)."""
    car = store.get(pr)
    if car is None:
        return
    _label_state(side, pr, label, car.state)
    waiting = [c.pr for c in store.cars(ACTIVE)]
    position = waiting.index(pr) + 1 if pr in waiting else None
    info = store.github(pr)
    body = status_body(car, position, info.note)
    comment_id = info.comment_id or _find_own(side, pr)
    done: Comment | None = None
    if comment_id:
        try:
            done = edit_comment(side.forge, comment_id, body)
        except GitHubHTTPError as exc:
            if exc.status != 404:  # deleted meanwhile: post a new one
                raise
    if done is None:
        done = side.forge.post_comment(pr, body)
    if done.id != info.comment_id:
        store.set_github(replace(store.github(pr), comment_id=done.id))


def _label_state(side: GitHubSide, pr: int, label: str, state: str) -> None:
    """One state label: the car's, added; any other state's, removed."""
    ours = {f"{label}: {s}" for s in ("queued", "running", "landed", "refused", "removed")}
    wanted = f"{label}: {state}"
    labels = side.forge.get_pull(pr).labels
    if wanted not in labels:
        side.forge.add_label(pr, wanted)
    for stale in sorted(ours.intersection(labels) - {wanted}):
        side.forge.remove_label(pr, stale)


def _find_own(side: GitHubSide, pr: int) -> int:
    """gov's comment when the database forgot it: the newest with the marker
    first line, written by a user with write access (anyone can copy a marker)."""
    for comment in reversed(side.forge.list_comments(pr)):
        if comment.body.startswith(MARKER) and may_write(side.forge, comment.author)[0]:
            return comment.id
    return 0
