"""Launched rows of a dead run: find them, and end them.

Each script the local launcher starts runs in its own session (so a timeout
can kill it and everything it started), which also means a SIGKILLed gov
leaves it running, re-parented to init. So every launched process carries
`GOV_RUN_OWNER=<gov pid>:<its start time>:<results root>` in its environment,
which its children inherit; `orphans(scope)` lists the live processes whose
owner is no longer that process (dead, or the pid reused), and
`kill_orphans` ends them: the next run adopts what the dead one launched.
Linux only (`/proc`); elsewhere there is nothing to find.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

OWNER_ENV = "GOV_RUN_OWNER"
_PROC = Path("/proc")


def start_time(pid: int) -> str:
    """The kernel's start time of `pid` (clock ticks since boot), "" if gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]


def owner_token(scope: Path | str) -> str:
    """The value of OWNER_ENV for processes this process launches."""
    pid = os.getpid()
    return f"{pid}:{start_time(pid)}:{scope}"


def _owner(pid: int) -> str | None:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    prefix = OWNER_ENV.encode() + b"="
    for item in environ.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode("utf-8", "replace")
    return None


def orphans(scope: Path | str) -> list[int]:
    """Live processes launched for `scope` by a gov process that is gone."""
    if not _PROC.is_dir():
        return []
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        owner = _owner(int(entry.name))
        if owner is None:
            continue
        pid, _, rest = owner.partition(":")
        started, _, where = rest.partition(":")
        if where != str(scope) or not pid.isdigit():
            continue
        if start_time(int(pid)) != started:  # the owner died (or its pid was reused)
            found.append(int(entry.name))
    return found


def kill_orphans(scope: Path | str) -> int:
    """SIGKILL every orphan of `scope`; how many there were."""
    victims = orphans(scope)
    for pid in victims:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return len(victims)
