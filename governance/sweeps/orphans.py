"""Launched rows of a dead run: find them, and end them.

Each script the local launcher starts runs in its own session (so a timeout
can kill it and everything it started), which also means a SIGKILLed gov
leaves it running, re-parented to init. So every launched process carries
`GOV_RUN_OWNER=<gov pid>:<its start time>:<results root>` in its environment,
which its children inherit; `orphans(scope)` lists the live processes whose
owner is no longer that process (dead, or the pid reused). `kill_orphans`
ends them, except those of a row whose launch still runs (its folder's
launch lock is held, `launch_record`): a later run adopts that row and waits
for it (`adopt`); `in_use` says which files such rows run, so the dead run's
checkout is kept until they end. Linux only (`/proc`); elsewhere there is
nothing to find.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from governance.sweeps.launch_record import lock_held, start_time

OWNER_ENV = "GOV_RUN_OWNER"
_PROC = Path("/proc")


def owner_token(scope: Path | str) -> str:
    """The value of OWNER_ENV for processes this process launches."""
    pid = os.getpid()
    return f"{pid}:{start_time(pid)}:{scope}"


def _environ(pid: int, *names: str) -> dict[str, str]:
    """Those of `names` that process `pid` was started with."""
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return {}
    wanted = {name.encode() + b"=": name for name in names}
    found = {}
    for item in environ.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep and name + b"=" in wanted:
            found[name.decode()] = value.decode("utf-8", "replace")
    return found


def orphans(scope: Path | str | None) -> list[tuple[int, str]]:
    """(pid, its RESULT_DIR) of each live process launched for `scope` (None:
    for any) by a gov process that is gone."""
    if not _PROC.is_dir():
        return []
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        env = _environ(int(entry.name), OWNER_ENV, "RESULT_DIR")
        pid, _, rest = env.get(OWNER_ENV, "").partition(":")
        started, _, where = rest.partition(":")
        if (scope is not None and where != str(scope)) or not pid.isdigit():
            continue
        if start_time(int(pid)) != started:  # the owner died (or its pid was reused)
            found.append((int(entry.name), env.get("RESULT_DIR", "")))
    return found


def _adoptable(folder: str) -> bool:
    return bool(folder) and lock_held(Path(folder))


def kill_orphans(scope: Path | str) -> int:
    """SIGKILL every orphan of `scope` but those of a launch that still runs
    (a later run adopts it); how many were killed."""
    victims = [pid for pid, folder in orphans(scope) if not _adoptable(folder)]
    for pid in victims:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(victims)


def in_use() -> set[str]:
    """The arguments of the orphans `kill_orphans` spares (their scripts'
    paths among them): what a dead run's checkout must keep until they end.
    Of every scope: temporary folders are shared by all repositories."""
    used: set[str] = set()
    for pid, folder in orphans(None):
        if _adoptable(folder):
            with contextlib.suppress(OSError):
                raw = (_PROC / str(pid) / "cmdline").read_bytes()
                used.update(arg.decode("utf-8", "replace") for arg in raw.split(b"\0") if arg)
    return used
