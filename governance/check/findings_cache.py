"""Check findings cached by the bytes they judged.

The plan half of `gov check` (resolve keys, validate every master config,
generate the appended rows) costs most of a second on a large repository,
yet its answer depends only on a handful of inputs: the appended changelog
lines and the master/runner files at base and head. The pre-commit hook and
CI ask the same question again and again, so the answer is stored in the
content-addressed `BlockCache` under `.git/gov/check-cache/`, named by a
digest of those inputs (plus gov's installed code, `code_digest`, so an
upgrade or any edit of gov never reuses an old answer: the version string
alone stayed "0.1.0" across every commit). A corrupt or unreadable entry is
a miss, never an error; `gov check --no-cache` or `GOV_NO_CACHE=1` skip the
lookup (and store the fresh answer).
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import governance
from governance import __version__
from governance.core.blockcache import BlockCache
from governance.core.diagnostics import Violation


@functools.cache
def code_digest() -> str:
    """What changes when gov's installed code changes: the relative path,
    size and modification time of every `.py` file of the governance package
    (one `stat` each, about a millisecond, computed once per process)."""
    root = os.path.dirname(governance.__file__)
    stats = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                info = os.stat(path)
                stats.append(f"{os.path.relpath(path, root)}:{info.st_size}:{info.st_mtime_ns}")
    stats.sort()
    return hashlib.sha256("\n".join([__version__, *stats]).encode()).hexdigest()


def cache_disabled(environ: Mapping[str, str] | None = None) -> bool:
    """`GOV_NO_CACHE` set to 1/true/yes: remembered answers are not read."""
    value = (os.environ if environ is None else environ).get("GOV_NO_CACHE", "")
    return value.strip().lower() in ("1", "true", "yes")


def digest(parts: Iterable[bytes | str | None]) -> str:
    """Digest of an ordered tuple of inputs (None and b"" stay distinct),
    keyed by gov's installed code."""
    sha = hashlib.sha256(code_digest().encode())
    for part in parts:
        if part is None:
            sha.update(b"\x00none")
            continue
        data = part.encode() if isinstance(part, str) else part
        sha.update(len(data).to_bytes(8, "big"))
        sha.update(data)
    return sha.hexdigest()


class PlanFindings(NamedTuple):
    """The plan half of a check: the keys the appended entries resolve to,
    what would stop their plan, and the plan document itself when it was
    generated (refs "base"/"head"; the preflight and `--summary-plan` reuse it)."""

    keys: list[str]
    violations: list[Violation]
    document: dict[str, Any] | None = None


class FindingsCache:
    def __init__(self, folder: Path, *, read: bool = True) -> None:
        self.store = BlockCache(folder)
        self.read = read  # False: every lookup is a miss (--no-cache)

    def get(self, key: str) -> PlanFindings | None:
        data = self.store.get(key) if self.read else None
        if data is None:
            return None
        try:
            document = data.get("document")  # absent: the preflight plans afresh
            return PlanFindings(
                [str(k) for k in data["keys"]],
                [Violation(**v) for v in data["violations"]],
                document if isinstance(document, dict) else None,
            )
        except (TypeError, KeyError):
            return None

    def put(self, key: str, found: PlanFindings) -> None:
        self.store.put(
            key,
            {
                "keys": found.keys,
                "violations": [v.to_dict() for v in found.violations],
                "document": found.document,
            },
        )
