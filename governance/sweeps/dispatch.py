"""The launch service: resolved rows -> launcher -> ledger.

Which script each row runs is `sweeps.resolve`'s (`resolve_rows`, what
`--dry-run` shows). `launch_rows` runs what resolved, checks each succeeded
job left its result file (the launcher only knows exit codes) and records
every outcome, with the files each succeeded run left (size, SHA-256), in
the ledger in one transaction.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.sweeps.harness_files import CheckoutHarness
from governance.sweeps.identity import PlanRow, conc_label, row_recipe
from governance.sweeps.jobs import prepare_job_dir
from governance.sweeps.launcher import JobEvent, JobOutcome, JobStatus, Launcher, LaunchJob
from governance.sweeps.resolve import Resolved, SweepPaths
from governance.sweeps.runfiles import RunFile, record

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.sweeps.ledger import Ledger
    from governance.sweeps.schedule import Schedule


def harness_reader(paths: SweepPaths, settings: Settings) -> CheckoutHarness:
    """What traces each row's harness in the checkout the rows run from."""
    where = f"{settings.source or 'settings'}"
    return CheckoutHarness(paths.checkout, settings.harness_inputs, where)


def adapt_for_launcher(
    resolved: Sequence[Resolved],
    launcher_name: str,
    paths: SweepPaths,
    settings: Settings,
    *,
    build: bool,
) -> list[Resolved]:
    """The rows as launcher `launcher_name` runs them: its registry adapter
    (`launcher.REGISTRY`) may give each row what runs it, or a problem."""
    from governance.sweeps.launcher import launcher_spec, load_target

    spec = launcher_spec(launcher_name)
    if not spec.adapter:
        return list(resolved)
    adapter = load_target(spec.adapter, launcher_name)
    return list(adapter(resolved, paths, settings, build=build))


def problems(resolved: Sequence[Resolved]) -> list[Violation]:
    """Violations for rows that cannot launch (for FindingsError / reports)."""
    return [
        violation(item.code, item.problem, item.row.where, hint="see gov launch --dry-run")
        for item in resolved
        if not item.ok
    ]


def failures(resolved: Sequence[Resolved], outcomes: Sequence[JobOutcome]) -> list[Violation]:
    """Every row that did not succeed: the ones that could not launch, then a
    GOV705 for each launched row that failed, pointing at its log."""
    failed = [
        violation("GOV705", f"{o.job.key} {o.status}: {o.detail}", str(o.log_path))
        for o in outcomes
        if str(o.status) != "succeeded"
    ]
    return problems(resolved) + failed


class Progress:
    """Plain-text progress on stderr: rows done, running, failed."""

    def __init__(self, total: int, write: Callable[[str], None] | None = None) -> None:
        self.total = total
        self.done = self.running = self.failed = 0
        self._write = write or (lambda text: sys.stderr.write(text + "\n"))

    def __call__(self, event: JobEvent) -> None:
        if event.status is None:
            self.running += 1
            what = "started"
        else:
            self.running = max(0, self.running - 1)
            self.done += 1
            self.failed += event.status is not JobStatus.SUCCEEDED
            what = str(event.status)
        self._write(
            f"gov launch: {self.done}/{self.total} done, {self.running} running, "
            f"{self.failed} failed - {event.key} {what}"
        )


def _expected_results(job: LaunchJob, row: PlanRow) -> list[Path]:
    name = job.env.get("RESULT_FILENAME", "")
    if row.is_eval:
        return sorted(job.result_dir.glob("results*.json"))
    if row.is_multinode:
        return sorted(job.result_dir.glob(f"{name}_*.json"))
    path = job.result_dir / f"{name}.json"
    return [path] if path.is_file() else []


def _checked(outcome: JobOutcome, row: PlanRow) -> JobOutcome:
    """A zero exit without the result file is a failure (docs/sweeps.md)."""
    if outcome.status is JobStatus.SUCCEEDED and not _expected_results(outcome.job, row):
        wanted = outcome.job.env.get("RESULT_FILENAME", "?")
        return replace(
            outcome, status=JobStatus.FAILED, detail=f"exit 0 but no result file {wanted}.json"
        )
    return outcome


def _recorded(outcome: JobOutcome) -> tuple[JobOutcome, tuple[RunFile, ...]]:
    """The files a succeeded run left (none for the others); a run whose files
    cannot be read is failed: nothing could vouch for its results."""
    if outcome.status is not JobStatus.SUCCEEDED:
        return outcome, ()
    try:
        return outcome, record(outcome.job.result_dir)
    except OSError as exc:
        detail = f"cannot record its result files: {exc.strerror or exc}"
        return replace(outcome, status=JobStatus.FAILED, detail=detail), ()


@dataclass(slots=True)
class LaunchResult:
    resolved: list[Resolved]
    outcomes: list[JobOutcome] = field(default_factory=list)
    run_ids: dict[str, int] = field(default_factory=dict)  # job key -> ledger id
    # job key -> why it was stopped by --canary / --fail-fast (a failure, not Ctrl-C)
    stopped: dict[str, str] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)  # job key -> priority score

    @property
    def interrupted(self) -> bool:
        return any(
            o.status is JobStatus.CANCELLED and o.job.key not in self.stopped for o in self.outcomes
        )

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.resolved) and all(
            o.status is JobStatus.SUCCEEDED for o in self.outcomes
        )


def launch_rows(
    resolved: Sequence[Resolved],
    launcher: Launcher,
    ledger: Ledger,
    *,
    commit: str,
    pr: int | None,
    parallel: int,
    on_event: Callable[[JobEvent], None] | None = None,
    schedule: Schedule | None = None,
) -> LaunchResult:
    """Run every resolved job, in the order and phases `schedule` asks
    (`sweeps.schedule`), and record the outcomes (also when interrupted)."""
    from governance.sweeps import adopt
    from governance.sweeps.launches import Launches
    from governance.sweeps.ledger import NewRun
    from governance.sweeps.schedule import Schedule, run_scheduled

    ready = [item for item in resolved if item.job is not None]
    # A launcher that records its rows in their folders (`adopts`) takes over
    # a dead gov's launches of the same rows instead of starting them again.
    adopts = bool(getattr(launcher, "adopts", False))
    adoption = adopt.Adoption(ready, set(), [])  # nothing to take over
    if adopts:
        state_of = getattr(launcher, "recorded_state", None) or adopt.inspect
        adoption = adopt.take_over(ledger, ready, launcher.name, state_of)
    ready = adoption.ready
    fresh = [item for item in ready if item.key not in adoption.adopted]
    rows: Mapping[str, PlanRow] = {item.key: item.row for item in ready}
    traced: Mapping[str, Resolved] = {item.key: item for item in ready}
    jobs = [item.job for item in ready if item.job is not None]
    for item in fresh:
        assert item.job is not None
        prepare_job_dir(item.job, item.row)
    if adopts:
        Launches(ledger).open(adopt.opened(fresh, launcher.name, commit, pr))
    scheduled = run_scheduled(
        launcher,
        [(job, rows[job.key]) for job in jobs],
        schedule or Schedule(),
        parallel=parallel,
        passed=lambda job, status: (
            status is JobStatus.SUCCEEDED and bool(_expected_results(job, rows[job.key]))
        ),
        on_event=on_event,
    )
    finished = [_recorded(_checked(o, rows[o.job.key])) for o in scheduled.outcomes]
    outcomes = [o for o, _files in finished]
    records = [
        NewRun(
            fingerprint=rows[o.job.key].fingerprint,
            job_key=o.job.key,
            conc=conc_label(rows[o.job.key]),
            commit_sha=commit,
            pr=pr,
            launcher=launcher.name,
            started_at=o.started_at.isoformat(timespec="seconds"),
            ended_at=o.ended_at.isoformat(timespec="seconds"),
            status=str(o.status),
            exit_code=o.exit_code,
            detail=o.detail,
            result_path=str(o.job.result_dir),
            script=str(o.job.script),
            files=files,
            recipe=row_recipe(rows[o.job.key]),
            harness=traced[o.job.key].harness,
        )
        for o, files in finished
    ]
    ids = ledger.add([*adoption.died, *records])[len(adoption.died) :]
    return LaunchResult(
        list(resolved),
        outcomes,
        {o.job.key: i for o, i in zip(outcomes, ids, strict=True)},
        scheduled.stopped,
        scheduled.scores,
    )
