"""What every forge offers: pull requests, labels, comments, check runs, merges.

`prepare-merge` talks to a `Forge` and never to SQLite or HTTP directly, so the
same state machine runs against the embedded local forge and against GitHub.
The records are plain frozen dataclasses; errors are `GovError`s with hints.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from governance.core.diagnostics import EXIT_FINDINGS, GovError

PullState = Literal["open", "closed", "merged"]

# Conclusions that let a required check pass. Only "success": the reference
# merge helper dies on anything else, including "skipped" (a draft PR).
PASSING = frozenset({"success"})
# For the "every other reported check" sweep (`gh pr checks` semantics).
NON_BLOCKING = frozenset({"success", "neutral", "skipped"})


@dataclass(frozen=True, slots=True)
class PullRequest:
    number: int
    title: str
    state: PullState
    head_branch: str
    head_sha: str  # "" when the head branch no longer exists
    base_branch: str
    is_fork: bool = False
    labels: tuple[str, ...] = ()
    url: str = ""
    draft: bool = False
    merge_commit_sha: str | None = None


@dataclass(frozen=True, slots=True)
class CheckRun:
    name: str
    status: str  # queued | in_progress | completed
    # success | failure | neutral | cancelled | skipped | ...; None until completed
    conclusion: str | None
    head_sha: str = ""
    started_at: str = ""
    details_url: str = ""

    @property
    def completed(self) -> bool:
        return self.status == "completed"


@dataclass(frozen=True, slots=True)
class Comment:
    id: int
    body: str
    author: str
    created_at: str
    author_association: str = ""


@dataclass(frozen=True, slots=True)
class MergeResult:
    number: int
    merged: bool
    sha: str  # the squash commit now on the base branch
    message: str = ""


# -- errors ------------------------------------------------------------------


class ForgeError(GovError):
    """The forge could not do what was asked (missing PR, HTTP failure, ...)."""


class ForgeRefusal(ForgeError):
    """The forge answered, and the answer is no: a policy outcome, exit 1."""

    exit_code = EXIT_FINDINGS


class HeadMovedError(ForgeRefusal):
    def __init__(self, number: int, expected: str, actual: str) -> None:
        super().__init__(
            f"PR #{number} head moved: expected {expected[:12]}, found {actual[:12] or 'nothing'}",
            "someone pushed to the PR branch meanwhile; re-run prepare-merge from the new head",
        )
        self.expected = expected
        self.actual = actual


class MergeRefusedError(ForgeRefusal):
    """Not open, not mergeable, base moved, blocked by protection..."""


class ChecksFailedError(ForgeRefusal):
    def __init__(self, sha: str, failed: Sequence[CheckRun]) -> None:
        names = ", ".join(f"{c.name}={c.conclusion}" for c in failed)
        super().__init__(
            f"checks failed on {sha[:12]}: {names}",
            "open the check details, fix the cause, push, and run prepare-merge again",
        )
        self.failed = tuple(failed)


class ChecksTimeoutError(ForgeRefusal):
    def __init__(self, sha: str, waiting: Sequence[str], timeout: float) -> None:
        super().__init__(
            f"checks on {sha[:12]} gave no verdict within {timeout:g}s: {', '.join(waiting)}",
            "raise the timeout, or look at why the check is not running (draft PR? queue?)",
        )
        self.waiting = tuple(waiting)


# -- the interface -----------------------------------------------------------


class CheckRecorder(Protocol):
    """A forge on which gov itself is the CI: it records check runs."""

    def record_check(
        self,
        sha: str,
        name: str,
        *,
        status: Literal["queued", "in_progress", "completed"] = "completed",
        conclusion: str | None = None,
        details_url: str = "",
    ) -> CheckRun: ...


class BranchMover(Protocol):
    """A forge whose PR branches are refs gov can move itself (local)."""

    def move_branch(self, number: int, new_sha: str, *, expected_old_sha: str) -> PullRequest:
        """Move PR `number`'s branch to `new_sha` by compare-and-swap against
        `expected_old_sha`; `HeadMovedError` when it is elsewhere."""
        ...


class Forge(ABC):
    """One repository on one forge. Methods raise `ForgeError` subclasses."""

    kind: str

    @abstractmethod
    def get_pull(self, number: int) -> PullRequest: ...

    @abstractmethod
    def list_pulls(self, state: PullState | Literal["all"] = "open") -> list[PullRequest]: ...

    @abstractmethod
    def add_label(self, number: int, label: str) -> None: ...

    @abstractmethod
    def remove_label(self, number: int, label: str) -> None:
        """Idempotent: removing a label the PR does not carry is not an error."""

    @abstractmethod
    def post_comment(self, number: int, body: str) -> Comment: ...

    @abstractmethod
    def list_comments(self, number: int) -> list[Comment]:
        """Oldest first."""

    @abstractmethod
    def list_checks(self, sha: str, name: str | None = None) -> list[CheckRun]: ...

    @abstractmethod
    def merge_pull(
        self,
        number: int,
        expected_head_sha: str,
        *,
        method: Literal["squash"] = "squash",
        title: str | None = None,
        message: str | None = None,
    ) -> MergeResult:
        """Squash-merge; raises `HeadMovedError` unless the head is `expected_head_sha`."""

    # -- optional capabilities (None: this forge has not got it) ---------------

    @property
    def check_recorder(self) -> CheckRecorder | None:
        """Where gov records its own checks; None where CI reports them (GitHub)."""
        return None

    @property
    def branch_mover(self) -> BranchMover | None:
        """Moves PR branches itself; None where they move by `git push` (GitHub:
        push with a lease, then `require_head`)."""
        return None

    # -- shared behaviour ----------------------------------------------------

    def require_head(self, number: int, expected_sha: str) -> PullRequest:
        """The PR, provided the forge sees its head at `expected_sha` (still there,
        or just pushed there)."""
        pr = self.get_pull(number)
        if pr.head_sha != expected_sha:
            raise HeadMovedError(number, expected_sha, pr.head_sha)
        return pr

    def wait_for_checks(
        self,
        sha: str,
        required: Sequence[str],
        *,
        timeout: float = 900.0,
        poll_interval: float = 5.0,
        all_reported: bool = False,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> dict[str, CheckRun]:
        """Poll until every `required` check on `sha` completed with success.

        Fails fast: the first required check that completes otherwise raises
        `ChecksFailedError`. With `all_reported`, every other check reported on
        the SHA must also finish without failing (neutral/skipped are fine).
        No verdict by `timeout` raises `ChecksTimeoutError`. Returns the newest
        run of each name that was judged.
        """
        deadline = clock() + timeout
        while True:
            latest = newest_by_name(self.list_checks(sha))
            verdict = judge_checks(latest, required, all_reported=all_reported)
            if verdict.failed:
                raise ChecksFailedError(sha, verdict.failed)
            if not verdict.waiting:
                return {name: latest[name] for name in verdict.judged}
            remaining = deadline - clock()
            if remaining <= 0:
                raise ChecksTimeoutError(sha, verdict.waiting, timeout)
            sleep(min(poll_interval, remaining))


@dataclass(frozen=True, slots=True)
class ChecksVerdict:
    judged: tuple[str, ...]
    waiting: tuple[str, ...]
    failed: tuple[CheckRun, ...]


def newest_by_name(runs: Sequence[CheckRun]) -> dict[str, CheckRun]:
    """The newest run per check name (by `started_at`; later in the list wins ties),
    since a re-run leaves the older run of the same name behind."""
    latest: dict[str, CheckRun] = {}
    for run in runs:
        known = latest.get(run.name)
        if known is None or run.started_at >= known.started_at:
            latest[run.name] = run
    return latest


def judge_checks(
    latest: dict[str, CheckRun], required: Sequence[str], *, all_reported: bool = False
) -> ChecksVerdict:
    waiting: list[str] = []
    failed: list[CheckRun] = []
    for name in required:
        run = latest.get(name)
        if run is None or not run.completed:
            waiting.append(name)
        elif run.conclusion not in PASSING:
            failed.append(run)
    others = [n for n in latest if n not in required] if all_reported else []
    for name in others:
        run = latest[name]
        if not run.completed:
            waiting.append(name)
        elif run.conclusion not in NON_BLOCKING:
            failed.append(run)
    return ChecksVerdict(tuple(required) + tuple(others), tuple(waiting), tuple(failed))
