"""The embedded forge's SQLite schema (transactions and versioning are
`core.state.SqliteStore`'s: every write is one `BEGIN IMMEDIATE` transaction,
so two processes or two forge objects never interleave half-written state).
"""

from __future__ import annotations

from pathlib import Path

from governance.core.state import SqliteStore
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


def open_forge_database(path: Path) -> SqliteStore:
    """The forge database at `path`, created or upgraded to `SCHEMA_VERSION`."""

    def error(message: str) -> ForgeError:
        return ForgeError(
            message,
            f"the database is {path}; upgrade gov, or delete it only if you can lose local PR records",
        )

    return SqliteStore(path, "the local forge database", _SCHEMA, SCHEMA_VERSION, error)
