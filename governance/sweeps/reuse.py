"""Per-row reuse at merge time (pure: identified rows + ledger runs in, decisions out).

The reference reuses a whole PR run or nothing and never compares the merged
matrix with the run it reuses (docs/differences.md). Here every row of the
post-merge plan, throughput and eval alike, is decided on its own, on its
identity (docs/sweeps.md, 'Row identity'): it is REUSED only from a succeeded
run of a commit of this PR with the *same recipe and concurrency*, whose
result files the caller verified (`RunRecord.evidence` empty), and

* with the same harness (every file the row runs, by blob id), or
* with a harness that differs only in files the PR's own commits never
  touched and that the run read as its commit holds them (so main changed
  them after the sweep): reused, and the decision lists that drift, unless
  `harness_change` is "rerun".

A harness file the PR touched (its sweep ran another version than the one
that lands, whatever the final diff says), a file outside the repository, or
a PR whose touched files are unknown: the row is RERUN. Every rerun says why.

A row the PR's runs cannot vouch for is also REUSED from a run main's newer
commits stand on (`ahead`: a car of the queue ahead of it, or a PR landed by
hand), but only on the same identity: recipe, concurrency and every harness
file's blob. No drift is accepted from another PR's run.
No clock, no git, no I/O.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from governance.sweeps.harness import harness_digest
from governance.sweeps.identity import (
    PlanRow,
    RowError,
    RowIdentity,
    conc_label,
    job_key,
    row_recipe,
    slot,
)

HARNESS_CHANGES = ("reuse", "rerun")  # the `harness-change` setting's values


class ReuseMode(StrEnum):
    AUTO = "reuse"  # reuse what qualifies, rerun the rest
    RERUN_ALL = "rerun-all"  # ignore the ledger
    REUSE_ONLY = "reuse-only"  # fail if anything would have to run


class Reason(StrEnum):
    RERUN_ALL = "rerun-all requested"
    NEW_RECIPE = "new recipe"
    CHANGED_BY_MAIN = "recipe changed by main"
    PREVIOUS_FAILED = "previous run failed"
    NO_RUN = "no run on a PR commit"
    RESULTS_UNVERIFIABLE = "result files unverifiable"
    NO_IDENTITY = "run recorded without an identity"
    HARNESS_UNKNOWN = "files the row runs not traced"
    HARNESS_BY_PR = "harness changed by the PR since its sweep"
    HARNESS_BY_MAIN = "harness changed on main since the sweep (harness-change = rerun)"
    HARNESS_UNATTRIBUTED = "harness changed since the sweep, by commits gov cannot tell"


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
    # Harness paths whose bytes at the run were not its commit's (a dirty
    # working tree; the caller compares with git): a drift there is the PR's.
    uncommitted: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class IdentifiedRow:
    """A plan row with what gov computed for it: recipe, concurrency, and the
    files it runs in the tree that lands (None: gov could not trace them)."""

    row: PlanRow
    recipe: str
    conc: str
    harness: Mapping[str, str] | None
    unseen: tuple[str, ...] = ()  # "path:line: source $X": what the harness cannot see

    @property
    def identity(self) -> str | None:
        if self.harness is None:
            return None
        return RowIdentity(self.recipe, self.conc, harness_digest(self.harness)).digest


def identified(
    row: PlanRow, harness: Mapping[str, str] | None, unseen: tuple[str, ...] = ()
) -> IdentifiedRow:
    """RowError when the row's fingerprint field does not match its fields."""
    return IdentifiedRow(row, row_recipe(row), conc_label(row), harness, unseen)


@dataclass(frozen=True, slots=True)
class Drift:
    """A harness file of a reused run that differs in the tree that lands,
    with the main commits that changed it (filled in by the caller, who has git)."""

    path: str
    commits: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RowDecision:
    row: PlanRow
    key: str
    reused_from: RunRecord | None = None
    reason: Reason | None = None  # set exactly when the row is rerun
    detail: str = ""  # e.g. the run id that failed, the files that changed
    identity: str | None = None  # the row's identity in the tree that lands
    drift: tuple[Drift, ...] = ()  # reused despite these main-only harness changes
    unseen: tuple[str, ...] = ()  # sources the identity cannot see (IdentifiedRow.unseen)
    ahead: bool = False  # reused from a run of main's newer commits, not of the PR

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


def _newest(runs: Iterable[RunRecord]) -> RunRecord | None:
    return max(runs, key=lambda r: (r.ended_at, r.run_id), default=None)


def _changed(mine: Mapping[str, str], theirs: Mapping[str, str]) -> list[str]:
    return sorted(p for p in mine.keys() | theirs.keys() if mine.get(p) != theirs.get(p))


class _Candidates:
    """The runs of one point (recipe, conc) on the PR's commits, by kind."""

    def __init__(self) -> None:
        self.sources: list[RunRecord] = []  # succeeded, verified, with an identity
        self.unverifiable: list[RunRecord] = []
        self.unidentified: list[RunRecord] = []
        self.failed: list[RunRecord] = []

    def add(self, run: RunRecord) -> None:
        if run.status != "succeeded":
            self.failed.append(run)
        elif run.evidence:
            self.unverifiable.append(run)
        elif run.recipe is None or run.harness is None:
            self.unidentified.append(run)
        else:
            self.sources.append(run)


def _head_recipe(row: PlanRow) -> str | None:
    try:
        return row_recipe(row)
    except RowError:
        return None


def decide(
    rows: Sequence[IdentifiedRow],
    runs: Iterable[RunRecord],
    pr_commits: Collection[str],
    *,
    pr_touched: Collection[str] | None = frozenset(),
    harness_change: str = "reuse",
    pr_head_rows: Sequence[PlanRow] | None = None,
    mode: ReuseMode = ReuseMode.AUTO,
    ahead: Collection[int] = frozenset(),
) -> ReuseDecision:
    """Decide every row of the post-merge plan.

    `pr_touched`: the repository paths the PR's own commits changed (None:
    unknown, so no harness drift can be put on main). `pr_head_rows`: the
    plan the PR's sweep ran, to tell "recipe changed by main" from "new recipe".
    `ahead`: ids of the runs main's commits since the PR forked stand on.
    """
    if harness_change not in HARNESS_CHANGES:
        raise ValueError(f"harness_change must be one of {HARNESS_CHANGES}: {harness_change!r}")
    commits = {c.lower() for c in pr_commits}
    points: dict[tuple[str, str], _Candidates] = {}
    landed: dict[tuple[str, str], _Candidates] = {}  # the runs of `ahead`
    seen: set[str] = set()  # every recipe the ledger or the PR head knows
    for run in runs:
        recipe = run.recipe or run.fingerprint  # before v3: the plan field's word
        if recipe is None:
            continue
        seen.add(recipe)
        if run.commit.lower() in commits:
            points.setdefault((recipe, run.conc), _Candidates()).add(run)
        elif run.run_id in ahead:
            landed.setdefault((recipe, run.conc), _Candidates()).add(run)
    head_by_slot: dict[tuple[object, ...], str] = {}
    for head_row in pr_head_rows or ():
        recipe = _head_recipe(head_row)
        if recipe is not None:
            seen.add(recipe)
            head_by_slot[slot(head_row)] = recipe

    decisions = []
    for item in rows:
        key = job_key(item.row)
        found = points.get((item.recipe, item.conc), _Candidates())
        if mode is ReuseMode.RERUN_ALL:
            decision = RowDecision(item.row, key, reason=Reason.RERUN_ALL)
        elif found.sources:
            decision = _from_sources(item, found.sources, pr_touched, harness_change)
        else:
            reason, detail = _why_no_source(item, found, head_by_slot, seen)
            decision = RowDecision(item.row, key, reason=reason, detail=detail)
        if mode is not ReuseMode.RERUN_ALL and not decision.reused:
            decision = _same_identity(item, landed.get((item.recipe, item.conc)), decision)
        decisions.append(replace(decision, key=key, identity=item.identity, unseen=item.unseen))
    return ReuseDecision(mode, decisions)


def _from_sources(
    item: IdentifiedRow,
    sources: Sequence[RunRecord],
    pr_touched: Collection[str] | None,
    harness_change: str,
) -> RowDecision:
    """Reuse from one of the point's reusable runs, or say why not."""
    if item.harness is None:
        return RowDecision(item.row, "", reason=Reason.HARNESS_UNKNOWN)
    harness = dict(item.harness)
    same = _newest(r for r in sources if dict(r.harness or {}) == harness)
    if same is not None:
        return RowDecision(item.row, "", reused_from=same)

    def by_pr(path: str, run: RunRecord) -> bool:
        """A drifted file the PR may have changed (or nobody can tell)."""
        if pr_touched is None or posixpath.isabs(path):
            return True
        return path in pr_touched or path in run.uncommitted

    drifts = {r.run_id: _changed(harness, r.harness or {}) for r in sources}
    main_only = _newest(r for r in sources if not any(by_pr(p, r) for p in drifts[r.run_id]))
    if main_only is not None:
        changed = drifts[main_only.run_id]
        if harness_change == "reuse":
            drift = tuple(Drift(p) for p in changed)
            return RowDecision(item.row, "", reused_from=main_only, drift=drift)
        detail = f"{', '.join(changed)} differ from run {main_only.run_id}"
        return RowDecision(item.row, "", reason=Reason.HARNESS_BY_MAIN, detail=detail)
    newest = _newest(sources)
    assert newest is not None  # sources is not empty
    changed = drifts[newest.run_id]
    if pr_touched is None or any(posixpath.isabs(p) for p in changed):
        detail = f"{', '.join(changed)} differ from run {newest.run_id}"
        return RowDecision(item.row, "", reason=Reason.HARNESS_UNATTRIBUTED, detail=detail)
    touched = [p for p in changed if by_pr(p, newest)]
    dirty = [p for p in touched if p in newest.uncommitted]
    detail = f"{', '.join(touched)} changed after run {newest.run_id}"
    if dirty:
        detail += f" (which ran {', '.join(dirty)} as no commit holds it)"
    return RowDecision(item.row, "", reason=Reason.HARNESS_BY_PR, detail=detail)


def _same_identity(
    item: IdentifiedRow, found: _Candidates | None, otherwise: RowDecision
) -> RowDecision:
    """The newest verified run of main's newer commits with the row's exact
    identity (every harness blob equal), else `otherwise`."""
    if found is None or item.harness is None:
        return otherwise
    harness = dict(item.harness)
    same = _newest(r for r in found.sources if dict(r.harness or {}) == harness)
    if same is None:
        return otherwise
    return RowDecision(item.row, "", reused_from=same, ahead=True)


def _why_no_source(
    item: IdentifiedRow,
    found: _Candidates,
    head_by_slot: Mapping[tuple[object, ...], str],
    seen: Collection[str],
) -> tuple[Reason, str]:
    """Why a row without a reusable run reruns, the most telling reason first."""
    if (run := _newest(found.unverifiable)) is not None:
        return Reason.RESULTS_UNVERIFIABLE, f"run {run.run_id}: {run.evidence}"
    if (run := _newest(found.unidentified)) is not None:
        return Reason.NO_IDENTITY, f"run {run.run_id} predates row identities (ledger v3)"
    if (run := _newest(found.failed)) is not None:
        return Reason.PREVIOUS_FAILED, f"run {run.run_id} {run.status} at {run.commit[:12]}"
    old = head_by_slot.get(slot(item.row))
    if old is not None and old != item.recipe:
        return Reason.CHANGED_BY_MAIN, f"PR head ran {old[:16]}"
    if item.recipe not in seen:
        return Reason.NEW_RECIPE, ""
    return Reason.NO_RUN, ""
