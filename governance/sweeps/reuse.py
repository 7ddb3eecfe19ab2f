"""Per-row reuse at merge time (pure: plan rows + ledger runs in, decisions out).

The reference reuses a whole PR run or nothing and never compares the merged
matrix with the run it reuses (docs/differences.md). Here every row of the
post-merge plan is decided on its own: it is REUSED only when the ledger holds
a successful run of the *same recipe fingerprint at the same concurrency*
produced from a commit of this PR, whose result files the caller verified
(`RunRecord.evidence` empty); every other row is RERUN, with a reason.
No clock, no git, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from governance.sweeps.identity import PlanRow, conc_label, job_key, slot


class ReuseMode(StrEnum):
    AUTO = "reuse"  # reuse what qualifies, rerun the rest
    RERUN_ALL = "rerun-all"  # ignore the ledger
    REUSE_ONLY = "reuse-only"  # fail if anything would have to run


class Reason(StrEnum):
    EVAL = "eval rows carry no fingerprint"
    RERUN_ALL = "rerun-all requested"
    NEW_RECIPE = "new recipe"
    CHANGED_BY_MAIN = "fingerprint changed by main"
    PREVIOUS_FAILED = "previous run failed"
    NO_RUN = "no run on a PR commit"
    RESULTS_UNVERIFIABLE = "result files unverifiable"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One ledger row, as the core sees it."""

    run_id: int
    fingerprint: str | None
    conc: str
    commit: str
    status: str  # a JobStatus value
    pr: int | None = None
    result_path: str = ""
    ended_at: str = ""  # ISO 8601, only used to prefer the newest run
    # Why the run's files cannot vouch for it ("" = verified; the caller
    # checks them, runfiles.verify): a succeeded run with evidence is no reuse source.
    evidence: str = ""
    recipe: str | None = None  # computed by gov at launch; None: recorded before ledger v3
    harness: Mapping[str, str] | None = None  # {path: git blob id} the run ran with


@dataclass(frozen=True, slots=True)
class RowDecision:
    row: PlanRow
    key: str
    reused_from: RunRecord | None = None
    reason: Reason | None = None  # set exactly when the row is rerun
    detail: str = ""  # e.g. the run id that failed, the old fingerprint

    @property
    def reused(self) -> bool:
        return self.reused_from is not None


@dataclass(frozen=True, slots=True)
class ReuseDecision:
    mode: ReuseMode
    rows: list[RowDecision] = field(default_factory=list)

    @property
    def reused(self) -> list[RowDecision]:
        return [d for d in self.rows if d.reused]

    @property
    def rerun(self) -> list[RowDecision]:
        return [d for d in self.rows if not d.reused]

    @property
    def ok(self) -> bool:
        """False only in reuse-only mode when some row would have to run."""
        return self.mode is not ReuseMode.REUSE_ONLY or not self.rerun


def decide(
    rows: Sequence[PlanRow],
    runs: Iterable[RunRecord],
    pr_commits: Collection[str],
    *,
    pr_head_rows: Sequence[PlanRow] | None = None,
    mode: ReuseMode = ReuseMode.AUTO,
) -> ReuseDecision:
    """Decide every row of the post-merge plan. Rows must already be validated
    (`rows.job_key` raises RowError on a malformed fingerprint or conc)."""
    commits = {c.lower() for c in pr_commits}
    succeeded: dict[tuple[str, str], RunRecord] = {}
    failed: dict[tuple[str, str], RunRecord] = {}
    unverifiable: dict[tuple[str, str], RunRecord] = {}  # succeeded, files not verified
    seen: set[str] = set()
    for run in runs:
        if run.fingerprint is None:
            continue
        seen.add(run.fingerprint)
        if run.commit.lower() not in commits:
            continue
        point = (run.fingerprint, run.conc)
        target = succeeded if run.status == "succeeded" else failed
        if run.status == "succeeded" and run.evidence:
            target = unverifiable
        best = target.get(point)
        if best is None or (run.ended_at, run.run_id) > (best.ended_at, best.run_id):
            target[point] = run
    head_by_slot: dict[tuple[object, ...], str] = {}
    for head_row in pr_head_rows or ():
        if head_row.fingerprint:
            seen.add(head_row.fingerprint)
            head_by_slot[slot(head_row)] = head_row.fingerprint

    decisions = []
    for row in rows:
        key = job_key(row)
        fingerprint = row.fingerprint
        if fingerprint is None:
            decisions.append(RowDecision(row, key, reason=Reason.EVAL))
            continue
        if mode is ReuseMode.RERUN_ALL:
            decisions.append(RowDecision(row, key, reason=Reason.RERUN_ALL))
            continue
        point = (fingerprint, conc_label(row))
        if point in succeeded:
            decisions.append(RowDecision(row, key, reused_from=succeeded[point]))
            continue
        if point in unverifiable:
            run = unverifiable[point]
            detail = f"run {run.run_id}: {run.evidence}"
            decisions.append(
                RowDecision(row, key, reason=Reason.RESULTS_UNVERIFIABLE, detail=detail)
            )
            continue
        if point in failed:
            run = failed[point]
            detail = f"run {run.run_id} {run.status} at {run.commit[:12]}"
            decisions.append(RowDecision(row, key, reason=Reason.PREVIOUS_FAILED, detail=detail))
            continue
        old = head_by_slot.get(slot(row))
        if old is not None and old != fingerprint:
            detail = f"PR head ran {old[:16]}"
            decisions.append(RowDecision(row, key, reason=Reason.CHANGED_BY_MAIN, detail=detail))
        elif fingerprint not in seen:
            decisions.append(RowDecision(row, key, reason=Reason.NEW_RECIPE))
        else:
            decisions.append(RowDecision(row, key, reason=Reason.NO_RUN))
    return ReuseDecision(mode, decisions)
