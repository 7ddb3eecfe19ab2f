"""The service prepare-merge calls: decide reuse per row, launch the rest.

    section = sweep_after_merge(repo, settings, plan_document, pr_number,
                                pr_commits, "local", ReuseMode.AUTO, dry_run)

The ledger is read once, `reuse.decide` (pure) splits the post-merge plan,
rerun rows go through the same launch service as `gov launch`, and the
returned `SweepSection` tells, per row, where a reused result came from or why
the row ran again. It raises FindingsError (GOV704) in reuse-only mode when
something would have to run, before launching anything.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from governance.core.codes import violation
from governance.core.diagnostics import FindingsError, GovError
from governance.merge.sweep_keys import row_keys, schedule
from governance.merge.sweep_section import SweepSection
from governance.sweeps.dispatch import Progress, adapt_for_launcher, harness_reader, launch_rows
from governance.sweeps.harness_files import CheckoutHarness
from governance.sweeps.identity import PlanRow, RowError, job_key, plan_rows
from governance.sweeps.jobs import DEFAULT_TIMEOUT_SECONDS, machine_name
from governance.sweeps.launcher import get_launcher
from governance.sweeps.ledger import CommitRow, Ledger, LedgerRun
from governance.sweeps.naming import ScriptResolver
from governance.sweeps.priority import Signature
from governance.sweeps.resolve import resolve_rows, resolver_for, sweep_paths
from governance.sweeps.reuse import (
    IdentifiedRow,
    Reason,
    ReuseDecision,
    ReuseMode,
    RunRecord,
    decide,
    identified,
)
from governance.sweeps.reuse_pin import Heard, authorised
from governance.sweeps.runfiles import evidence
from governance.sweeps.schedule import Schedule

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.git.repo import GitRepo


def sweep_after_merge(
    repo: GitRepo,
    settings: Settings,
    plan_document: Mapping[str, Any],
    pr_number: int | None,
    pr_commits: Collection[str],
    launcher_name: str = "local",
    mode: ReuseMode = ReuseMode.AUTO,
    dry_run: bool = False,
    *,
    pr_head_document: Mapping[str, Any] | None = None,
    pr_touched: Collection[str] | None = None,
    parallel: int = 1,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    progress: bool = True,
    commit: str | None = None,
    scripts_root: Path | None = None,
    heard: Heard | None = None,
    labels: Collection[str] = (),
    canary: bool = False,
    fail_fast: bool = False,
    ahead_commits: Collection[str] = (),
) -> SweepSection:
    """Decide reuse for the post-merge plan and launch the rows to rerun.

    `repo` is a GitRepo whose working tree holds the merged tree (scripts run
    from its scripts folder); the new runs are recorded under `commit`
    (default: its HEAD, the merge commit); `pr_commits` are the PR's commit
    SHAs (full); `pr_touched` the paths those commits changed (None: unknown,
    so any harness drift reruns); `pr_head_document` is the PR-head plan,
    which lets a rerun say "recipe changed by main" instead of "new recipe".
    `scripts_root`: a checkout of the merged tree to take the launch scripts
    (and so every row's harness) from, when `repo`'s working tree is not it
    (results and the ledger stay with `repo`). Rerun rows launch in the
    order of the `priority` rules (the config keys of `commit`, the PR's
    `labels`), with `canary` / `fail_fast` as `gov launch` has them.
    `ahead_commits`: main's commits the PR does not hold (cars landed ahead of
    it): a row is also reused from a run one of them stands on, on the same
    identity only."""
    rows = plan_rows(plan_document)
    head_rows = plan_rows(pr_head_document) if pr_head_document is not None else None
    paths = sweep_paths(repo.root, repo.git_dir, settings)
    if scripts_root is not None:
        paths = replace(paths, scripts=scripts_root / settings.scripts, checkout=scripts_root)
    resolver = resolver_for(paths, settings)
    harness = harness_reader(paths, settings)
    machine = machine_name(launcher_name)
    commit = commit or repo.worktree.head_sha()
    with Ledger(paths.ledger) as ledger:
        try:
            identified_rows = _identified(rows, resolver, harness, paths.results, machine)
            recipes = {item.recipe for item in identified_rows}
            sources, authorization = authorised(
                ledger.for_recipes(recipes), heard, required=settings.reuse_requires_authorization
            )
            # Main's own results: authorised when they landed, so not the PR's to authorise.
            landed = _landed_runs(ledger, ahead_commits, recipes)
            known = {run.id for run in sources}
            extra = [run for run in landed if run.id not in known]
            runs = _verified(repo, ledger, [*sources, *extra], identified_rows, mode)
            decision = decide(
                identified_rows,
                runs,
                pr_commits,
                pr_touched=pr_touched,
                harness_change=settings.harness_change,
                pr_head_rows=head_rows,
                mode=mode,
                ahead={run.id for run in landed},
            )
        except RowError as exc:
            raise FindingsError(
                "the post-merge plan holds a row gov will not launch",
                [violation("GOV703", str(exc), "plan", hint="regenerate the plan with gov plan")],
            ) from exc
        decision = _with_drift_commits(repo, decision, commit)
        if not decision.ok:
            findings = [
                violation(
                    "GOV704",
                    f"{d.key} would have to run: {d.reason}"
                    + (f" ({d.detail})" if d.detail else ""),
                    d.row.where,
                    hint="sweep the PR head again, or allow reruns (reuse mode instead of reuse-only)",
                )
                for d in decision.rerun
            ]
            raise FindingsError("reuse-only: some rows have no reusable result", findings)
        section = SweepSection(decision, dry_run=dry_run, commit=commit)
        section.authorization = authorization
        section.ignored_commands = heard.ignored if heard is not None else ()
        rerun = [d.row for d in decision.rerun]
        if not rerun:
            if not dry_run:
                ledger.attribute(commit, pr_number, attribution(section))
            return section
        section.resolved = adapt_for_launcher(
            resolve_rows(
                rerun,
                resolver,
                paths.results,
                machine=machine,
                timeout_seconds=timeout_seconds,
                build=not dry_run,
                harness=harness,
            ),
            launcher_name,
            paths,
            settings,
            build=not dry_run,
        )
        if dry_run:
            return section
        launcher = get_launcher(launcher_name, settings, paths.results)
        ready = sum(1 for r in section.resolved if r.ok)
        section.launch = launch_rows(
            section.resolved,
            launcher,
            ledger,
            commit=commit,
            pr=pr_number,
            parallel=parallel,
            on_event=Progress(ready) if progress else None,
            schedule=_schedule(repo, settings, plan_document, commit, labels, canary, fail_fast),
        )
        ledger.attribute(commit, pr_number, attribution(section))
    return section


def _landed_runs(
    ledger: Ledger, commits: Collection[str], recipes: Collection[str]
) -> list[LedgerRun]:
    """The succeeded runs of these recipes that main's `commits` stand on
    (measured or reused by the car that landed each)."""
    found: dict[int, LedgerRun] = {}
    for commit in commits:
        for _origin, run in ledger.for_commit(commit):
            recipe = run.recipe or run.fingerprint
            if run.status == "succeeded" and recipe in recipes:
                found[run.id] = run
    return sorted(found.values(), key=lambda run: run.id)


def _schedule(
    repo: GitRepo,
    settings: Settings,
    document: Mapping[str, Any],
    commit: str,
    labels: Collection[str],
    canary: bool,
    fail_fast: bool,
) -> Schedule:
    """The launch schedule: priority over the config keys as `commit` has them."""
    from governance.matrix.sources import catalog_at, default_cache

    try:
        catalog = catalog_at(repo, commit, settings.layout(), default_cache(repo))
    except GovError:
        keys: dict[Signature, tuple[str, ...]] = {}
    else:
        keys, _unknown = row_keys(catalog, document)
    return schedule(settings, keys, labels, canary=canary, fail_fast=fail_fast)


def _identified(
    rows: Sequence[PlanRow],
    resolver: ScriptResolver,
    harness: CheckoutHarness,
    results: Path,
    machine: str,
) -> list[IdentifiedRow]:
    """Every row with its recipe and the files it runs in the tree that lands
    (RowError for a row whose fingerprint field lies). A row gov cannot
    resolve to a script has no harness: it is never reused."""
    traced = resolve_rows(rows, resolver, results, machine=machine, build=False, harness=harness)
    harnesses = {r.key: r.harness for r in traced if r.harness is not None}
    out = []
    for row in rows:
        found = harnesses.get(job_key(row))
        if found is None:
            out.append(identified(row, None))
        else:
            out.append(identified(row, found.as_dict(), found.unseen))
    return out


def _with_drift_commits(repo: GitRepo, decision: ReuseDecision, landing: str) -> ReuseDecision:
    """Each drifted file of a reused row with the commits between the run and
    `landing` that changed it (what the report names). A drift no commit
    explains (a file the run's settings did not record, say) is nobody's
    provable change: that row reruns."""
    cache: dict[tuple[str, str], tuple[str, ...]] = {}
    rows = []
    for d in decision.rows:
        if d.reused_from is not None and d.drift:
            run = d.reused_from
            drift = []
            for item in d.drift:
                key = (run.commit, item.path)
                if key not in cache:
                    cache[key] = tuple(repo.commits_touching(run.commit, landing, item.path))
                drift.append(replace(item, commits=cache[key]))
            unexplained = [item.path for item in drift if not item.commits]
            if unexplained:
                detail = (
                    f"{', '.join(unexplained)} differ from run {run.run_id}, but no commit "
                    f"since {run.commit[:12]} changed them"
                )
                d = replace(
                    d, reused_from=None, reason=Reason.HARNESS_UNATTRIBUTED, detail=detail, drift=()
                )
            else:
                d = replace(d, drift=tuple(drift))
        rows.append(d)
    return replace(decision, rows=rows)


def _verified(
    repo: GitRepo,
    ledger: Ledger,
    runs: Sequence[LedgerRun],
    rows: Sequence[IdentifiedRow],
    mode: ReuseMode,
) -> list[RunRecord]:
    """The runs as the reuse core sees them, each succeeded run of a point of
    the plan with its evidence: "" when its recorded files are all there,
    unchanged, else why not (runfiles.verify), and the harness files it did
    not run as its commit holds them. Only candidates are read."""
    if mode is ReuseMode.RERUN_ALL:
        return [run.record() for run in runs]
    points = {(item.recipe, item.conc) for item in rows}
    candidates = [
        run
        for run in runs
        if run.status == "succeeded" and (run.recipe or run.fingerprint, run.conc) in points
    ]
    found = evidence(ledger, candidates)
    dirty = {run.id: uncommitted(repo, run) for run in candidates}
    return [
        replace(run.record(), evidence=found.get(run.id, ""), uncommitted=dirty.get(run.id, _NONE))
        for run in runs
    ]


_NONE: frozenset[str] = frozenset()


def uncommitted(repo: GitRepo, run: LedgerRun) -> frozenset[str]:
    """The run's harness paths whose blob is not the one its commit holds (the
    sweep ran a dirty working tree, or the commit is gone): every path when
    git cannot tell."""
    files = run.harness or {}
    inside = [path for path in files if not posixpath.isabs(path)]
    try:
        at_commit = repo.blob_ids(run.commit_sha, inside)
    except GovError:
        return frozenset(inside)
    return frozenset(path for path in inside if at_commit.get(path) != files[path])


def attribution(section: SweepSection) -> list[CommitRow]:
    """What the swept commit's results are made of: each reused row with the
    run it reuses, each launched row with its new run (rows that could not be
    launched have none)."""
    ids = section.launch.run_ids if section.launch else {}
    out: dict[str, CommitRow] = {}  # a point twice in the plan is one row
    for d in section.decision.rows:
        if d.reused_from is not None:
            out.setdefault(d.key, CommitRow(d.key, d.reused_from.run_id, "reused"))
        elif d.key in ids:
            out.setdefault(d.key, CommitRow(d.key, ids[d.key], "measured"))
    return list(out.values())
