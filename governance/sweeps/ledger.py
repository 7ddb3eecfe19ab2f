"""The run ledger: one SQLite row per launched plan row.

Several `gov launch` processes may write at once: each batch of outcomes is
one transaction of `core.state.SqliteStore`, so a crash leaves either all of a
batch or none of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from governance.core.diagnostics import UsageError
from governance.core.state import SqliteStore
from governance.sweeps.reuse import RunRecord

SCHEMA_VERSION = 1
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
"""
COLUMNS = [
    "id",
    "fingerprint",
    "job_key",
    "conc",
    "commit_sha",
    "pr",
    "launcher",
    "started_at",
    "ended_at",
    "status",
    "exit_code",
    "detail",
    "result_path",
    "script",
]


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
        )

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in COLUMNS}


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
        """Record a batch of runs in one transaction; returns their ids."""
        names = [n for n in COLUMNS if n != "id"]
        sql = f"INSERT INTO runs ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
        ids = []
        with self._store.connect(write=True) as conn:
            for run in runs:
                cursor = conn.execute(sql, [getattr(run, n) for n in names])
                ids.append(int(cursor.lastrowid or 0))
        return ids

    def _select(self, where: str = "", args: Iterable[object] = ()) -> list[LedgerRun]:
        sql = f"SELECT {', '.join(COLUMNS)} FROM runs {where} ORDER BY id"
        with self._store.connect(write=False) as conn:
            return [LedgerRun(*row) for row in conn.execute(sql, tuple(args))]

    def runs(self, *, pr: int | None = None) -> list[LedgerRun]:
        if pr is None:
            return self._select()
        return self._select("WHERE pr = ?", (pr,))

    def by_fingerprint(self, prefix: str) -> list[LedgerRun]:
        """Runs whose fingerprint starts with `prefix` (hex only)."""
        return self._select("WHERE fingerprint LIKE ?", (prefix.lower() + "%",))

    def for_fingerprints(self, fingerprints: Iterable[str]) -> list[LedgerRun]:
        """Runs of any of these recipes (what reuse needs), in chunks."""
        wanted = sorted(set(fingerprints))
        out: list[LedgerRun] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            out.extend(self._select(f"WHERE fingerprint IN ({marks})", chunk))
        return sorted(out, key=lambda run: run.id)
