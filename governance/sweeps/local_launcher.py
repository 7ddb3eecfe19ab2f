"""The embedded launcher: run jobs on this machine, K at a time.

Each job is one child process in its own session (so a timeout or Ctrl-C can
kill the script *and* everything it started, and a SIGKILLed gov does not),
started from an argv list with `shell=False`, its cwd the result folder,
stdout+stderr to a log there. The child is the row wrapper, which records
itself and the script's exit status in the row's folder (`launch_record`):
a job whose folder already holds a launch (a dead gov's, handed over by
`adopt`) is followed from those files instead of being started again. One
thread polls the children: no worker threads, so a KeyboardInterrupt always
lands here and is turned into "cancelled" outcomes for what did not finish.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from governance.core.crash import crash_point
from governance.sweeps.launch_record import (
    LOCK_NAME,
    WRAPPER,
    LaunchState,
    Phase,
    died,
    end_group,
    inspect,
    lock_held,
    take_lock,
)
from governance.sweeps.launcher import (
    LOG_NAME,
    JobEvent,
    JobOutcome,
    JobStatus,
    LaunchJob,
    inherited_env,
    not_run,
    script_argv,
    utc_now,
)
from governance.sweeps.orphans import OWNER_ENV, owner_token

# What a script inherits from gov's own environment; everything else comes
# from the row. Tokens (HF_TOKEN) pass through but are never printed.
KILL_GRACE_SECONDS = 2.0
POLL_SECONDS = 0.002
ADOPTED_POLL_SECONDS = 0.05  # an adopted row is read from files: look less often


@dataclass
class _Running:
    index: int
    job: LaunchJob
    process: subprocess.Popen[bytes] | None  # None: adopted (a dead gov started it)
    log: IO[bytes] | None
    started: datetime
    deadline: float
    adopted: LaunchState | None = None
    next_look: float = 0.0  # adopted rows: when to read their folder again

    def ended(self) -> tuple[bool, int | None, str]:
        """(ended, exit code, why it failed when no code says it), from the
        wrapper's exit file when there is one."""
        if self.process is not None:
            code = self.process.poll()
            if code is None:
                return False, None, ""
            state = inspect(self.job.result_dir)
            if state.phase is Phase.FINISHED:
                return True, state.exit_code, state.error
            return True, code, ""
        if time.monotonic() < self.next_look:
            return False, None, ""
        self.next_look = time.monotonic() + ADOPTED_POLL_SECONDS
        state = inspect(self.job.result_dir)
        # Ended once the wrapper has exited too (it writes the exit file
        # just before): then nothing of the row is left running.
        if state.phase is Phase.RUNNING or state.held:
            return False, None, ""
        if state.phase is Phase.FINISHED:
            return True, state.exit_code, state.error
        return True, None, died(state)

    def kill(self) -> None:
        if self.process is not None:
            _kill_group(self.process)
            return
        assert self.adopted is not None
        end_group(self.adopted, signal.SIGTERM)
        deadline = time.monotonic() + KILL_GRACE_SECONDS
        while lock_held(self.job.result_dir):
            if time.monotonic() > deadline:
                end_group(self.adopted, signal.SIGKILL)
                break
            time.sleep(POLL_SECONDS * 10)

    def stragglers(self) -> None:
        """What the script left running in its group (servers) goes with it."""
        if self.process is not None:
            _signal_group(self.process.pid, signal.SIGKILL)
        elif self.adopted is not None:
            end_group(self.adopted, signal.SIGKILL)


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
    adopts = True  # rows record themselves in their folders (`launch_record`, `adopt`)

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
        if (job.result_dir / LOCK_NAME).exists():
            return self._adopt(index, job)
        job.result_dir.mkdir(parents=True, exist_ok=True)
        argv, cwd = self._command(job)
        log = open(job.result_dir / LOG_NAME, "wb")  # noqa: SIM115 (closed in _finish)
        # Inherited by everything the script starts: a later run finds them
        # if this process dies (`orphans`).
        env = {**self._base, **job.env, OWNER_ENV: owner_token(self._scope or "")}
        # Locked before the wrapper exists and held by it: no moment where the
        # row runs and its folder does not say so. A launcher that does not
        # adopt runs the script itself (a dead run's rows are then ended).
        lock = take_lock(job.result_dir) if self.adopts else None
        if lock is not None:
            argv = [sys.executable, "-I", str(WRAPPER), str(job.result_dir), str(lock), *argv]
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
                pass_fds=() if lock is None else (lock,),
            )
        except BaseException:
            log.close()
            raise
        finally:
            if lock is not None:
                os.close(lock)
        crash_point("launch-started")  # killed here: the row runs on, a later run adopts it
        return _Running(index, job, process, log, utc_now(), time.monotonic() + job.timeout_seconds)

    def _adopt(self, index: int, job: LaunchJob) -> _Running:
        """Follow the launch a dead gov left in the job's folder (running or
        finished), with what remains of its timeout."""
        state = inspect(job.result_dir)
        started = state.started_at or utc_now()
        left = job.timeout_seconds - (utc_now() - started).total_seconds()
        if state.phase is Phase.RUNNING:
            # Said once on stderr: what a restarted gov is waiting on.
            sys.stderr.write(
                f"gov launch: adopted {job.key} (pid {state.pid}, running since "
                f"{started:%Y-%m-%d %H:%M:%S} UTC) instead of launching it again\n"
            )
            sys.stderr.flush()
        return _Running(index, job, None, None, started, time.monotonic() + left, state)

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
            if item.log is not None:
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
                        failed = not_run(job, JobStatus.FAILED, f"cannot start: {exc}")
                        outcomes[index] = failed
                        notify(JobEvent(job.key, JobStatus.FAILED, failed.ended_at))
                        continue
                    running.append(item)
                    notify(JobEvent(job.key, None, item.started))
                progressed = False
                for item in list(running):
                    ended, code, why = item.ended()
                    if not ended and time.monotonic() < item.deadline:
                        continue
                    running.remove(item)
                    progressed = True
                    if not ended:
                        item.kill()
                        limit = f"{item.job.timeout_seconds:g}s"
                        finish(item, JobStatus.TIMED_OUT, None, f"killed after {limit}")
                        continue
                    item.stragglers()
                    if code == 0:
                        finish(item, JobStatus.SUCCEEDED, 0, "")
                    else:
                        finish(item, JobStatus.FAILED, code, why or f"exit status {code}")
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
            item.kill()
            finish(item, JobStatus.CANCELLED, None, why)
        running.clear()
        at = utc_now()
        for index, job in pending:
            outcomes[index] = not_run(job, JobStatus.CANCELLED, "not started", at)
        pending.clear()
