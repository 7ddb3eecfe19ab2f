"""prepare-merge's sweep step: reuse the PR's results, launch the rest.

The adapter between the merge state machine (`sweep_seam.SweepHook`) and the
sweeps service (`merge.sweep_service.sweep_after_merge`). Launch scripts are
taken from the prepared merge commit, checked out in a temporary linked
worktree, so a row runs the scripts it will land with; results and the run
ledger stay with the repository. The PR-head plan is computed too, so a
rerun can say "recipe changed by main" rather than "new recipe", and the
paths the PR's commits touched, which tell a harness drift of the PR's
from one of main's (docs/sweeps.md, 'Reuse at merge').
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governance.core.codes import violation
from governance.core.diagnostics import GovError, UsageError, Violation
from governance.core.settings import Settings
from governance.git.repo import GitRepo
from governance.merge.sweep_seam import SweepHook, SweepOutcome, SweepRequest
from governance.sweeps.reuse import ReuseMode


@dataclass(frozen=True, slots=True)
class SweepOptions:
    launcher: str = "local"  # "": the default for the checkout (`launcher.default_launcher`)
    mode: ReuseMode = ReuseMode.AUTO
    parallel: int = 1
    timeout_seconds: float | None = None  # None: the launch service's default
    progress: bool = True
    canary: bool = False  # each recipe's first row first; a failed canary stops its recipe
    fail_fast: bool = False  # the first failed row stops the launch
    # Also reuse, on the same identity only, the runs main's commits since the
    # PR forked stand on: `gov queue run` sets it (rows measured by a car ahead).
    reuse_landed: bool = False


def reuse_mode(*, rerun_all: bool, reuse_only: bool) -> ReuseMode:
    """The reuse policy the two command-line switches ask for."""
    if rerun_all and reuse_only:
        raise UsageError("--rerun-all and --reuse-only exclude each other", "pick one")
    if rerun_all:
        return ReuseMode.RERUN_ALL
    return ReuseMode.REUSE_ONLY if reuse_only else ReuseMode.AUTO


def sweep_hook(
    repo: GitRepo, settings: Settings, asked: bool | None, options: SweepOptions
) -> SweepAfterMerge | None:
    """The sweep step prepare-merge runs, or None: sweeping on this machine
    happens only when asked (`--sweep`, or the `sweep-on-merge` setting);
    otherwise prepare-merge plans and reports."""
    wanted = asked if asked is not None else settings.sweep_on_merge
    return SweepAfterMerge(repo, settings, options) if wanted else None


class SweepAfterMerge(SweepHook):
    """A `SweepHook` for `prepare_merge(..., sweep=SweepAfterMerge(...))`."""

    def __init__(self, repo: GitRepo, settings: Settings, options: SweepOptions) -> None:
        self.repo = repo
        self.settings = settings
        self.options = options

    def __call__(self, request: SweepRequest) -> SweepOutcome:
        from governance.merge.sweep_service import sweep_after_merge

        extra: dict[str, Any] = {}
        if self.options.timeout_seconds is not None:
            extra["timeout_seconds"] = self.options.timeout_seconds
        # The pid in the name: a later run removes it if this one is killed (scratch.clean_litter).
        prefix = f"gov-sweep-{os.getpid()}-"
        with self.repo.worktree.temporary_checkout(request.prepared, prefix) as tree:
            from governance.sweeps.launcher import default_launcher

            launcher = self.options.launcher or default_launcher(tree)
            section = sweep_after_merge(
                self.repo,
                self.settings,
                request.plan.document,
                request.pr,
                # the prepared commit counts as the PR's: a rerun of a failed
                # prepare-merge reuses what the first attempt launched
                (*request.pr_commits, request.prepared),
                launcher,
                self.options.mode,
                request.dry_run,
                pr_head_document=self._pr_head_plan(request),
                pr_touched=self._pr_touched(request),
                parallel=self.options.parallel,
                progress=self.options.progress,
                commit=request.prepared,
                scripts_root=tree,
                heard=request.heard,
                labels=request.labels,
                canary=self.options.canary,
                fail_fast=self.options.fail_fast,
                ahead_commits=self._ahead(request),
                **extra,
            )
            problems = _problems(section, tree)
        if not request.dry_run:
            self._release_adopted()
        results, results_data = ("", None) if request.dry_run else self._results(request.pr)
        return SweepOutcome(
            section.render_text(), section.to_dict(), problems, results, results_data
        )

    def _release_adopted(self) -> None:
        """A dead run's checkout kept for the launches this sweep adopted goes
        now they have ended (`scratch.clean_litter` kept it while they ran)."""
        from governance.merge.scratch import clean_litter
        from governance.sweeps.resolve import sweep_paths

        clean_litter(
            self.repo, sweep_paths(self.repo.root, self.repo.git_dir, self.settings).results
        )

    def _results(self, pr: int) -> tuple[str, dict[str, object] | None]:
        """The PR's results beside main's, for the report ("" when none can be read)."""
        from governance.results.render import render_text
        from governance.results.service import compare_pr

        try:
            report = compare_pr(self.repo, self.settings, pr)
        except GovError:
            return "", None
        if not report.comparisons:
            return "", None
        return render_text(report), report.to_dict()

    def landed(self, prepared: str, merged: str) -> str:
        """The prepared commit landed as `merged`: in the ledger, `merged`
        stands on the same runs, measured or reused (`gov runs list --commit`).
        The merge has happened whatever this says: a ledger that cannot be
        written is reported, not raised."""
        import sqlite3

        from governance.sweeps.ledger import Ledger
        from governance.sweeps.resolve import sweep_paths

        path = sweep_paths(self.repo.root, self.repo.git_dir, self.settings).ledger
        try:
            with Ledger(path) as ledger:
                rows = ledger.carry(prepared, merged)
        except (GovError, sqlite3.Error) as exc:
            return f"; the run ledger was not updated ({exc})"
        note = f"; {rows} result row(s) recorded for it in the run ledger"
        if rows and self.settings.publish_on_merge:
            from governance.results.publish import publish_landed

            note += publish_landed(self.repo, self.settings, merged)
        return note

    def _ahead(self, request: SweepRequest) -> tuple[str, ...]:
        """Main's commits since the PR forked (cars landed ahead of it): the
        runs they stand on count for rows of the same identity."""
        if not self.options.reuse_landed or not request.pr_head or not request.main_tip:
            return ()
        return tuple(self.repo.commits_between(request.pr_head, request.main_tip))

    def _pr_touched(self, request: SweepRequest) -> frozenset[str] | None:
        """What the PR's own commits changed, each commit counted (a helper
        doctored for the sweep and restored later is touched); None: unknown,
        so no harness drift is put on main."""
        if not request.pr_head or not request.main_tip:
            return None
        return self.repo.paths_touched(request.main_tip, request.pr_head)

    def _pr_head_plan(self, request: SweepRequest) -> dict[str, Any] | None:
        """The plan the PR's own sweeps ran (None when it cannot be built:
        it only sharpens the reasons given for reruns)."""
        from governance.matrix import sources

        if not request.pr_head or not request.main_tip:
            return None
        try:
            base = self.repo.merge_base(request.pr_head, request.main_tip)
            result = sources.plan_between(
                self.repo,
                base,
                request.pr_head,
                layout=self.settings.layout(),
                cache=sources.default_cache(self.repo),
            )
        except GovError:
            return None
        return result.document


def _problems(section: Any, checkout: Path) -> list[Violation]:
    """GOV702/GOV705 findings for rows that could not run or did not succeed,
    each at the launch script it ran (its path in the tree that lands) when
    there is one, else at the row's place in the plan."""
    scripts = {r.key: _in_tree(r.script, checkout) for r in section.resolved}
    outcomes = {o.job.key: o for o in (section.launch.outcomes if section.launch else [])}
    if section.dry_run:
        return [
            violation("GOV702", f"{row['key']}: {row['problem']}", row["where"])
            for row in section.rows()
            if row.get("problem")
        ]
    found = []
    for row in section.rows():
        if row["action"] != "rerun" or row.get("status") == "succeeded":
            continue
        if row.get("problem"):
            found.append(violation("GOV702", f"{row['key']}: {row['problem']}", row["where"]))
            continue
        status = row.get("status", "not launched")
        outcome = outcomes.get(row["key"])
        if outcome is not None and outcome.exit_code not in (None, 0):
            status += f" (exit {outcome.exit_code})"
        if row.get("stopped"):
            status += f" ({row['stopped']})"
        script = scripts.get(row["key"])
        found.append(
            violation(
                "GOV705",
                f"{row['key']}: {status}" + (f"; plan row {row['where']}" if script else ""),
                script or row["where"],
                hint=f"see `gov runs show {row['fingerprint'] or ''}` for its log",
            )
        )
    return found


def _in_tree(script: Path | None, checkout: Path) -> str:
    """The script's path in the repository ("" when it is not in the checkout)."""
    if script is None:
        return ""
    try:
        return script.relative_to(checkout).as_posix()
    except ValueError:
        return ""
