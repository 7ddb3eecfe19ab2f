"""Kernel locks that die with their process: `flock` on a file under
`StateLayout.locks`.

    with hold(layout.locks / "prepare-merge-pr-7.lock", "prepare-merge --pr 7"):
        ...

`wait=False` refuses at once when another process holds the lock (a usage
error naming its pid); `wait=True` blocks until it is free (short critical
sections, e.g. the shared checkout). The lock is the open file description,
so a killed holder releases it with its last file descriptor: there is no
stale lock to clean up, and the pid written in the file is only for the
message.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from governance.core.diagnostics import UsageError

WAIT_SECONDS = 600.0


def _holder(handle_fd: int) -> str:
    try:
        os.lseek(handle_fd, 0, os.SEEK_SET)
        text = os.read(handle_fd, 64).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""


@contextlib.contextmanager
def hold(path: Path, purpose: str, *, wait: bool = False) -> Iterator[None]:
    """Hold the exclusive lock on `path` for the block (see the module doc)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait or time.monotonic() > deadline:
                    pid = _holder(fd)
                    raise UsageError(
                        f"another run holds the lock (pid {pid or '?'}) for {purpose}",
                        f"wait for it to finish, then re-run ({path})",
                    ) from None
                time.sleep(0.01)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
