"""The embedded forge's SQLite database: schema, versioning, transactions.

Every write runs in one `BEGIN IMMEDIATE` transaction (a writer lock), so two
processes or two forge objects on the same database never interleave
half-written state.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from governance.forge.base import ForgeError

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pulls (
    number INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('open', 'closed', 'merged')),
    head_branch TEXT NOT NULL,
    base_branch TEXT NOT NULL,
    draft INTEGER NOT NULL DEFAULT 0,
    merged_head_sha TEXT,          -- the head at merge time (the branch may move or vanish later)
    merge_commit_sha TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS labels (
    number INTEGER NOT NULL REFERENCES pulls (number),
    name TEXT NOT NULL,
    PRIMARY KEY (number, name)
);
CREATE TABLE IF NOT EXISTS comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    number INTEGER NOT NULL REFERENCES pulls (number),
    author TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sha TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'in_progress', 'completed')),
    conclusion TEXT,
    details_url TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS checks_by_sha ON checks (sha, name);
"""


class ForgeDatabase:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._ensure_schema()

    @contextmanager
    def connect(self, write: bool) -> Iterator[sqlite3.Connection]:
        """One short-lived connection per operation: no lock outlives a call,
        and forge objects can be used from any thread."""
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            # IMMEDIATE takes the writer lock up front, so read-then-write
            # sequences (merge, open) cannot be raced by another writer.
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise ForgeError(
                f"local forge database error: {exc}",
                f"the database is {self.path}; delete it only if you can lose local PR records",
            ) from exc
        finally:
            conn.close()

    def _ensure_schema(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            # WAL lets readers proceed while a writer holds the lock; the mode
            # is persistent, so setting it on every open is cheap.
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("BEGIN IMMEDIATE")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                conn.execute("ROLLBACK")
                raise ForgeError(
                    f"local forge database {self.path} has schema v{version}, "
                    f"this gov knows v{SCHEMA_VERSION}",
                    "upgrade gov",
                )
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        finally:
            conn.close()
