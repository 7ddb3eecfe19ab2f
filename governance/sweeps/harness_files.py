"""Reading a harness from a checkout on disk (the I/O half of `sweeps.harness`).

Rows run from a checkout: the working tree for `gov launch`, a temporary
checkout of the prepared merge commit for prepare-merge. The harness is read
from that same checkout, so it names the bytes that ran (a dirty working tree
included), by git blob id.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from governance.core.diagnostics import UsageError
from governance.sweeps.harness import MAX_SCAN_BYTES, Harness, Tracer

_CHUNK = 1 << 20


class CheckoutReader:
    """`harness.Reader` over the files below `root` (repository paths), and
    absolute paths (a `scripts` folder outside the repository)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def __call__(self, path: str) -> tuple[str, bytes] | None:
        candidate = Path(path) if os.path.isabs(path) else self.root / path
        try:
            real = candidate.resolve(strict=True)
            if not os.path.isabs(path) and not real.is_relative_to(self.root):
                return None  # a symlink out of the checkout is not a repository file
            with real.open("rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    return None
                blob = hashlib.sha1(b"blob %d\0" % info.st_size, usedforsecurity=False)
                head = b""
                while chunk := handle.read(_CHUNK):
                    blob.update(chunk)
                    if info.st_size <= MAX_SCAN_BYTES:
                        head += chunk
        except (OSError, RuntimeError):  # missing, unreadable, a symlink loop
            return None
        return blob.hexdigest(), head


def repository_path(root: Path, path: Path) -> str:
    """`path` as the repository names it (POSIX, relative to `root`), or its
    absolute path when it lies outside the checkout."""
    real = path.resolve()
    base = root.resolve()
    return real.relative_to(base).as_posix() if real.is_relative_to(base) else str(real)


def expand_inputs(root: Path, patterns: Sequence[str], where: str) -> list[str]:
    """The repository files the `harness-inputs` globs match (sorted)."""
    found: set[str] = set()
    base = root.resolve()
    for pattern in patterns:
        pure = PurePosixPath(pattern)
        if pure.is_absolute() or ".." in pure.parts or not pattern.strip():
            raise UsageError(
                f"{where}: harness-inputs {pattern!r} must be a glob relative to the "
                "repository root, without '..'",
                'e.g. harness-inputs = ["benchmarks/*.sh", "utils/**/*.py"]',
            )
        for match in base.glob(pattern):
            if match.is_file() and match.resolve().is_relative_to(base):
                found.add(match.relative_to(base).as_posix())
    return sorted(found)


class CheckoutHarness:
    """Harnesses of rows that run from one checkout."""

    def __init__(self, root: Path, inputs: Sequence[str] = (), where: str = "settings") -> None:
        self.root = root
        self._tracer = Tracer(CheckoutReader(root), expand_inputs(root, inputs, where))

    def of(self, files: Iterable[Path]) -> Harness:
        """The harness of a row whose launch starts at `files` (script, recipe)."""
        return self._tracer.trace([repository_path(self.root, f) for f in files])
