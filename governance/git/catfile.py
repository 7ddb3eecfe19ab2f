"""Object reads through one long-lived `git cat-file --batch-command` process.

The everyday doors (the hook, `gov check`, `gov plan`) read a handful of
objects: the changelog at two commits, the master configs, a ref or two.
Opening a full gitpython repository for that costs more than the reads; one
git process that answers `info`/`contents` lines costs a few milliseconds.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# Requests written at once: ~50 bytes each, well inside a pipe's 64 KiB, so
# git never waits on a full stdin while this side waits on its answers.
_CHUNK = 256


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    sha: str
    type: str  # blob, tree, commit, tag
    size: int


class CatFile:
    """Answers object lookups by any name git understands (`<rev>:<path>`,
    `:<path>` for the index, `<ref>^{commit}`, a SHA). Started on first use."""

    def __init__(self, cwd: Path) -> None:
        self._cwd = cwd
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                ["git", "cat-file", "--batch-command"],
                cwd=self._cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            # Closing stdin ends the process (EOF) when the reader goes away.
            weakref.finalize(self, _stop, self._process)
        return self._process

    def _exchange(
        self, command: str, names: list[str]
    ) -> list[tuple[ObjectInfo | None, bytes | None]]:
        """`command NAME` for each name, the requests written at once and the
        answers read in order (a name git could not look up answers None)."""
        out: list[tuple[ObjectInfo | None, bytes | None]] = []
        with self._lock:
            process = self._start()
            assert process.stdin is not None and process.stdout is not None
            asked = [name for name in names if _askable(name)]
            process.stdin.write(b"".join(f"{command} {name}\n".encode() for name in asked))
            process.stdin.flush()
            for name in names:
                out.append(_answer(process.stdout, command) if _askable(name) else (None, None))
        return out

    def _ask(self, command: str, name: str) -> tuple[ObjectInfo | None, bytes | None]:
        return self._exchange(command, [name])[0]

    def contents_of(self, shas: list[str]) -> list[bytes | None]:
        """The contents of many objects by SHA, in order (None: missing): one
        round trip per chunk of requests small enough for the pipe, not per object."""
        return [
            data
            for start in range(0, len(shas), _CHUNK)
            for _info, data in self._exchange("contents", shas[start : start + _CHUNK])
        ]

    def info(self, name: str) -> ObjectInfo | None:
        return self._ask("info", name)[0]

    def contents(self, name: str) -> tuple[ObjectInfo, bytes] | None:
        info, data = self._ask("contents", name)
        return None if info is None or data is None else (info, data)

    def close(self) -> None:
        if self._process is not None:
            _stop(self._process)
            self._process = None


def _askable(name: str) -> bool:
    return bool(name) and "\n" not in name


def _answer(stdout: IO[bytes], command: str) -> tuple[ObjectInfo | None, bytes | None]:
    """One answer: the header line, then the contents when they were asked for."""
    header = stdout.readline().rstrip(b"\n").split(b" ")
    if len(header) != 3:  # "<name> missing" or "<name> ambiguous"
        return None, None
    info = ObjectInfo(header[0].decode(), header[1].decode(), int(header[2]))
    if command != "contents":
        return info, None
    data = stdout.read(info.size)
    stdout.read(1)  # the newline after the contents
    return info, data


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None and not process.stdin.closed:
        with contextlib.suppress(OSError):
            process.stdin.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()
