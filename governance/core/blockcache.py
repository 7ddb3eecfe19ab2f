"""Parsed master-config blocks (and remembered answers) on disk, content-addressed.

An unchanged block is never parsed twice, whichever commit it comes from.
`BlockCache` keeps one JSON file per entry (the few remembered answers of a
check); `BlockPack` keeps the many parsed blocks of a catalog in one SQLite
file, because a cold `gov plan` stores ~230 of them and creating that many
files cost more than parsing the blocks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
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


class BlockPack(BlockCache):
    """The same store in one SQLite file (`blocks.sqlite3` in `directory`):
    one connection, each entry one row. Unreadable, locked or corrupt, it is
    a miss, never an error, like a missing file."""

    FILE = "blocks.sqlite3"

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory)
        self._db: sqlite3.Connection | None = None
        self._broken = False

    def _connection(self) -> sqlite3.Connection | None:
        if self._db is None and not self._broken:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.directory / self.FILE, timeout=0.5, isolation_level=None)
                # A cache: a lost write costs a re-parse, so no fsync per entry.
                db.execute("PRAGMA synchronous=OFF")
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    "CREATE TABLE IF NOT EXISTS blocks (digest TEXT PRIMARY KEY, value TEXT NOT NULL)"
                )
                self._db = db
            except (sqlite3.Error, OSError):
                self._broken = True
        return self._db

    def get(self, digest: str) -> Any | None:
        db = self._connection()
        if db is None:
            return None
        try:
            row = db.execute("SELECT value FROM blocks WHERE digest = ?", (digest,)).fetchone()
            return json.loads(row[0]) if row is not None else None
        except (sqlite3.Error, ValueError, TypeError):
            return None

    def put(self, digest: str, value: Any) -> None:
        if not _json_plain(value):
            return
        db = self._connection()
        if db is None:
            return
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        with contextlib.suppress(sqlite3.Error):  # locked by another gov, read-only: only slower
            db.execute("INSERT OR REPLACE INTO blocks VALUES (?, ?)", (digest, text))


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
