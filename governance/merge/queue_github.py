"""Who may put a PR in the queue on GitHub (docs/queue.md, "Security model").

`gov queue sync` (and the start of `gov queue run --forge github`) reads the
open PRs: a PR is asked for by the queue label (`[tool.gov.queue] label`) or by
a comment whose first line is exactly `/gov queue [high|normal|low]`. A request
is heard only when the one who made it (the actor of the `labeled` event, the
comment's author) has write access (collaborator permission admin, maintain or
write) and the PR's head lives in this repository (a fork is refused). A
request older than the car's last change is not heard again (a refused car
stays refused until someone asks again). With `dequeue-on-push`, a waiting
car whose head moved since it was asked for is taken out.

Everything here reads untrusted input: PR labels, comment bodies, user names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from governance.core.diagnostics import UsageError
from governance.core.settings_queue import QueueSettings
from governance.forge.base import PullRequest
from governance.forge.github import GitHubForge
from governance.forge.github_queue import label_events, may_write
from governance.merge.queue_store import (
    ACTIVE,
    PRIORITIES,
    GitHubCar,
    Priority,
    QueueStore,
    when,
)

COMMAND = "/gov queue"
# The first line, exactly: the command and an optional priority (trailing blanks allowed).
_FIRST_LINE = re.compile(r"/gov queue(?:[ \t]+(?P<priority>\S+))?[ \t\r]*")


def command_of(body: str) -> tuple[bool, Priority | None, str]:
    """(is a command, its priority, a problem) of a comment body: only its
    first line counts, so a quote or an inline mention is no command."""
    match = _FIRST_LINE.fullmatch(body.split("\n", 1)[0])
    if match is None:
        return False, None, ""
    word = match.group("priority")
    if word is None:
        return True, None, ""
    for level in PRIORITIES:
        if word == level:
            return True, level, ""
    return True, None, f"{word[:40]!r} is not a priority (high, normal or low)"


@dataclass(frozen=True, slots=True)
class Request:
    """One ask to queue a PR: by a label or by a comment."""

    actor: str
    via: str  # "label gov-queue" | "comment 123"
    at: datetime
    priority: Priority | None = None

    def describe(self) -> str:
        return f"@{self.actor or '?'} ({self.via})"


@dataclass(slots=True)
class SyncResult:
    enqueued: list[tuple[int, str]] = field(default_factory=list)  # (pr, who and how)
    refused: list[tuple[int, str]] = field(default_factory=list)  # (pr, why not)
    dequeued: list[tuple[int, str]] = field(default_factory=list)  # (pr, why)

    def lines(self) -> list[str]:
        return (
            [f"[ok] PR #{n} queued: asked by {why}" for n, why in self.enqueued]
            + [f"[NO] PR #{n} not queued: {why}" for n, why in self.refused]
            + [f"[--] PR #{n} dequeued: {why}" for n, why in self.dequeued]
        )

    def to_dict(self) -> dict[str, object]:
        def rows(pairs: list[tuple[int, str]]) -> list[dict[str, object]]:
            return [{"pr": n, "reason": why} for n, why in pairs]

        return {
            "enqueued": rows(self.enqueued),
            "refused": rows(self.refused),
            "dequeued": rows(self.dequeued),
        }


def requests_of(forge: GitHubForge, pull: PullRequest, settings: QueueSettings) -> list[Request]:
    """The asks on `pull`, oldest first: the newest labelling by the queue label
    (while the PR carries it) and every `/gov queue` comment."""
    found: list[Request] = []
    if settings.label in pull.labels:
        events = [e for e in label_events(forge, pull.number) if e.label == settings.label]
        at = when(events[-1].created_at) if events else None
        if events and at is not None:
            found.append(Request(events[-1].actor, f"label {settings.label}", at))
    for comment in forge.list_comments(pull.number):
        has, priority, problem = command_of(comment.body)
        at = when(comment.created_at)
        if has and not problem and at is not None:
            found.append(Request(comment.author, f"comment {comment.id}", at, priority))
    return sorted(found, key=lambda r: r.at)


def sync(
    forge: GitHubForge,
    store: QueueStore,
    settings: QueueSettings,
    now: Callable[[], str],
) -> SyncResult:
    """Enqueue what writers asked for, refuse the rest with a reason, and
    dequeue the waiting cars whose head moved (dequeue-on-push)."""
    result = SyncResult()
    writers: dict[str, tuple[bool, str]] = {}  # one permission call per user
    for pull in forge.list_pulls("open"):
        car = store.get(pull.number)
        if car is not None and car.state in ACTIVE:
            why = moved(store, pull, settings)
            if why and car.state == "queued":
                try:
                    dequeue(store, pull.number, why, now())
                except UsageError:  # a run took the car meanwhile: its admit decides
                    continue
                result.dequeued.append((pull.number, why))
            continue
        if car is not None and car.state == "landed":
            continue
        since = when(car.updated_at) if car is not None else None
        fresh = [r for r in requests_of(forge, pull, settings) if since is None or r.at > since]
        if not fresh:
            continue
        heard, why = _heard(forge, pull, fresh, writers)
        if heard is None:
            refuse(store, pull.number, why, now())
            result.refused.append((pull.number, why))
            continue
        level = heard.priority or settings.priority_of(pull.labels) or "normal"
        try:
            store.add(pull.number, level, now())
        except UsageError:  # another sync got there first
            continue
        store.set_github(GitHubCar(pull.number, pull.head_sha, heard.describe()))
        result.enqueued.append((pull.number, f"{heard.describe()}, {level}"))
    return result


def _heard(
    forge: GitHubForge,
    pull: PullRequest,
    fresh: list[Request],
    writers: dict[str, tuple[bool, str]],
) -> tuple[Request | None, str]:
    """The newest request by a writer, or none and why."""
    if pull.is_fork:
        return None, (
            f"its head is in a fork ({pull.head_branch}), not in {forge.slug}: the queue lands"
            " only branches of this repository (push the branch here and open a new PR)"
        )
    denied = []
    for request in reversed(fresh):
        if request.actor not in writers:
            writers[request.actor] = may_write(forge, request.actor)
        allowed, level = writers[request.actor]
        if allowed:
            return request, ""
        denied.append(f"{request.describe()} has {level} permission")
    return None, (
        "asked only by users without write access: " + "; ".join(denied)
        + " (a user with write, maintain or admin permission must add the label or comment)"
    )  # fmt: skip


def moved(store: QueueStore, pull: PullRequest, settings: QueueSettings) -> str:
    """Why a car must leave under dequeue-on-push ("" when it may stay)."""
    asked = store.github(pull.number).head_sha
    if not settings.dequeue_on_push or not asked or pull.head_sha == asked:
        return ""
    return (
        f"head moved from {asked[:12]} to {pull.head_sha[:12] or 'nothing'} since it was queued"
        " (dequeue-on-push): ask again to queue the new head"
    )


def dequeue(store: QueueStore, pr: int, why: str, stamp: str) -> None:
    store.remove(pr, stamp)
    store.set_github(replace(store.github(pr), note=why))


def refuse(store: QueueStore, pr: int, why: str, stamp: str) -> None:
    """A request not heard: the PR is listed refused at `enqueue` with why."""
    car = store.get(pr)
    if car is None or car.state not in ACTIVE:
        try:
            store.add(pr, "normal", stamp)
        except UsageError:
            return
    store.refused(pr, "enqueue", why, stamp)
    store.set_github(replace(store.github(pr), note=why))
