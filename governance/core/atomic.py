"""Replacing a file so that readers see the old bytes or the new, never a
truncated file: the one way gov writes anything that must survive a crash
(git's merge-driver %A, the merge journal, caches, row files)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_atomically(target: Path, data: bytes, *, durable: bool = True) -> None:
    """Write a temporary file in `target`'s folder (same filesystem, so the
    rename is atomic), fsync it when `durable`, keep `target`'s permission
    bits, rename. On any failure the temporary file is removed. Caches pass
    `durable=False`: losing one to a power cut only costs a re-parse."""
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed before the rename)
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    tmp = Path(handle.name)
    try:
        with handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, _mode_for(target))  # mkstemp's 0600 would stick otherwise
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _mode_for(target: Path) -> int:
    """`target`'s permission bits, or the umask default for a new file."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask
