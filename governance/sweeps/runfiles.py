"""Where a run's files live, what the ledger records of them, and their check.

Each launch writes each row into a folder of its own that nothing else ever
writes: `<results>/runs/<launch token>/<job key>/`, the token unique per
launch (UTC time, pid, random hex). The ledger's `result_path` is that
folder. When a run ends succeeded, every file it left there is recorded
(name relative to the folder, size, SHA-256) with the run, so reuse, `gov
results compare` and `gov runs list --commit` can tell the files are still
the ones measured (docs/sweeps.md, 'Results').

`verify` is I/O (it reads the files); the reuse core only sees its answer.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.sweeps.ledger import Ledger, LedgerRun

RUNS_FOLDER = "runs"  # <results>/runs/<launch token>/<job key>/
MAX_HASHED_BYTES = 16 * 1024 * 1024  # a bigger file is recorded, not hashed
_CHUNK = 1024 * 1024
NOT_REGULAR = -1  # the size recorded for an entry that is not a regular file

NO_DIGESTS = "no recorded digests (run recorded before ledger v3)"


@dataclass(frozen=True, slots=True)
class RunFile:
    """One file a run left: its name relative to the run folder (POSIX
    separators), its size, and its SHA-256 (None when it was not hashed:
    larger than MAX_HASHED_BYTES, or not a regular file, size NOT_REGULAR)."""

    name: str
    size: int
    sha256: str | None


class FileUnverifiable(Exception):
    """A recorded file that is not what was recorded; the message says why."""


def launch_token(now: datetime | None = None) -> str:
    """`20260101T120000Z-4242-9f3a1c07`: unique per launch."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{moment:%Y%m%dT%H%M%SZ}-{os.getpid()}-{secrets.token_hex(4)}"


def launch_folder(results_root: Path, token: str | None = None) -> Path:
    """The folder of one launch; its rows go in `<it>/<job key>/`."""
    return results_root / RUNS_FOLDER / (token or launch_token())


def _open(path: Path) -> int:
    """A read descriptor that never follows a symlink (OSError otherwise)."""
    return os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))


def _digest(fd: int, size_cap: int, keep: bool) -> tuple[str, int, bytes | None]:
    """SHA-256 and length of an open file read in chunks, stopping once past
    `size_cap` bytes (the length then says so); its bytes too when `keep`."""
    sha = hashlib.sha256()
    total = 0
    kept = bytearray() if keep else None
    while total <= size_cap and (chunk := os.read(fd, _CHUNK)):
        sha.update(chunk)
        total += len(chunk)
        if kept is not None:
            kept += chunk
    return sha.hexdigest(), total, bytes(kept) if kept is not None else None


def record(folder: Path) -> tuple[RunFile, ...]:
    """Every file below `folder` (sorted by name): what the ledger keeps of a
    succeeded run. Symlinks and other non-regular entries are recorded
    unhashed (they verify as altered); files over the cap unhashed with their
    size (they verify as "too large")."""
    out = []
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        info = path.lstat()
        if stat.S_ISDIR(info.st_mode):
            continue
        if not stat.S_ISREG(info.st_mode):
            out.append(RunFile(name, NOT_REGULAR, None))
            continue
        if info.st_size > MAX_HASHED_BYTES:
            out.append(RunFile(name, info.st_size, None))
            continue
        fd = _open(path)
        try:
            sha, size, _ = _digest(fd, MAX_HASHED_BYTES, keep=False)
        finally:
            os.close(fd)
        out.append(RunFile(name, size, sha if size <= MAX_HASHED_BYTES else None))
    return tuple(sorted(out, key=lambda f: f.name))


def read_verified(
    folder: Path, recorded: RunFile, *, keep: bool = True, limit: int = MAX_HASHED_BYTES
) -> bytes:
    """The bytes of a recorded file (b"" unless `keep`), checked against its
    record as they are read, so what the caller parses is what was verified.
    FileUnverifiable says why not: "result files missing: NAME", "result file
    altered: NAME", "result file too large: NAME" (over `limit`, or not hashed)."""
    name = recorded.name
    if recorded.sha256 is None:
        if recorded.size == NOT_REGULAR:
            raise FileUnverifiable(f"result file altered: {name} (not a regular file)")
        raise FileUnverifiable(f"result file too large: {name}")
    if recorded.size > limit:
        raise FileUnverifiable(f"result file too large: {name}")
    path = folder / name
    try:
        fd = _open(path)
    except FileNotFoundError as exc:
        raise FileUnverifiable(f"result files missing: {name}") from exc
    except OSError as exc:  # a symlink (ELOOP), a folder, unreadable
        why = "a symlink" if path.is_symlink() else exc.strerror
        raise FileUnverifiable(f"result file altered: {name} ({why})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != recorded.size:
            raise FileUnverifiable(f"result file altered: {name}")
        sha, size, data = _digest(fd, recorded.size, keep)
    finally:
        os.close(fd)
    if size != recorded.size or sha != recorded.sha256:
        raise FileUnverifiable(f"result file altered: {name}")
    return data or b""


def verify(folder: Path, files: Sequence[RunFile]) -> str:
    """ "" when every recorded file is there with its size and SHA-256, else
    the reason (missing files all named at once, else the first altered or
    too large one). No record at all: the run predates ledger v3."""
    if not files:
        return NO_DIGESTS
    missing = [f.name for f in files if not os.path.lexists(folder / f.name)]
    if missing:
        return "result files missing: " + ", ".join(missing)
    for recorded in files:
        try:
            read_verified(folder, recorded, keep=False)
        except FileUnverifiable as exc:
            return str(exc)
    return ""


def run_evidence(run: LedgerRun, files: Sequence[RunFile]) -> str:
    """`verify` for one ledger run and the files the ledger recorded for it."""
    return verify(Path(run.result_path), files)


def evidence(ledger: Ledger, runs: Iterable[LedgerRun]) -> dict[int, str]:
    """Run id -> `run_evidence` ("" verified) for each of `runs`."""
    wanted = list(runs)
    recorded: Mapping[int, tuple[RunFile, ...]] = ledger.files([r.id for r in wanted])
    return {run.id: run_evidence(run, recorded.get(run.id, ())) for run in wanted}
