"""Check findings cached by the bytes they judged.

The plan half of `gov check` (resolve keys, validate every master config,
generate the appended rows) costs most of a second on a large repository,
yet its answer depends only on a handful of inputs: the appended changelog
lines and the master/runner files at base and head. The pre-commit hook and
CI ask the same question again and again, so the answer is stored in the
content-addressed `BlockCache` under `.git/gov/check-cache/`, named by a
digest of those inputs (plus gov's version, so an upgrade never reuses an
old answer). A corrupt or unreadable entry is a miss, never an error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from governance import __version__
from governance.core.blockcache import BlockCache
from governance.core.diagnostics import Violation


def digest(parts: Iterable[bytes | str | None]) -> str:
    """Digest of an ordered tuple of inputs (None and b"" stay distinct)."""
    sha = hashlib.sha256(__version__.encode())
    for part in parts:
        if part is None:
            sha.update(b"\x00none")
            continue
        data = part.encode() if isinstance(part, str) else part
        sha.update(len(data).to_bytes(8, "big"))
        sha.update(data)
    return sha.hexdigest()


class FindingsCache:
    def __init__(self, folder: Path) -> None:
        self.store = BlockCache(folder)

    def get(self, key: str) -> tuple[list[str], list[Violation]] | None:
        data = self.store.get(key)
        if data is None:
            return None
        try:
            return [str(k) for k in data["keys"]], [Violation(**v) for v in data["violations"]]
        except (TypeError, KeyError):
            return None

    def put(self, key: str, keys: list[str], found: list[Violation]) -> None:
        self.store.put(key, {"keys": keys, "violations": [v.to_dict() for v in found]})
