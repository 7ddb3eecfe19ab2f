"""The embedded launcher: run jobs on this machine, K at a time.

Each job is one child process in its own session (so a timeout or Ctrl-C can
kill the script *and* everything it started), started from an argv list with
`shell=False`, its cwd the result folder, stdout+stderr to a log there. One
thread polls the children: no worker threads, so a KeyboardInterrupt always
lands here and is turned into "cancelled" outcomes for what did not finish.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from governance.sweeps.launcher import (
    LOG_NAME,
    JobEvent,
    JobOutcome,
    JobStatus,
    LaunchJob,
    inherited_env,
    script_argv,
    utc_now,
)
from governance.sweeps.orphans import OWNER_ENV, owner_token

# What a script inherits from gov's own environment; everything else comes
# from the row. Tokens (HF_TOKEN) pass through but are never printed.
KILL_GRACE_SECONDS = 2.0
POLL_SECONDS = 0.002


@dataclass
class _Running:
    index: int
    job: LaunchJob
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    started: datetime
    deadline: float


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the job's process group, give it a grace period, then SIGKILL
    whatever is left of the group (servers a script started in background)."""
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=KILL_GRACE_SECONDS)
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()


class LocalLauncher:
    """Runs jobs as local processes with bounded parallelism and timeouts."""

    name = "local"

    def __init__(self, environ: Mapping[str, str] | None = None, scope: Path | None = None) -> None:
        source = os.environ if environ is None else environ
        self._base = inherited_env(source)
        self._scope = scope  # the results root: whose orphans a later run adopts
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Stop the running launch() (thread-safe; also from its `on_event`):
        nothing more starts, running process groups are killed, and every
        unfinished job comes back cancelled."""
        self._cancel.set()

    @classmethod
    def from_settings(cls, _settings: object, results: Path | None) -> LocalLauncher:
        return cls(scope=results)

    def _command(self, job: LaunchJob) -> tuple[list[str], Path]:
        """The argv and working directory of a job (a subclass may run it elsewhere)."""
        return script_argv(job.script), job.result_dir

    def _start(self, index: int, job: LaunchJob) -> _Running:
        job.result_dir.mkdir(parents=True, exist_ok=True)
        argv, cwd = self._command(job)
        log = open(job.result_dir / LOG_NAME, "wb")  # noqa: SIM115 (closed in _finish)
        # Inherited by everything the script starts: a later run finds them
        # if this process dies (`orphans`).
        env = {**self._base, **job.env, OWNER_ENV: owner_token(self._scope or "")}
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                shell=False,
                start_new_session=True,
            )
        except BaseException:
            log.close()
            raise
        return _Running(index, job, process, log, utc_now(), time.monotonic() + job.timeout_seconds)

    def launch(
        self,
        jobs: Sequence[LaunchJob],
        *,
        parallel: int,
        on_event: Callable[[JobEvent], None] | None = None,
    ) -> list[JobOutcome]:
        notify = on_event or (lambda _event: None)
        outcomes: list[JobOutcome | None] = [None] * len(jobs)
        pending = deque(enumerate(jobs))
        running: list[_Running] = []
        self._cancel.clear()

        def finish(item: _Running, status: JobStatus, code: int | None, detail: str) -> None:
            item.log.close()
            ended = utc_now()
            outcomes[item.index] = JobOutcome(
                item.job,
                status,
                code,
                item.started,
                ended,
                item.job.result_dir / LOG_NAME,
                detail,
            )
            notify(JobEvent(item.job.key, status, ended))

        try:
            while pending or running:
                if self._cancel.is_set():
                    self._stop(running, pending, outcomes, finish, "cancelled")
                    break
                while pending and len(running) < max(1, parallel) and not self._cancel.is_set():
                    index, job = pending.popleft()
                    try:
                        item = self._start(index, job)
                    except OSError as exc:
                        at = utc_now()
                        log_path = job.result_dir / LOG_NAME
                        outcomes[index] = JobOutcome(
                            job, JobStatus.FAILED, None, at, at, log_path, f"cannot start: {exc}"
                        )
                        notify(JobEvent(job.key, JobStatus.FAILED, at))
                        continue
                    running.append(item)
                    notify(JobEvent(job.key, None, item.started))
                progressed = False
                for item in list(running):
                    code = item.process.poll()
                    if code is None and time.monotonic() < item.deadline:
                        continue
                    running.remove(item)
                    progressed = True
                    if code is None:
                        _kill_group(item.process)
                        limit = f"{item.job.timeout_seconds:g}s"
                        finish(item, JobStatus.TIMED_OUT, None, f"killed after {limit}")
                    elif code == 0:
                        _signal_group(item.process.pid, signal.SIGKILL)  # stragglers
                        finish(item, JobStatus.SUCCEEDED, 0, "")
                    else:
                        _signal_group(item.process.pid, signal.SIGKILL)
                        finish(item, JobStatus.FAILED, code, f"exit status {code}")
                if not progressed:
                    time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            self._stop(running, pending, outcomes, finish, "interrupted")
        return [o for o in outcomes if o is not None]

    @staticmethod
    def _stop(
        running: list[_Running],
        pending: deque[tuple[int, LaunchJob]],
        outcomes: list[JobOutcome | None],
        finish: Callable[[_Running, JobStatus, int | None, str], None],
        why: str,
    ) -> None:
        """Kill what runs (whole process groups), cancel what waits."""
        for item in list(running):
            _kill_group(item.process)
            finish(item, JobStatus.CANCELLED, None, why)
        running.clear()
        at = utc_now()
        for index, job in pending:
            log_path = job.result_dir / LOG_NAME
            outcomes[index] = JobOutcome(
                job, JobStatus.CANCELLED, None, at, at, log_path, "not started"
            )
        pending.clear()
