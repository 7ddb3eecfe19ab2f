"""What a local launch leaves in its row's folder, and reading it back.

A row the local launcher starts runs under a small wrapper
(`governance/resources/local/row-wrapper.py`) in a session of its own, so a
gov killed with SIGKILL does not take it down. Three files in the row's
folder let a later gov, which is not its parent, follow it:

* `gov-launch.lock`: locked (flock) by the launcher before it starts the
  wrapper and held by the wrapper for its whole life. Held = alive, free =
  ended; no pid reuse can fool it, and there is no window between starting
  the process and recording it.
* `gov-launch.json`: the wrapper's pid, its kernel start time
  (`/proc/PID/stat` field 22) and start date, written before the script runs.
* `gov-exit.json`: the script's exit code, written atomically when it ends.

`inspect` turns them into a `LaunchState`; `end_group` signals a recorded
wrapper's process group only while pid and start time still match.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from importlib import resources
from pathlib import Path

from governance.sweeps.launcher import read_record

LOCK_NAME = "gov-launch.lock"
LAUNCH_NAME = "gov-launch.json"
EXIT_NAME = "gov-exit.json"
_PROC = Path("/proc")
WRAPPER = Path(str(resources.files("governance.resources") / "local" / "row-wrapper.py"))


def start_time(pid: int) -> str:
    """The kernel's start time of `pid` (`/proc/PID/stat` field 22, clock
    ticks since boot), "" if gone or a zombie (ended, not yet reaped)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return ""
    after_name = stat.rsplit(")", 1)[-1].split()  # the name may hold spaces and ")"
    return "" if after_name[0] == "Z" else after_name[19]


class Phase(StrEnum):
    NEVER = "never-started"  # no process ever ran the script: safe to launch again
    RUNNING = "running"
    FINISHED = "finished"  # the exit file says how
    DIED = "died"  # the process is gone and left no exit status


@dataclass(frozen=True, slots=True)
class LaunchState:
    phase: Phase
    pid: int | None = None
    start_time: str = ""
    started_at: datetime | None = None
    exit_code: int | None = None
    ended_at: datetime | None = None
    error: str = ""
    held: bool = False  # the launch lock is held: the wrapper has not exited yet


def take_lock(folder: Path) -> int:
    """A descriptor holding the row's launch lock (exclusive), to hand to the
    wrapper (`pass_fds`); OSError when someone holds it already."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise
    return fd


def lock_held(folder: Path) -> bool:
    """Someone (the wrapper, or the gov starting it) holds the launch lock."""
    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # releases the shared lock taken just now, if any
    return False


def _date(value: object) -> datetime | None:
    with contextlib.suppress(TypeError, ValueError):
        return datetime.fromisoformat(str(value))
    return None


def inspect(folder: Path) -> LaunchState:
    """Where the launch recorded in `folder` stands. The exit file is read
    after the lock, so a script ending between the two reads is FINISHED."""
    held = lock_held(folder)
    launch = read_record(folder / LAUNCH_NAME)
    ended = read_record(folder / EXIT_NAME)
    pid = launch.get("pid")
    base = LaunchState(
        Phase.NEVER,
        held=held,
        pid=pid if isinstance(pid, int) else None,
        start_time=str(launch.get("start_time", "")),
        started_at=_date(launch.get("started_at")),
    )
    if ended:
        code = ended.get("exit_code")
        return replace(
            base,
            phase=Phase.FINISHED,
            exit_code=code if isinstance(code, int) else None,
            ended_at=_date(ended.get("ended_at")),
            error=str(ended.get("error") or ""),
        )
    if held:
        return replace(base, phase=Phase.RUNNING)
    # Not held and no record: the wrapper never got as far as the script.
    return replace(base, phase=Phase.DIED) if launch else LaunchState(Phase.NEVER)


def same_process(pid: int | None, started: str) -> bool:
    """`pid` is still the process recorded (its start time matches)."""
    return pid is not None and bool(started) and start_time(pid) == started


def end_group(state: LaunchState, sig: signal.Signals) -> None:
    """Signal the recorded wrapper's process group (the script's too), only
    while the wrapper is the process recorded: a reused pid is left alone."""
    if state.pid is not None and same_process(state.pid, state.start_time):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(state.pid, sig)


def died(state: LaunchState) -> str:
    """Why an adopted launch has no result: its process ended unrecorded."""
    return (
        f"its process (pid {state.pid}) ended without an exit status while no gov was "
        "waiting on it (killed, or the machine restarted)"
    )
