"""Launching in order, with a canary phase and fail-fast (docs/sweeps.md,
'Priority, canary, fail-fast').

`run_scheduled` hands a launcher its jobs sorted by the `priority` rules
(each job's `nice` set from its score), in one or two phases: with `canary`,
the first row of each recipe, then the rest of the recipes whose canary
passed. A row that is not launched because of a failure is never dropped: it
comes back `cancelled` with the reason (`canary failed: <key>`,
`fail-fast: <key> failed`), and the caller records it like any other row.
With `fail_fast`, the first failed row stops the launch: the launcher's
`cancel()` ends what runs and what waits; a launcher without one is handed
its jobs in waves of `parallel` and the next wave is not started.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from governance.core.diagnostics import GovError
from governance.core.settings_priority import PriorityRule
from governance.sweeps.identity import PlanRow
from governance.sweeps.launcher import (
    JobEvent,
    JobOutcome,
    JobStatus,
    Launcher,
    LaunchJob,
    not_run,
    utc_now,
)
from governance.sweeps.priority import (
    Signature,
    canaries,
    config_signature,
    nice_values,
    prioritize,
)


@dataclass(frozen=True, slots=True)
class Schedule:
    """How a launch orders and stops its rows; the default runs the plan's order."""

    rules: tuple[PriorityRule, ...] = ()
    labels: frozenset[str] = frozenset()  # the PR's labels
    keys: Mapping[Signature, tuple[str, ...]] = field(default_factory=dict)  # priority.key_index
    canary: bool = False
    fail_fast: bool = False

    def keys_of(self, row: PlanRow) -> tuple[str, ...]:
        return self.keys.get(config_signature(row.data), ())


@dataclass(slots=True)
class Scheduled:
    outcomes: list[JobOutcome]  # one per job, in the order the jobs were given
    stopped: dict[str, str]  # job key -> why it was not run to the end (canary, fail-fast)
    scores: dict[str, float]  # job key -> priority score


Passed = Callable[[LaunchJob, JobStatus], bool]


def _cancelled(job: LaunchJob, why: str) -> JobOutcome:
    return not_run(job, JobStatus.CANCELLED, why)


def _launch(
    launcher: Launcher,
    jobs: Sequence[LaunchJob],
    parallel: int,
    watch: Callable[[JobEvent], None],
    *,
    ran: bool,
) -> list[JobOutcome]:
    """One launcher call. Once a phase has run, a refused submission (a
    GovError: sbatch said no) or a Ctrl-C between phases must not lose what
    ran: the wave's rows come back failed or cancelled, to be recorded."""
    try:
        return launcher.launch(jobs, parallel=parallel, on_event=watch)
    except GovError as exc:
        if not ran:
            raise  # nothing ran: nothing to record (exit 2, as without a schedule)
        at = utc_now()
        return [not_run(job, JobStatus.FAILED, f"not launched: {exc}", at) for job in jobs]
    except KeyboardInterrupt:
        if not ran:
            raise
        return [_cancelled(job, "not started (interrupted)") for job in jobs]


def run_scheduled(
    launcher: Launcher,
    items: Sequence[tuple[LaunchJob, PlanRow]],
    schedule: Schedule,
    *,
    parallel: int,
    passed: Passed,
    on_event: Callable[[JobEvent], None] | None = None,
) -> Scheduled:
    """Run `items` as `schedule` says; `passed(job, status)` judges a finished
    row (a zero exit without its result file does not pass)."""
    notify = on_event or (lambda _event: None)
    ranked = prioritize(
        items, lambda item: schedule.keys_of(item[1]), schedule.labels, schedule.rules
    )
    nice = nice_values(s for _, s in ranked)
    ordered = [replace(job, nice=nice[s]) for (job, _row), s in ranked]
    scores = {job.key: s for (job, _row), s in ranked}
    recipes = {job.key: row.fingerprint for job, row in items}
    first, rest = (
        canaries(ordered, lambda job: recipes[job.key]) if schedule.canary else (ordered, [])
    )
    results: dict[str, JobOutcome] = {}
    stopped: dict[str, str] = {}
    failed: list[str] = []  # the first failed row, once fail-fast fires
    cancel = getattr(launcher, "cancel", None)
    waves = 1 if callable(cancel) or not schedule.fail_fast else max(1, parallel)

    def watch(event: JobEvent) -> None:
        notify(event)
        # Cancelled is not failed: Ctrl-C, or this very fail-fast at work.
        if not schedule.fail_fast or event.status in (None, JobStatus.CANCELLED) or failed:
            return
        job = by_key[event.key]
        if not passed(job, event.status):
            failed.append(event.key)
            if callable(cancel):
                cancel()

    def skip(skipped: Sequence[tuple[LaunchJob, str]]) -> None:
        for job, why in skipped:
            stopped[job.key] = why
            results[job.key] = _cancelled(job, why)
            notify(JobEvent(job.key, JobStatus.CANCELLED, results[job.key].ended_at))

    by_key = {job.key: job for job in ordered}
    interrupted = False
    for phase, jobs in enumerate((first, rest)):
        if phase == 1 and schedule.canary and not (failed or interrupted):
            bad = {
                recipes[o.job.key]: o.job.key
                for o in (results[job.key] for job in first)
                if not passed(o.job, o.status)
            }
            skip(
                [
                    (job, f"canary failed: {bad[recipe]}")
                    for job in jobs
                    if (recipe := recipes[job.key]) in bad
                ]
            )
            jobs = [job for job in jobs if recipes[job.key] not in bad]
        step = waves if waves > 1 else max(1, len(jobs))
        for start in range(0, len(jobs), step):
            wave = jobs[start : start + step]
            if failed or interrupted:
                if interrupted:
                    for job in wave:
                        results[job.key] = _cancelled(job, "not started (interrupted)")
                else:
                    skip([(job, f"fail-fast: {failed[0]} failed") for job in wave])
                continue
            for outcome in _launch(launcher, wave, parallel, watch, ran=bool(results)):
                if outcome.status is JobStatus.CANCELLED and failed:
                    why = f"fail-fast: {failed[0]} failed"
                    stopped[outcome.job.key] = why
                    outcome = replace(outcome, detail=f"{why} ({outcome.detail})")
                elif outcome.status is JobStatus.CANCELLED:
                    interrupted = True  # Ctrl-C: the caller exits 130
                results[outcome.job.key] = outcome
    return Scheduled([results[job.key] for job, _row in items], stopped, scores)
