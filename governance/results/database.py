"""The results database: what landed on main, one row per plan row, where a dashboard reads it.

`open_results_database(target, default)` opens SQLite (the default,
`.git/gov/results.sqlite3`, or any file path) or PostgreSQL (a
`postgresql://` URL; psycopg, the `postgres` extra). The URL names the
server, the role and the database; the password comes from the environment
(`PGPASSWORD`, `~/.pgpass`, `PGSERVICE`: libpq's own rules) and a URL that
carries one is refused, so a password never sits in a settings file or in
gov's output. `label` is what messages print: never a credential.

Both engines get the same tables from the same SQL (docs/results.md,
"The results database"); `gov_schema` records the version, and opening
applies the missing migrations in one transaction, refusing a database that
a newer gov wrote. `publish` inserts a commit's rows and its `publications`
row in one transaction, keyed by (commit, row identity) with `ON CONFLICT DO
NOTHING`: publishing the same commit twice, or again after a crash, leaves
every row exactly once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from governance.core.crash import crash_point
from governance.core.diagnostics import UsageError

SCHEMA_VERSION = 2
# version -> the statements that bring the previous version to it.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE results (
            commit_sha     TEXT NOT NULL,   -- the commit of main the row landed in
            row_identity   TEXT NOT NULL,   -- sha256 of [recipe, conc, harness digest] of its run
            job_key        TEXT NOT NULL,   -- <recipe[:16]>-conc<N>, eval-<id16>-conc<N>
            recipe         TEXT NOT NULL,
            conc           TEXT NOT NULL,
            config         TEXT NOT NULL,   -- e.g. "dsr1 fp8 mi300x sglang 1k/1k tp8"
            kind           TEXT NOT NULL,   -- throughput | eval
            tput_per_gpu   DOUBLE PRECISION,
            median_ttft_ms DOUBLE PRECISION,
            median_tpot_ms DOUBLE PRECISION,
            median_interactivity DOUBLE PRECISION,
            scores         TEXT NOT NULL,   -- JSON {"task metric": value} (evals), else {}
            origin         TEXT NOT NULL,   -- measured (for this commit) | reused (a PR commit's run)
            measured_at    TEXT NOT NULL,   -- the commit the run ran at
            pr             INTEGER,
            run_id         INTEGER NOT NULL,  -- the run in the ledger of the repository that published
            result_file    TEXT NOT NULL,
            result_sha256  TEXT NOT NULL,
            published_at   TEXT NOT NULL,   -- ISO 8601 UTC
            PRIMARY KEY (commit_sha, row_identity)
        )""",
        "CREATE INDEX results_config ON results (config, conc)",
        "CREATE INDEX results_recipe ON results (recipe)",
        """CREATE TABLE publications (
            commit_sha   TEXT PRIMARY KEY,
            rows         INTEGER NOT NULL,
            published_at TEXT NOT NULL,
            gov_version  TEXT NOT NULL
        )""",
    ),
    # 2: the config each row belongs to, as `gov results compare` matches it
    # (JSON of `results.service.config_key`); rows of v1 have '' and are no baseline.
    2: ("ALTER TABLE results ADD COLUMN config_key TEXT NOT NULL DEFAULT ''",),
}


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One published row: what was measured, by which run, from which file."""

    commit_sha: str
    row_identity: str
    job_key: str
    recipe: str
    conc: str
    config: str
    kind: str
    tput_per_gpu: float | None
    median_ttft_ms: float | None
    median_tpot_ms: float | None
    median_interactivity: float | None
    scores: str
    origin: str
    measured_at: str
    pr: int | None
    run_id: int
    result_file: str
    result_sha256: str
    published_at: str
    config_key: str = ""  # JSON of the config key (v2); "" for rows published by v1


COLUMNS = tuple(f.name for f in fields(ResultRow))


class DatabaseError(UsageError):
    """The results database could not be opened or written (exit 2); the
    message names the database by its label, never by a credential."""


class ResultsDatabase:
    """One results database (SQLite or PostgreSQL), migrated on first use."""

    def __init__(self, label: str, connect: Any, marker: str, engine: str) -> None:
        self.label = label
        self.engine = engine
        self._connect = connect
        self._marker = marker  # the driver's parameter placeholder
        self._migrated = False  # connecting waits for the first use: the label is known before

    # -- what callers use ----------------------------------------------------------

    def publish(self, commit: str, rows: Sequence[ResultRow], gov_version: str) -> int:
        """Insert `rows` of `commit` (those not there yet) and its publication
        record, in one transaction; the number of rows inserted."""
        insert = self._sql(
            f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))}) "
            "ON CONFLICT (commit_sha, row_identity) DO NOTHING"
        )
        inserted = 0
        with self._transaction() as cursor:
            for row in rows:
                cursor.execute(insert, astuple(row))
                inserted += max(cursor.rowcount, 0)
            crash_point("publish-inserted")  # killed here: the transaction never commits
            cursor.execute(
                self._sql(
                    "INSERT INTO publications (commit_sha, rows, published_at, gov_version) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (commit_sha) DO UPDATE SET "
                    "rows = excluded.rows, published_at = excluded.published_at, "
                    "gov_version = excluded.gov_version"
                ),
                (commit, len(rows), rows[0].published_at if rows else "", gov_version),
            )
        return inserted

    def rows(self, commit: str | None = None) -> list[ResultRow]:
        """The published rows (of one commit), in a stable order."""
        where = " WHERE commit_sha = ?" if commit else ""
        sql = self._sql(
            f"SELECT {', '.join(COLUMNS)} FROM results{where} ORDER BY commit_sha, job_key"
        )
        with self._transaction() as cursor:
            cursor.execute(sql, (commit,) if commit else ())
            return [ResultRow(*row) for row in cursor.fetchall()]

    # -- the engine underneath -------------------------------------------------------

    def _sql(self, text: str) -> str:
        return text if self._marker == "?" else text.replace("?", self._marker)

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        if not self._migrated:
            self._migrated = True  # the transaction below must not migrate again
            try:
                with self._transaction() as cursor:
                    self._migrate(cursor)
            except BaseException:
                self._migrated = False
                raise
        try:
            conn = self._connect()
        except Exception as exc:  # each driver raises its own kind
            raise DatabaseError(
                f"cannot connect to the results database {self.label}: {_reason(exc)}",
                _HINT[self.engine],
            ) from None
        try:
            cursor = conn.cursor()
            try:
                yield cursor
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
        except DatabaseError:
            raise
        except (sqlite3.Error, _driver_error()) as exc:
            raise DatabaseError(
                f"the results database {self.label} refused: {_reason(exc)}",
                "fix the database, then: gov results publish --retry-failed",
            ) from None
        finally:
            conn.close()

    def _migrate(self, cursor: Any) -> None:
        if self.engine == "postgresql":  # two publishers migrating at once take turns
            cursor.execute("SELECT pg_advisory_xact_lock(4747001)")
        cursor.execute("CREATE TABLE IF NOT EXISTS gov_schema (version INTEGER NOT NULL)")
        cursor.execute("SELECT MAX(version) FROM gov_schema")
        found = cursor.fetchone()[0] or 0
        if found > SCHEMA_VERSION:
            raise DatabaseError(
                f"the results database {self.label} has schema v{found}, "
                f"newer than this gov knows (v{SCHEMA_VERSION})",
                "upgrade gov, or point results-database at another database",
            )
        for version in range(found + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[version]:
                cursor.execute(statement)
            cursor.execute(self._sql("INSERT INTO gov_schema (version) VALUES (?)"), (version,))


_HINT = {
    "sqlite": "check that the folder exists and is writable",
    "postgresql": "check the server, the role and PGPASSWORD (or ~/.pgpass), then: "
    "gov results publish --retry-failed",
}


def _driver_error() -> type[Exception]:
    try:
        import psycopg
    except ImportError:
        return sqlite3.Error
    return psycopg.Error


def _reason(exc: BaseException) -> str:
    """The driver's first line, which names the fault (never the password: the
    URL carries none)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _sqlite(path: Path) -> sqlite3.Connection:
    """Connect, creating the folder first (on first use, so opening never
    fails and a refusal is recorded under the database's label)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise sqlite3.OperationalError(f"cannot create {path.parent}: {exc.strerror}") from None
    return sqlite3.connect(path, timeout=30.0)


def is_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def open_results_database(target: str, default: Path, root: Path) -> ResultsDatabase:
    """`target` is the `results-database` setting: empty (SQLite at
    `default`), a file path (SQLite, relative to `root`), or a PostgreSQL URL."""
    if not is_url(target):
        path = default if not target else (root / target)
        return ResultsDatabase(str(path), lambda: _sqlite(path), "?", "sqlite")
    parts = urlsplit(target)
    if parts.password is not None:
        raise DatabaseError(
            "results-database: the URL carries a password; gov never keeps one in settings",
            "remove it from the URL and set PGPASSWORD (or use ~/.pgpass)",
        )
    if not parts.hostname and "host=" not in parts.query:
        raise DatabaseError(
            "results-database: the URL names no server",
            "e.g. postgresql://gov@db.example.com:5432/results",
        )
    try:
        import psycopg
    except ImportError:
        raise DatabaseError(
            "results-database is a PostgreSQL URL but psycopg is not installed",
            "pip install 'gov[postgres]' (psycopg 3)",
        ) from None
    label = parts._replace(query="", fragment="").geturl()
    return ResultsDatabase(
        label,
        lambda: psycopg.connect(target, connect_timeout=10, application_name="gov"),
        "%s",
        "postgresql",
    )
