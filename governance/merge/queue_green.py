"""`gov queue add --all-green`: which open PRs are green enough to enqueue.

Green is prepare-merge's own verdict on the PR head's checks
(`forge.base.judge_checks`, the rule `wait_for_checks` polls with), asked
once instead of waited for: every required check present and successful,
and no other reported check failed (cancelled and timed out included) or
still pending. The forge is only read; enqueueing is the caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from governance.forge.base import CheckRun, Forge, PullRequest, judge_checks, newest_by_name
from governance.merge.queue_store import ACTIVE, QueueStore

Verdict = Literal["add", "waiting", "skip"]


@dataclass(frozen=True, slots=True)
class GreenCandidate:
    pr: int
    head_branch: str
    verdict: Verdict
    detail: str  # add: the checks that passed; waiting: the car's state; skip: why not


def judge_green(pull: PullRequest, runs: Sequence[CheckRun], required: Sequence[str]) -> str:
    """'' when the PR head is green, else why not (one line)."""
    if not pull.head_sha:
        return "its head branch no longer exists"
    latest = newest_by_name(runs)
    verdict = judge_checks(latest, required, all_reported=True)
    reasons = []
    if verdict.failed:
        reasons.append("failed: " + ", ".join(f"{c.name}={c.conclusion}" for c in verdict.failed))
    pending = [name for name in verdict.waiting if name in latest]
    missing = [name for name in verdict.waiting if name not in latest]
    if pending:
        reasons.append("pending: " + ", ".join(pending))
    if missing:
        reasons.append("required check not reported: " + ", ".join(missing))
    return "; ".join(reasons)


def green_candidates(
    forge: Forge, store: QueueStore, required: Sequence[str], head_prefix: str = ""
) -> list[GreenCandidate]:
    """Every open PR whose head branch starts with `head_prefix`, by number,
    with its verdict. A PR already waiting in the queue is not judged again."""
    waiting = {car.pr: car.state for car in store.cars(ACTIVE)}  # one read, not one per PR
    found = []
    for pull in sorted(forge.list_pulls("open"), key=lambda p: p.number):
        if not pull.head_branch.startswith(head_prefix):
            continue
        state = waiting.get(pull.number)
        if state is not None:
            found.append(GreenCandidate(pull.number, pull.head_branch, "waiting", state))
            continue
        runs = forge.list_checks(pull.head_sha) if pull.head_sha else []
        why = judge_green(pull, runs, required)
        if why:
            found.append(GreenCandidate(pull.number, pull.head_branch, "skip", why))
        else:
            passed = ", ".join(f"{name}=success" for name in required) or "no check required"
            found.append(GreenCandidate(pull.number, pull.head_branch, "add", passed))
    return found


def render_candidates(candidates: Sequence[GreenCandidate], required: Sequence[str]) -> str:
    counts = {v: sum(1 for c in candidates if c.verdict == v) for v in ("add", "waiting", "skip")}
    head = (
        f"gov queue add --all-green: {counts['add']} to add, {counts['waiting']} already"
        f" waiting, {counts['skip']} skipped (required: {', '.join(required) or 'none'})"
    )
    lines = [head]
    for c in candidates:
        lines.append(f"  {c.verdict:<8} PR #{c.pr:<6} {c.head_branch}  {c.detail}")
    if not candidates:
        lines.append("  (no open PR with that head prefix)")
    return "\n".join(lines) + "\n"
