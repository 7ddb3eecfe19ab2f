"""A small on-disk cache of check findings, keyed by the bytes they judged.

The plan half of `gov check` (resolve keys, validate every master config,
generate the appended rows) costs most of a second on a large repository,
yet its answer depends only on a handful of inputs: the appended changelog
lines and the master/runner files at base and head. The pre-commit hook and
CI ask the same question again and again, so the answer is stored under
`.git/gov/check-cache/`, named by a digest of those inputs (plus gov's
version, so an upgrade never reuses an old answer). Writes are atomic; a
corrupt or unreadable entry is a miss, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from governance import __version__
from governance.diagnostics import Violation

KEEP = 256  # entries; the oldest are pruned beyond this


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
        self.folder = folder

    def get(self, key: str) -> tuple[list[str], list[Violation]] | None:
        try:
            data = json.loads((self.folder / f"{key}.json").read_text())
            keys = [str(k) for k in data["keys"]]
            found = [Violation(**item) for item in data["violations"]]
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return keys, found

    def put(self, key: str, keys: list[str], found: list[Violation]) -> None:
        payload = json.dumps({"keys": keys, "violations": [v.to_dict() for v in found]})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
            with os.fdopen(fd, "w") as out:
                out.write(payload)
            os.replace(tmp, self.folder / f"{key}.json")
            self._prune()
        except OSError:
            pass  # a read-only .git only costs speed

    def _prune(self) -> None:
        entries = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for stale in entries[:-KEEP]:
            with contextlib.suppress(OSError):
                stale.unlink()
