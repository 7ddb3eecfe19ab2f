"""Parsed master-config blocks on disk, content-addressed.

An unchanged block is never parsed twice, whichever commit it comes from.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from governance.core.atomic import write_atomically

_CACHE_FORMAT = b"gov-matrix-block-v1\0"


class BlockCache:
    """Parsed master-config blocks on disk, keyed by the SHA-256 of the block's
    bytes. Content addressing makes entries valid forever; only plain JSON
    data is stored (blocks holding dates, binary... are simply not cached)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self._ready = False  # the folder is created once, not per block

    @staticmethod
    def digest(block: bytes) -> str:
        return hashlib.sha256(_CACHE_FORMAT + block).hexdigest()

    def _file(self, digest: str) -> Path:
        # One flat folder: a cold parse writes ~200 blocks, and a folder per
        # digest prefix cost a mkdir each (a third of the write time).
        return self.directory / f"{digest}.json"

    def get(self, digest: str) -> Any | None:
        try:
            return json.loads(self._file(digest).read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, digest: str, value: Any) -> None:
        if not _json_plain(value):
            return
        target = self._file(digest)
        try:
            if not self._ready:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._ready = True
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            write_atomically(target, text.encode("utf-8"), durable=False)
        except OSError:
            pass  # a cache that cannot be written is only slower


def _json_plain(value: Any) -> bool:
    """True when a JSON round trip gives back an equal, same-typed value."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(_json_plain(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_plain(v) for k, v in value.items())
    return False
