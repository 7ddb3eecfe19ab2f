"""`gov queue run`: land the queued PRs one car at a time through prepare-merge
(docs/queue.md).

Car k is prepared on main as car k-1 left it: prepare-merge merges main into
the PR in memory, resolves the changelog by construction, checks, plans,
optionally sweeps, and lands by compare-and-swap on main; so main's changelog
is its bytes plus each landed PR's entries, in landing order. A refused car is
marked with prepare-merge's step and reason and the train goes on with the
next car on the same main. A car found `running` (its run was killed) is
resumed first: prepare-merge recovers from its journal, and a PR the forge
already merged is marked landed, never merged twice. `watch_queue` is
`gov queue run --watch`: pass after pass under the same lock. With
`--ahead N` a pass is `merge.queue_ahead`'s: candidates built ahead, landed
here one at a time (`run_car`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from governance.check.sides import main_settings
from governance.core import locks
from governance.core.crash import crash_point
from governance.core.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, UsageError
from governance.core.settings import Settings
from governance.core.state import StateLayout
from governance.forge import open_forge
from governance.forge.base import Forge
from governance.git.repo import GitRepo
from governance.merge.candidate import release_all
from governance.merge.car_rows import RowCounts, rows_by_decision
from governance.merge.prepare import PrepareOptions, prepare_merge
from governance.merge.queue_store import Car, QueueStore
from governance.merge.report import MergeReport
from governance.merge.sweep_step import SweepOptions, sweep_hook
from governance.merge.work import REQUIRED_CHECKS

# prepare-merge on one PR against main as it is now (settings re-read from main's tip).
LandCar = Callable[[int], MergeReport]
# The same, refusing (at `commit`) to land any tree but the given one ('': any).
LandTested = Callable[[int, str], MergeReport]
# Whether a waiting car may run now: "" yes, else why not (the callable took it out).
Admit = Callable[[Car], str]
# Tested = landed on a forge whose main is not a local branch: "" or what differs.
Verify = Callable[[str, MergeReport], str]
# A whole pass of `gov queue run --ahead N` (merge.queue_ahead), under the queue's lock.
Speculate = Callable[["RunResult", "Say | None"], None]
CarOutcome = Literal["landed", "refused", "busy", "would"]
Say = Callable[["CarResult"], None]


@dataclass(frozen=True, slots=True)
class CarResult:
    pr: int
    outcome: CarOutcome
    detail: str
    step: str = ""
    commit: str = ""  # the landed commit on main
    prepared: str = ""  # the commit prepare-merge checked; its tree is the landed tree
    report: MergeReport | None = None

    @property
    def rows(self) -> RowCounts | None:
        """The car's sweep rows by decision (None: it did not sweep)."""
        return rows_by_decision(self.report.sweep_data) if self.report is not None else None

    def to_dict(self) -> dict[str, object]:
        rows = self.rows
        return {
            "pr": self.pr,
            "outcome": self.outcome,
            "detail": self.detail,
            "step": self.step,
            "commit": self.commit,
            "prepared": self.prepared,
            "rows": rows.to_dict() if rows is not None else None,
            "report": self.report.to_dict() if self.report is not None else None,
        }


@dataclass(slots=True)
class RunResult:
    dry_run: bool = False
    paused: bool = False  # the queue was (or became) paused: cars were left waiting
    cars: list[CarResult] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        outcomes = {car.outcome for car in self.cars}
        if "refused" in outcomes:
            return EXIT_FINDINGS
        return EXIT_USAGE if "busy" in outcomes else EXIT_OK


class CarBusy(UsageError):
    """Another process is preparing this car's PR: the car waits, the train goes on."""


def utc_stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def queue_lock(repo: GitRepo) -> Path:
    return StateLayout(repo.git_dir).locks / "queue.lock"


@dataclass(frozen=True, slots=True)
class CarOptions:
    """How `gov queue run` calls prepare-merge for each car."""

    main_branch: str
    overrides: dict[str, Any] = field(default_factory=dict)  # flags over main's settings
    sweep: bool | None = None  # None: the sweep-on-merge setting
    sweep_options: SweepOptions = field(default_factory=SweepOptions)
    dry_run: bool = False
    poll_interval: float = 5.0
    check_timeout: float = 900.0


def prepare_car(repo: GitRepo, options: CarOptions) -> LandCar:
    """prepare-merge on the local forge, each car with the settings of main's
    tip as the car before left it."""
    tested = prepare_tested_car(repo, options)
    return lambda pr: tested(pr, "")


def prepare_tested_car(repo: GitRepo, options: CarOptions) -> LandTested:
    """`prepare_car` landing only the tree the queue tested (`--ahead`)."""

    def land(pr: int, expect_tree: str) -> MergeReport:
        settings = main_settings(repo, options.main_branch, options.overrides, remote=None)
        forge = open_forge("local", repo, settings.repository, main_branch=settings.main_branch)
        return prepare_one(repo, settings, forge, options, pr, expect_tree=expect_tree)

    return land


def prepare_one(
    repo: GitRepo,
    settings: Settings,
    forge: Forge,
    options: CarOptions,
    pr: int,
    *,
    remote: str | None = None,
    required_checks: tuple[str, ...] = REQUIRED_CHECKS,
    expect_tree: str = "",
) -> MergeReport:
    """prepare-merge on one car, with main's `settings` of now. Rows measured by
    a car ahead (or on main since the PR forked) are not run twice (docs/queue.md,
    'Sweeps across the train'); a PR another run holds is `CarBusy`."""
    sweep = replace(options.sweep_options, reuse_landed=True)
    hook = sweep_hook(repo, settings, options.sweep, sweep)
    prepare = PrepareOptions(
        pr,
        dry_run=options.dry_run,
        main_branch=settings.main_branch,
        remote=remote,
        required_checks=required_checks,
        poll_interval=options.poll_interval,
        check_timeout=options.check_timeout,
        expect_tree=expect_tree,
    )
    try:
        return prepare_merge(repo, settings, forge, prepare, sweep=hook)
    except UsageError as exc:  # another run holds this PR (its lock, or a live journal)
        raise CarBusy(exc.message, exc.hint) from exc


def run_queue(
    repo: GitRepo,
    store: QueueStore,
    forge: Forge,
    land_car: LandCar,
    *,
    main_branch: str,
    dry_run: bool = False,
    now: Callable[[], str] = utc_stamp,
    say: Callable[[CarResult], None] | None = None,
    admit: Admit | None = None,
    verify: Verify | None = None,
    max_cars: int = 0,
    speculate: Speculate | None = None,
) -> RunResult:
    """One pass over the queue (one runner per repository: a kernel lock).
    `admit` is asked before each car (GitHub: a fork, a pushed head), `verify`
    replaces the local tested-is-landed check, `max_cars` (0: no limit) caps
    the cars landed in this pass, `speculate` makes the pass (`--ahead N`)."""
    with locks.hold(queue_lock(repo), "gov queue run"):
        if speculate is not None and not dry_run:
            return _speculative_pass(speculate, say)
        return _one_pass(
            repo, store, forge, land_car, main_branch, dry_run, now, say,
            admit=admit, verify=verify, max_cars=max_cars,
        )  # fmt: skip


def watch_queue(
    repo: GitRepo,
    store: QueueStore,
    forge: Forge,
    land_car: LandCar,
    *,
    main_branch: str,
    interval: float,
    now: Callable[[], str] = utc_stamp,
    say: Callable[[CarResult], None] | None = None,
    after_pass: Callable[[RunResult], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    max_passes: int | None = None,
    stop: Callable[[], bool] = lambda: False,
    speculate: Speculate | None = None,
) -> list[RunResult]:
    """Pass after pass, `interval` seconds apart, holding the queue's lock the
    whole time (a second runner exits 2 even while this one sleeps). It ends
    when `stop()` says so after a pass, after `max_passes`, or by an exception
    (Ctrl-C, SIGTERM, a setup failure): the service's host restarts it.
    `speculate` makes each pass (`--ahead N`)."""
    passes: list[RunResult] = []
    with locks.hold(queue_lock(repo), "gov queue run --watch"):
        while True:
            done = (
                _speculative_pass(speculate, say)
                if speculate is not None
                else _one_pass(repo, store, forge, land_car, main_branch, False, now, say)
            )
            passes.append(done)
            if after_pass is not None:
                after_pass(done)
            if stop() or (max_passes is not None and len(passes) >= max_passes):
                return passes
            sleep(interval)


def _speculative_pass(speculate: Speculate, say: Say | None) -> RunResult:
    result = RunResult()
    speculate(result, say)
    return result


def _one_pass(
    repo: GitRepo,
    store: QueueStore,
    forge: Forge,
    land_car: LandCar,
    main_branch: str,
    dry_run: bool,
    now: Callable[[], str],
    say: Callable[[CarResult], None] | None,
    *,
    admit: Admit | None = None,
    verify: Verify | None = None,
    max_cars: int = 0,
) -> RunResult:
    """Every waiting car once, in order; the caller holds the queue's lock."""
    result = RunResult(dry_run=dry_run)
    if dry_run:
        _dry_run(store, land_car, result, say)
        return result
    release_all(repo, store)  # candidates a killed `--ahead` run left: not used one at a time
    seen: set[int] = set()
    while True:
        if store.paused:  # read before every car: `gov queue pause` stops the train
            result.paused = any(c.pr not in seen for c in store.cars(("queued",)))
            break
        car = _next_car(store, seen)
        if car is None:
            break
        seen.add(car.pr)
        if max_cars and sum(c.outcome == "landed" for c in result.cars) >= max_cars:
            break
        if admit is not None and car.state == "queued" and admit(car):
            continue
        done = run_car(repo, store, forge, land_car, car, main_branch, now, verify)
        result.cars.append(done)
        if say is not None:
            say(done)
    return result


def _next_car(store: QueueStore, seen: set[int]) -> Car | None:
    """A car a killed run left `running` first, then the queue's order. The
    list is read again before every car, so `add` and `remove` during a run count."""
    for states in (("running",), ("queued",)):
        for car in store.cars(states):
            if car.pr not in seen:
                return car
    return None


def _dry_run(
    store: QueueStore,
    land_car: LandCar,
    result: RunResult,
    say: Callable[[CarResult], None] | None,
) -> None:
    """Each waiting car prepared against today's main, nothing written (cars are
    not stacked on each other in a dry run)."""
    result.paused = store.paused
    for car in store.cars(("running", "queued")):
        report = land_car(car.pr)
        outcome: CarOutcome = "would" if report.ok else "refused"
        done = CarResult(car.pr, outcome, report.status, report.failed_step or "", report=report)
        result.cars.append(done)
        if say is not None:
            say(done)


def run_car(
    repo: GitRepo,
    store: QueueStore,
    forge: Forge,
    land_car: LandCar,
    car: Car,
    main_branch: str,
    now: Callable[[], str],
    verify: Verify | None = None,
) -> CarResult:
    n = car.pr
    main_before = repo.ref_sha(f"refs/heads/{main_branch}") or ""
    store.start(n, now())
    crash_point("queue-start")
    try:
        report = land_car(n)
    except CarBusy as exc:  # another prepare-merge holds this PR: not the car's fault
        store.requeue(n, now())
        return CarResult(n, "busy", f"{exc} (left queued)")
    except BaseException:
        # Interrupted (prepare-merge rolled back), or a setup failure that would
        # refuse every car alike (main's settings unreadable): the car waits again,
        # the run stops with the error's exit code.
        store.requeue(n, now())
        raise
    crash_point("queue-prepared")
    rows = rows_by_decision(report.sweep_data)
    if rows is not None:
        store.record_rows(n, rows)
    pull = forge.get_pull(n)
    if pull.state == "merged":
        commit = pull.merge_commit_sha or report.merge_commit
        ours = bool(report.prepared and report.merge_commit)  # merged by this car, not before
        prepared = report.prepared if ours else ""
        if ours and prepared:
            problem = (
                verify(commit, report)
                if verify is not None
                else _tested_is_landed(repo, commit, prepared, main_before)
            )
            if problem:
                store.refused(n, "land", problem, now())
                store.set_paused(True)
                return CarResult(n, "refused", problem, "land", commit, prepared, report)
        store.landed(n, commit, prepared, now())
        detail = f"landed as {commit}" if ours else f"already merged as {commit} (not again)"
        return CarResult(n, "landed", detail, "", commit, prepared, report)
    step = report.failed_step or "land"
    reason = refusal_reason(report) if not report.ok else f"not merged: {report.status}"
    store.refused(n, step, reason, now())
    return CarResult(n, "refused", reason, step, report=report)


def _tested_is_landed(repo: GitRepo, commit: str, prepared: str, main_before: str) -> str:
    """'' when `commit` is one commit on the main the car started from with
    exactly the tree prepare-merge checked; else what differs (the queue pauses)."""
    landed_tree, tested_tree = repo.tree_id(commit, ""), repo.tree_id(prepared, "")
    if landed_tree != tested_tree:
        return f"landed tree {landed_tree} differs from the tested tree {tested_tree} of {prepared}"
    parent = repo.resolve(f"{commit}^1") if main_before else ""
    if main_before and parent != main_before:
        return f"landed commit {commit} is not one commit on {main_before} (parent {parent})"
    return ""


def refusal_reason(report: MergeReport) -> str:
    """prepare-merge's refusal in one line: the step's detail and its first findings."""
    step = next((s for s in report.steps if s.name == report.failed_step), None)
    if step is None:
        return report.status
    parts = [step.detail] if step.detail else []
    parts += [f"{v.located()}: {v.code} {v.message}" for v in step.violations[:3]]
    if len(step.violations) > 3:
        parts.append(f"and {len(step.violations) - 3} more")
    return "; ".join(parts) or report.status
