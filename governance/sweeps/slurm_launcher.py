"""The Slurm launcher: one job array per launch, one array task per row.

How a launch runs (docs/slurm.md has the long version):

1. A launch folder is created under `work_dir` (`slurm_manifest`). It receives
   `manifest.json` (per task: argv, environment, cwd = result folder, row JSON,
   log and status file paths, timeout), a copy of the wrapper
   `governance/resources/slurm/array-task.py`, the status files and Slurm's own
   per-task output.
2. ONE `sbatch --array=0-<n-1>%<parallel>` submits the wrapper (one per
   priority class when the rows' `nice` differ, each with its `--nice`); each task reads
   its manifest entry by `$SLURM_ARRAY_TASK_ID` and runs the script with exactly
   that environment. Values travel through files and argv, never a shell.
3. The array is followed with `squeue` (and `sacct` when accounting works) until
   every task is terminal. Slurm states map onto `JobStatus`; the wrapper's
   status file supplies the exact exit code and whether the row's own timeout
   fired (a job array has one `--time` for all tasks: the largest timeout).

4. Each row's folder records its task as soon as `sbatch` answers
   (`slurm_adopt`): a restarted run follows it instead of submitting again.

Every subprocess call here is an argv list; nothing is interpolated into a
shell string.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from governance.core.crash import crash_point
from governance.sweeps import slurm_adopt
from governance.sweeps.launcher import (
    LOG_NAME,
    JobEvent,
    JobOutcome,
    JobStatus,
    LaunchJob,
    read_record,
    utc_now,
)
from governance.sweeps.slurm_client import (
    RUNNING_STATES,
    STATE_STATUS,
    SlurmError,
    accounting_available,
    accounting_states,
    array_states,
    cancel_jobs,
    first_line,
    run_tool,
    task_exit_code,
)
from governance.sweeps.slurm_manifest import (
    SLURM_TIME_MARGIN,
    WRAPPER,
    copy_wrapper,
    new_launch_dir,
    parse_time,
    sbatch_argv,
    write_manifest,
)

# Polls to wait for a finished task's status file before going without it.
STATUS_WAITS = 3
# How long squeue may keep failing (controller restart, network) before giving up.
LOST_CONTACT_SECONDS = 600.0


_Task = slurm_adopt.Task


class SlurmLauncher:
    """Runs each launch as one Slurm job array (see the module docstring)."""

    name = "slurm"
    adopts = True  # each row's folder records its task (`slurm_adopt`)
    recorded_state = staticmethod(slurm_adopt.recorded_state)

    @classmethod
    def from_settings(cls, settings: object, results: Path | None) -> SlurmLauncher:
        """Launch folders go next to the results (a shared filesystem on a real
        cluster, since compute nodes read the manifest from there)."""
        return cls(results / ".slurm" if results is not None else None)

    def __init__(
        self,
        work_dir: Path | None = None,
        *,
        poll_interval: float = 5.0,
        partition: str | None = None,
        account: str | None = None,
        extra_sbatch_args: Sequence[str] = (),
        python: str | None = None,
        kill_grace_seconds: float = 10.0,
        wrapper: Path = WRAPPER,
    ) -> None:
        # The launch folder must be visible from the compute nodes (shared FS on
        # a real cluster): the wrapper reads the manifest and writes status there.
        self.work_dir = work_dir or Path(".gov") / "slurm"
        self.poll_interval = poll_interval
        self.partition = partition
        self.account = account
        self.extra_sbatch_args = tuple(extra_sbatch_args)
        self.python = python  # interpreter for the wrapper on compute nodes
        self.kill_grace_seconds = kill_grace_seconds
        self.wrapper = wrapper
        self.job_id: str | None = None  # the single-node array (else the first job), once submitted
        self.job_ids: list[str] = []  # every submission of the current launch
        self.launch_dir: Path | None = None
        self._cancel = threading.Event()
        self._use_sacct: bool | None = None

    # -- public ---------------------------------------------------------------

    def cancel(self) -> None:
        """Ask a running launch() to scancel its array (thread-safe).

        launch() then keeps following the array until Slurm reports every task
        terminal; unfinished tasks come back cancelled.
        """
        self._cancel.set()

    def launch(
        self,
        jobs: Sequence[LaunchJob],
        *,
        parallel: int,
        on_event: Callable[[JobEvent], None] | None = None,
    ) -> list[JobOutcome]:
        if not jobs:
            return []
        if parallel < 1:
            raise ValueError(f"parallel must be at least 1, got {parallel}")
        self._cancel.clear()
        self.job_id = None
        self.job_ids = []
        # A job whose folder records a task (a dead gov's) is followed, not submitted.
        known = [slurm_adopt.read(job.result_dir) for job in jobs]
        new = [job for job, k in zip(jobs, known, strict=True) if k is None]
        fresh = self._prepare(new) if new else []
        if fresh:
            self._submit(fresh, parallel)
        adopted = [
            slurm_adopt.task(job, k) for job, k in zip(jobs, known, strict=True) if k is not None
        ]
        for task in adopted:  # said on stderr: what a restarted gov waits on
            self.job_ids.append(f"{task.job_id}_{task.index}")
            name = f"{task.job.key} (Slurm task {task.job_id}_{task.index})"
            sys.stderr.write(f"gov launch: adopted {name} instead of submitting it again\n")
        self.job_id = self.job_id or adopted[0].job_id
        by_job = {id(task.job): task for task in [*fresh, *adopted]}
        tasks = [by_job[id(job)] for job in jobs]  # outcomes in input order
        emit = on_event or (lambda _event: None)
        try:
            self._follow(tasks, emit)
        except KeyboardInterrupt:
            # Ctrl-C: cancel the whole launch, keep what already finished.
            cancel_jobs(self.job_ids)
            self._poll(tasks, emit)
            for task in tasks:
                if task.outcome is None:
                    self._finish(task, JobStatus.CANCELLED, "interrupted: array cancelled", emit)
        return [task.outcome for task in tasks if task.outcome is not None]

    # -- preparing and submitting ----------------------------------------------

    def _prepare(self, jobs: Sequence[LaunchJob]) -> list[_Task]:
        launch_dir = new_launch_dir(self.work_dir, utc_now())
        self.launch_dir = launch_dir
        tasks = [_Task(i, job, launch_dir / "status" / f"{i}.json") for i, job in enumerate(jobs)]
        write_manifest(
            launch_dir, [(task.job, task.status_file) for task in tasks], self.kill_grace_seconds
        )
        copy_wrapper(launch_dir, self.wrapper, self.python)
        return tasks

    def _submit(self, tasks: list[_Task], parallel: int) -> None:
        """Single-node rows: one array per priority class. Multi-node rows: one
        job each, with the nodes the row needs. If Slurm refuses any, what was already submitted
        is cancelled and SlurmError says why: nothing runs."""
        # One array per priority class (`--nice` is per job), highest first.
        single: dict[int, list[int]] = {}
        for task in tasks:
            if task.job.nodes is None:
                single.setdefault(task.job.nice, []).append(task.index)
        groups = [single[nice] for nice in sorted(single)]
        groups += [[task.index] for task in tasks if task.job.nodes is not None]
        try:
            for group in groups:
                job_id = self._sbatch(tasks, group, parallel)
                self.job_ids.append(job_id)
                for index in group:
                    tasks[index].job_id = job_id
                    # Before anything waits on it: a restarted run finds it here.
                    submitted = slurm_adopt.Submitted(job_id, index, self.launch_dir or Path())
                    slurm_adopt.record(tasks[index].job.result_dir, submitted)
                crash_point("launch-started")  # killed here: the array runs on
        except SlurmError:
            cancel_jobs(self.job_ids)
            raise
        self.job_id = self.job_ids[0]

    def _sbatch(self, tasks: list[_Task], indices: list[int], parallel: int) -> str:
        assert self.launch_dir is not None
        argv = sbatch_argv(
            self.launch_dir,
            [task.job for task in tasks],
            parallel,
            partition=self.partition,
            account=self.account,
            extra=self.extra_sbatch_args,
            indices=indices,
        )
        what = tasks[indices[0]].job.key if len(indices) == 1 else f"{len(indices)} rows"
        try:
            done = run_tool(argv)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SlurmError(f"sbatch failed: {exc} ({what})") from exc
        job_id = done.stdout.strip().split(";")[0]
        if done.returncode != 0 or not job_id.isdigit():
            reason = first_line(done.stderr) or first_line(done.stdout) or "no output"
            raise SlurmError(f"sbatch failed (exit {done.returncode}): {reason} ({what})")
        return job_id

    # -- following --------------------------------------------------------------

    def _follow(self, tasks: list[_Task], emit: Callable[[JobEvent], None]) -> None:
        assert self.job_id is not None
        cancelled = False
        last_contact = time.monotonic()
        # Back off from a quick first look to `poll_interval`: short arrays
        # finish in seconds, long ones should not hammer slurmctld.
        wait = min(self.poll_interval, 0.25)
        while any(task.outcome is None for task in tasks):
            if self._cancel.is_set() and not cancelled:
                cancel_jobs(self.job_ids)
                cancelled = True
            if self._poll(tasks, emit):
                last_contact = time.monotonic()
            elif time.monotonic() - last_contact > LOST_CONTACT_SECONDS:
                cancel_jobs(self.job_ids)
                for task in tasks:
                    if task.outcome is None:
                        self._finish(task, JobStatus.FAILED, "lost contact with Slurm", emit)
                return
            self._check_overrun(tasks)
            if not any(task.outcome is None for task in tasks):
                break
            if cancelled:
                # The event stays set, so waiting on it would not wait at all.
                time.sleep(min(wait, 1.0))
            else:
                # Waiting on the event lets cancel() take effect at once.
                self._cancel.wait(wait)
            wait = min(self.poll_interval, wait * 2)

    def _poll(self, tasks: list[_Task], emit: Callable[[JobEvent], None]) -> bool:
        """One look at the jobs; False when Slurm could not be asked.

        Every submission runs manifest indices of its own (a multi-node job is
        the one-task array of its index), so the states merge by index."""
        states: dict[tuple[str, int], tuple[str, str]] = {}
        for job_id in dict.fromkeys(t.job_id for t in tasks if t.outcome is None):
            found = self._squeue(job_id)
            if found is None:
                return False
            states.update(((job_id, i), v) for i, v in found.items())
        missing = []
        for task in tasks:
            if task.outcome is not None:
                continue
            if (task.job_id, task.index) not in states:
                missing.append(task)
                continue
            state, reason = states[(task.job_id, task.index)]
            self._observe(task, state, reason, emit)
        if missing:
            # Purged from the controller's memory (MinJobAge) before we saw the end.
            finals: dict[tuple[str, int], str] = {}
            if self._sacct_usable():
                for job_id in {task.job_id for task in missing}:
                    finals.update(((job_id, i), v) for i, v in accounting_states(job_id).items())
            for task in missing:
                final = finals.get((task.job_id, task.index))
                if final:
                    self._observe(task, final, "", emit)
                else:
                    self._from_status_file(task, emit)
        return True

    def _observe(
        self, task: _Task, state: str, reason: str, emit: Callable[[JobEvent], None]
    ) -> None:
        if state in RUNNING_STATES:
            self._started(task, emit)
        if state not in STATE_STATUS:
            return
        status = STATE_STATUS[state]
        recorded = read_record(task.status_file)
        if not recorded and state in ("COMPLETED", "FAILED") and task.status_waits < STATUS_WAITS:
            # The wrapper wrote its status file before exiting, but a shared
            # filesystem may show it to this machine a little later.
            task.status_waits += 1
            return
        if recorded.get("timed_out") or (status is JobStatus.CANCELLED and task.forced_timeout):
            status = JobStatus.TIMED_OUT
        if recorded or status is not JobStatus.CANCELLED:
            self._started(task, emit)  # it ran, if only between two polls
        detail = str(recorded.get("error") or "")
        if status is not JobStatus.SUCCEEDED and not detail:
            detail = f"Slurm state {state}" + (f" ({reason})" if reason not in ("", "None") else "")
        launch_dir = task.launch_dir or self.launch_dir
        if not recorded and status is JobStatus.FAILED and launch_dir is not None:
            # The wrapper itself failed: its traceback is in Slurm's output file.
            out = launch_dir / f"slurm-{task.job_id}_{task.index}.out"
            detail += f"; no status file, see {out}"
        self._finish(task, status, detail, emit, recorded)

    def _from_status_file(self, task: _Task, emit: Callable[[JobEvent], None]) -> None:
        recorded = read_record(task.status_file)
        if not recorded:
            detail = "task left the Slurm queue without writing its status file"
            self._finish(task, JobStatus.FAILED, detail, emit)
            return
        self._started(task, emit)
        if recorded.get("timed_out"):
            status = JobStatus.TIMED_OUT
        elif recorded.get("exit_code") == 0:
            status = JobStatus.SUCCEEDED
        else:
            status = JobStatus.FAILED
        self._finish(task, status, str(recorded.get("error") or ""), emit, recorded)

    @staticmethod
    def _started(task: _Task, emit: Callable[[JobEvent], None]) -> None:
        """The start event, once per task; a task cancelled while pending gets none."""
        if task.seen_running is None:
            task.seen_running = utc_now()
            emit(JobEvent(task.job.key, None, task.seen_running))

    def _finish(
        self,
        task: _Task,
        status: JobStatus,
        detail: str,
        emit: Callable[[JobEvent], None],
        recorded: Mapping[str, object] | None = None,
    ) -> None:
        recorded = recorded or {}
        ended = parse_time(recorded.get("ended_at")) or utc_now()
        started = parse_time(recorded.get("started_at")) or task.seen_running or ended
        code = recorded.get("exit_code")
        if status is JobStatus.FAILED and not isinstance(code, int):
            code = self._scontrol_exit_code(task)
        if status is JobStatus.FAILED and isinstance(code, int) and not detail.startswith("exit"):
            detail = f"exit code {code}" + (f"; {detail}" if detail else "")
        task.outcome = JobOutcome(
            job=task.job,
            status=status,
            exit_code=code if isinstance(code, int) else None,
            started_at=started,
            ended_at=ended,
            log_path=task.job.result_dir / LOG_NAME,
            detail=detail,
        )
        emit(JobEvent(task.job.key, status, ended))

    def _check_overrun(self, tasks: list[_Task]) -> None:
        """The launcher's own timeout check, behind the wrapper's and Slurm's."""
        now = utc_now()
        late = []
        for task in tasks:
            if task.outcome is not None or task.seen_running is None or task.forced_timeout:
                continue
            limit = task.job.timeout_seconds + self.kill_grace_seconds + SLURM_TIME_MARGIN
            if (now - task.seen_running).total_seconds() > limit:
                task.forced_timeout = True
                late.append(f"{task.job_id}_{task.index}")
        if late:
            cancel_jobs(late)

    # -- Slurm commands -----------------------------------------------------------

    def _squeue(self, job_id: str) -> dict[int, tuple[str, str]] | None:
        return array_states(job_id)

    def _sacct_usable(self) -> bool:
        if self._use_sacct is None:
            self._use_sacct = accounting_available()
        return self._use_sacct

    def _scontrol_exit_code(self, task: _Task) -> int | None:
        return task_exit_code(task.job_id, task.index)
