"""The run ledger: one SQLite row per launched plan row, and what each
prepared or merged commit's results are made of.

`runs` holds every launch; `run_files` every file a succeeded run left in
its folder, with size and SHA-256 (recorded with the run, in the same
transaction; docs/sweeps.md, 'Results'). `commit_runs` says, for a commit a merge prepared
or landed, which run stands for each of its rows and whether that run was
measured for it or reused from one of the PR's commits (docs/sweeps.md,
'The run ledger').

Several `gov launch` processes may write at once: each batch of outcomes is
one transaction of `core.state.SqliteStore`, so a crash leaves either all of a
batch or none of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from governance.core.diagnostics import UsageError
from governance.core.state import SqliteStore
from governance.sweeps.harness import Harness
from governance.sweeps.identity import RowIdentity
from governance.sweeps.reuse import RunRecord
from governance.sweeps.runfiles import RunFile

# 2: commit_runs. 3: run_files and run_identity (a v2 file gains the tables
# when opened; its runs have neither digests nor identities, so they are no
# reuse sources). 4: publications (`gov results publish`). 5: launches.
SCHEMA_VERSION = 5
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT,              -- NULL for eval rows (they have none)
    job_key     TEXT NOT NULL,     -- <fingerprint[:16]>-conc<N> or eval-<id16>-conc<N>
    conc        TEXT NOT NULL,     -- "64", or "4x8x16" for a multi-node conc list
    commit_sha  TEXT NOT NULL,
    pr          INTEGER,
    launcher    TEXT NOT NULL,
    started_at  TEXT NOT NULL,     -- ISO 8601 UTC
    ended_at    TEXT NOT NULL,
    status      TEXT NOT NULL,     -- succeeded | failed | timed-out | cancelled
    exit_code   INTEGER,
    detail      TEXT NOT NULL DEFAULT '',
    result_path TEXT NOT NULL,
    script      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS runs_fingerprint ON runs (fingerprint, conc);
CREATE INDEX IF NOT EXISTS runs_pr ON runs (pr);
CREATE TABLE IF NOT EXISTS commit_runs (
    commit_sha  TEXT NOT NULL,     -- a prepared merge commit, or the commit it landed as
    job_key     TEXT NOT NULL,
    run_id      INTEGER NOT NULL REFERENCES runs (id),
    origin      TEXT NOT NULL,     -- measured | reused
    pr          INTEGER,
    PRIMARY KEY (commit_sha, job_key)
);
CREATE TABLE IF NOT EXISTS run_files (
    run_id      INTEGER NOT NULL REFERENCES runs (id),
    name        TEXT NOT NULL,     -- relative to the run's result_path, POSIX separators
    size        INTEGER NOT NULL,  -- bytes, or -1: not a regular file (a symlink)
    sha256      TEXT,              -- NULL: not hashed (larger than the cap, or not a file)
    PRIMARY KEY (run_id, name)
);
-- What a run was, as gov computed it at launch (docs/sweeps.md, 'Row identity').
-- Runs recorded before v3 have no row here: they are never reuse sources.
CREATE TABLE IF NOT EXISTS run_identity (
    run_id      INTEGER PRIMARY KEY REFERENCES runs (id),
    recipe      TEXT NOT NULL,     -- the recomputed fingerprint, or an eval row's content id
    identity    TEXT NOT NULL,     -- sha256 of [recipe, conc, harness digest]
    harness_digest TEXT NOT NULL,
    harness     TEXT NOT NULL      -- JSON {path: git blob id} of the files the row ran
);
CREATE INDEX IF NOT EXISTS run_identity_recipe ON run_identity (recipe);
-- Where each landed commit's results were published (docs/results.md, 'Publishing').
CREATE TABLE IF NOT EXISTS publications (
    commit_sha  TEXT NOT NULL,
    target      TEXT NOT NULL,     -- the database's label (never a credential)
    state       TEXT NOT NULL,     -- pending | published | failed
    rows        INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 0,
    detail      TEXT NOT NULL DEFAULT '',
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (commit_sha, target)
);
-- Rows handed to a launcher, open until recorded in `runs` (`sweeps.launches`).
CREATE TABLE IF NOT EXISTS launches (
    result_path TEXT PRIMARY KEY,  -- the row's own folder (its gov-launch.* files)
    token       TEXT NOT NULL,     -- the launch token (runs/<token>/)
    job_key     TEXT NOT NULL,
    identity    TEXT NOT NULL,     -- the row identity's digest ('' untraced: never adopted)
    launcher    TEXT NOT NULL,
    commit_sha  TEXT NOT NULL,
    pr          INTEGER,
    owner       TEXT NOT NULL,     -- '<pid>:<start time>' of the gov waiting on it
    created_at  TEXT NOT NULL,
    run_id      INTEGER REFERENCES runs (id),  -- the run that recorded it
    closed      INTEGER NOT NULL DEFAULT 0     -- 1: recorded, or never started
);
"""
COLUMNS = (  # noqa: SIM905 (the `runs` columns, in order, two lines not fourteen)
    "id fingerprint job_key conc commit_sha pr launcher "
    "started_at ended_at status exit_code detail result_path script"
).split()


@dataclass(frozen=True, slots=True)
class LedgerRun:
    """A full ledger row (what `gov runs` shows)."""

    id: int
    fingerprint: str | None
    job_key: str
    conc: str
    commit_sha: str
    pr: int | None
    launcher: str
    started_at: str
    ended_at: str
    status: str
    exit_code: int | None
    detail: str
    result_path: str
    script: str
    recipe: str | None = None  # None: recorded before identities (ledger v3)
    identity: str | None = None
    harness: dict[str, str] | None = None

    def record(self) -> RunRecord:
        """The slice the pure reuse core needs."""
        return RunRecord(
            self.id,
            self.fingerprint,
            self.conc,
            self.commit_sha,
            self.status,
            self.pr,
            self.result_path,
            self.ended_at,
            recipe=self.recipe,
            harness=self.harness,
        )

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {name: getattr(self, name) for name in COLUMNS}
        out.update(recipe=self.recipe, identity=self.identity, harness=self.harness)
        return out


@dataclass(frozen=True, slots=True)
class NewRun:
    """What a launch records for one finished job (the id is assigned here)."""

    fingerprint: str | None
    job_key: str
    conc: str
    commit_sha: str
    pr: int | None
    launcher: str
    started_at: str
    ended_at: str
    status: str
    exit_code: int | None
    detail: str
    result_path: str
    script: str = ""
    files: tuple[RunFile, ...] = ()  # what a succeeded run left (runfiles.record)
    recipe: str = ""  # empty: no identity recorded (the run is never a reuse source)
    harness: Harness | None = None

    def identity_row(self, run_id: int) -> tuple[object, ...] | None:
        if not self.recipe or self.harness is None:
            return None
        identity = RowIdentity(self.recipe, self.conc, self.harness.digest)
        files = json.dumps(self.harness.as_dict(), sort_keys=True)
        return (run_id, self.recipe, identity.digest, self.harness.digest, files)


@dataclass(frozen=True, slots=True)
class CommitRow:
    """One row of a commit's results: the run that stands for it, and how."""

    job_key: str
    run_id: int
    origin: str  # "measured" (launched for this commit) or "reused" (a PR commit's run)


class Ledger:
    """Open (and create) the ledger at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path

        def error(message: str) -> UsageError:
            return UsageError(
                message,
                "upgrade gov, or move the file away (or point `ledger` in [tool.gov] elsewhere) "
                "to start a fresh ledger",
            )

        self._store = SqliteStore(path, "the run ledger", _SCHEMA, SCHEMA_VERSION, error)

    def close(self) -> None:
        """Nothing to release: every operation uses its own short connection."""

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def add(self, runs: Sequence[NewRun]) -> list[int]:
        """Record a batch of runs and their files in one transaction; returns their ids."""
        names = [n for n in COLUMNS if n != "id"]
        sql = f"INSERT INTO runs ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        ids = []
        with self._store.connect(write=True) as conn:
            for run in runs:
                cursor = conn.execute(sql, [getattr(run, n) for n in names])
                run_id = int(cursor.lastrowid or 0)
                conn.executemany(
                    "INSERT INTO run_files (run_id, name, size, sha256) VALUES (?, ?, ?, ?)",
                    [(run_id, f.name, f.size, f.sha256) for f in run.files],
                )
                ids.append(run_id)
                conn.execute(  # the launch it ends, if `launches` recorded one
                    "UPDATE launches SET run_id = ?, closed = 1 WHERE result_path = ?",
                    (run_id, run.result_path),
                )
                identity = run.identity_row(run_id)
                if identity is not None:
                    conn.execute(
                        "INSERT INTO run_identity (run_id, recipe, identity, harness_digest, "
                        "harness) VALUES (?, ?, ?, ?, ?)",
                        identity,
                    )
        return ids

    def files(self, run_ids: Iterable[int]) -> dict[int, tuple[RunFile, ...]]:
        """The files recorded for each of `run_ids` (a run without any: absent)."""
        wanted = sorted(set(run_ids))
        out: dict[int, list[RunFile]] = {}
        with self._store.connect(write=False) as conn:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                sql = (
                    "SELECT run_id, name, size, sha256 FROM run_files "
                    f"WHERE run_id IN ({', '.join('?' * len(chunk))}) ORDER BY run_id, name"
                )
                for run_id, name, size, sha in conn.execute(sql, chunk):
                    out.setdefault(int(run_id), []).append(RunFile(name, int(size), sha))
        return {run_id: tuple(files) for run_id, files in out.items()}

    def _select(self, where: str = "", args: Iterable[object] = ()) -> list[LedgerRun]:
        names = ", ".join(f"r.{n}" for n in COLUMNS)
        sql = (
            f"SELECT {names}, i.recipe, i.identity, i.harness FROM runs r "
            f"LEFT JOIN run_identity i ON i.run_id = r.id {where} ORDER BY r.id"
        )
        with self._store.connect(write=False) as conn:
            return [_ledger_run(tuple(row)) for row in conn.execute(sql, tuple(args))]

    def runs(self, *, pr: int | None = None) -> list[LedgerRun]:
        if pr is None:
            return self._select()
        return self._select("WHERE r.pr = ?", (pr,))

    def by_fingerprint(self, prefix: str) -> list[LedgerRun]:
        """Runs whose fingerprint starts with `prefix` (hex only)."""
        return self._select("WHERE r.fingerprint LIKE ?", (prefix.lower() + "%",))

    def for_fingerprints(self, fingerprints: Iterable[str]) -> list[LedgerRun]:
        """Runs of any of these recipe fingerprints (what reuse needs)."""
        return [run for run in self.for_recipes(fingerprints) if run.fingerprint]

    def for_recipes(self, recipes: Iterable[str]) -> list[LedgerRun]:
        """Runs of any of these recipes (fingerprints or eval content ids), as
        gov recorded them, or as the plan field named them before identities
        were recorded (what reuse needs to say why it reruns), in chunks."""
        wanted = sorted(set(recipes))
        out: dict[int, LedgerRun] = {}
        for start in range(0, len(wanted), 400):
            chunk = wanted[start : start + 400]
            marks = ", ".join("?" * len(chunk))
            where = f"WHERE i.recipe IN ({marks}) OR r.fingerprint IN ({marks})"
            for run in self._select(where, [*chunk, *chunk]):
                out[run.id] = run
        return sorted(out.values(), key=lambda run: run.id)

    # -- what a commit's results are made of ------------------------------------

    def attribute(self, commit: str, pr: int | None, rows: Sequence[CommitRow]) -> None:
        """Record which run stands for each row of `commit` (replacing what an
        earlier sweep of the same commit recorded), in one transaction."""
        with self._store.connect(write=True) as conn:
            conn.execute("DELETE FROM commit_runs WHERE commit_sha = ?", (commit,))
            conn.executemany(
                "INSERT INTO commit_runs (commit_sha, job_key, run_id, origin, pr) "
                "VALUES (?, ?, ?, ?, ?)",
                [(commit, row.job_key, row.run_id, row.origin, pr) for row in rows],
            )

    def carry(self, prepared: str, merged: str) -> int:
        """The commit a prepared merge landed as stands on the same runs."""
        with self._store.connect(write=True) as conn:
            conn.execute("DELETE FROM commit_runs WHERE commit_sha = ?", (merged,))
            cursor = conn.execute(
                "INSERT INTO commit_runs (commit_sha, job_key, run_id, origin, pr) "
                "SELECT ?, job_key, run_id, origin, pr FROM commit_runs WHERE commit_sha = ?",
                (merged, prepared),
            )
            return cursor.rowcount

    def for_commit(self, commit: str) -> list[tuple[str, LedgerRun]]:
        """(origin, run) per row of `commit`: what `commit_runs` records, else
        the runs launched at it (a plain `gov launch`: all measured)."""
        names = ", ".join(f"r.{n}" for n in COLUMNS)
        sql = (
            f"SELECT c.origin, {names}, i.recipe, i.identity, i.harness FROM commit_runs c "
            "JOIN runs r ON r.id = c.run_id LEFT JOIN run_identity i ON i.run_id = r.id "
            "WHERE c.commit_sha = ? ORDER BY c.job_key"
        )
        with self._store.connect(write=False) as conn:
            rows = [tuple(row) for row in conn.execute(sql, (commit,))]
        if rows:
            return [(str(row[0]), _ledger_run(row[1:])) for row in rows]
        return [("measured", run) for run in self._select("WHERE r.commit_sha = ?", (commit,))]


@dataclass(frozen=True, slots=True)
class Publication:
    """A landed commit's publish state for one results database."""

    commit_sha: str
    target: str
    state: str  # pending | published | failed
    rows: int
    attempts: int
    detail: str
    updated_at: str


class Publications:
    """The `publications` table: a publish is `pending` before the database is
    written and `published` or `failed` after, so a killed publish stays
    pending and `--retry-failed` takes it up again."""

    def __init__(self, ledger: Ledger) -> None:
        self._store = ledger._store

    def mark(self, commit: str, target: str, state: str, at: str, *, rows: int = 0,
             detail: str = "") -> None:  # fmt: skip
        attempt = 1 if state == "pending" else 0
        with self._store.connect(write=True) as conn:
            conn.execute(
                "INSERT INTO publications (commit_sha, target, state, rows, attempts, detail, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (commit_sha, target) DO "
                "UPDATE SET state = excluded.state, rows = excluded.rows, attempts = "
                "publications.attempts + excluded.attempts, detail = excluded.detail, "
                "updated_at = excluded.updated_at",
                (commit, target, state, rows, attempt, detail, at),
            )

    def unfinished(self, target: str) -> list[Publication]:
        """Publishes to `target` that failed or never finished, oldest first."""
        return self._select("target = ? AND state != 'published' ORDER BY updated_at", (target,))

    def of(self, commit: str) -> list[Publication]:
        return self._select("commit_sha = ? ORDER BY target", (commit,))

    def _select(self, where: str, args: tuple[str, ...]) -> list[Publication]:
        columns = ", ".join(f.name for f in fields(Publication))
        with self._store.connect(write=False) as conn:
            found = conn.execute(f"SELECT {columns} FROM publications WHERE {where}", args)
            return [Publication(*tuple(row)) for row in found.fetchall()]


def _ledger_run(row: Sequence[object]) -> LedgerRun:
    """A `runs` row plus its `run_identity` columns (NULL before v3)."""
    plain: tuple[Any, ...] = tuple(row[: len(COLUMNS)])
    recipe, identity, harness = row[len(COLUMNS) :]
    files = json.loads(str(harness)) if harness is not None else None
    return replace(
        LedgerRun(*plain),
        recipe=str(recipe) if recipe is not None else None,
        identity=str(identity) if identity is not None else None,
        harness=files if isinstance(files, dict) else None,
    )
