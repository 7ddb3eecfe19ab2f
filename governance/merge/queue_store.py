"""The merge queue's database: `queue.sqlite3` under `.git/gov/` (where:
`core.state.StateLayout.queue_db`; transactions and versioning:
`core.state.SqliteStore`).

One row per car (a PR number, at most one car per PR) and one settings row
holding the queue-level `paused` flag. States:

    queued -> running -> landed | refused        (gov queue run)
    queued -> removed                            (gov queue remove)
    refused | removed -> queued                  (gov queue add again)

A car left `running` by a killed run is resumed first by the next run. A car
asked for on GitHub also has a `github` row: the PR head it was asked at, who
asked, and gov's status comment on the PR (`merge.queue_github`).
Schema v2 adds `car_rows`: the last attempt's sweep rows by decision (a v1
file gains the table when a newer gov opens it). Schema v3 adds, for
`gov queue run --ahead N`, `candidates` (every candidate built for a car:
the commit, the base it was merged onto and whose candidate that base was,
the ref under `refs/gov/queue/` keeping it, '' once released) and `parked`
(a waiting car held behind the car it conflicts with).
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Literal

from governance.core.diagnostics import GovError, UsageError
from governance.core.state import SqliteStore, StateLayout
from governance.merge.car_rows import RowCounts

SCHEMA_VERSION = 3

Priority = Literal["high", "normal", "low"]
CarState = Literal["queued", "running", "landed", "refused", "removed"]
PRIORITIES: tuple[Priority, ...] = ("high", "normal", "low")  # the order cars run in
ACTIVE: tuple[CarState, ...] = ("queued", "running")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cars (
    pr INTEGER PRIMARY KEY,
    priority TEXT NOT NULL CHECK (priority IN ('high', 'normal', 'low')),
    seq INTEGER NOT NULL,              -- enqueue order: ties of enqueued_at broken by it
    enqueued_at TEXT NOT NULL,
    state TEXT NOT NULL
        CHECK (state IN ('queued', 'running', 'landed', 'refused', 'removed')),
    landed_commit TEXT NOT NULL DEFAULT '',
    prepared TEXT NOT NULL DEFAULT '',  -- the commit prepare-merge checked (its tree landed)
    refused_step TEXT NOT NULL DEFAULT '',
    refused_reason TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS queue (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    paused INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO queue (id, paused) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS github (
    pr INTEGER PRIMARY KEY,            -- a car queued on GitHub (queue_github)
    head_sha TEXT NOT NULL DEFAULT '', -- the PR head when enqueued (dequeue-on-push)
    asked_by TEXT NOT NULL DEFAULT '', -- who asked, and how: "@user (label gov-queue)"
    note TEXT NOT NULL DEFAULT '',     -- why the car was dequeued or its request not heard
    comment_id INTEGER NOT NULL DEFAULT 0  -- gov's status comment on the PR
);
CREATE TABLE IF NOT EXISTS car_rows (
    pr INTEGER PRIMARY KEY,            -- a car's last sweep (v2)
    by_pr INTEGER NOT NULL,            -- reused: measured by the PR itself
    ahead INTEGER NOT NULL,            -- reused: measured by a car ahead
    run INTEGER NOT NULL,              -- launched by the car
    failed INTEGER NOT NULL            -- of those, no result
);
CREATE TABLE IF NOT EXISTS candidates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- build order (v3)
    pr INTEGER NOT NULL,
    sha TEXT NOT NULL,                 -- the candidate commit (its tree is what lands)
    tree TEXT NOT NULL,
    head TEXT NOT NULL,                -- the PR head it was built from
    base TEXT NOT NULL,                -- the commit it was merged onto
    base_pr INTEGER NOT NULL,          -- whose candidate that base is (0: main's tip)
    ref TEXT NOT NULL DEFAULT ''       -- the ref keeping it ('' once released)
);
CREATE TABLE IF NOT EXISTS parked (
    pr INTEGER PRIMARY KEY,            -- a waiting car held back (v3)
    blocked_by INTEGER NOT NULL        -- the car ahead it conflicts with
)
"""
_SELECT = (
    "SELECT cars.*, r.by_pr, r.ahead, r.run, r.failed, p.blocked_by,"
    " c.sha AS candidate, c.base_pr AS candidate_on FROM cars"
    " LEFT JOIN car_rows r USING (pr) LEFT JOIN parked p USING (pr)"
    " LEFT JOIN (SELECT id AS cid, sha, base_pr FROM candidates) c ON c.cid ="
    " (SELECT MAX(id) FROM candidates h WHERE h.pr = cars.pr AND h.ref != '')"
)

_ORDER = "CASE priority WHEN 'high' THEN 0 WHEN 'normal' THEN 1 ELSE 2 END, enqueued_at, seq"


def when(text: str) -> datetime | None:
    """A queue or GitHub timestamp (ISO 8601) as UTC (a time without a zone is
    taken as UTC); None when it is not one."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class QueueError(GovError):
    """The queue database cannot be read or written (exit 2)."""


@dataclass(frozen=True, slots=True)
class Car:
    pr: int
    priority: Priority
    enqueued_at: str
    state: CarState
    attempts: int
    updated_at: str
    landed_commit: str = ""
    prepared: str = ""
    refused_step: str = ""
    refused_reason: str = ""
    rows: RowCounts | None = None  # the last attempt's sweep rows by decision (None: no sweep)
    blocked_by: int = 0  # parked behind this car (0: not parked)
    candidate: str = ""  # the candidate commit held for it (--ahead)
    candidate_on: int = 0  # whose candidate that one was built on (0: main's tip)

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        step, reason = data.pop("refused_step"), data.pop("refused_reason")
        data["refusal"] = {"step": step, "reason": reason} if self.state == "refused" else None
        data["rows"] = self.rows.to_dict() if self.rows is not None else None
        data["blocked_by"] = self.blocked_by or None
        on = data.pop("candidate_on")
        data["candidate"] = {"commit": self.candidate, "on": on or None} if self.candidate else None
        return data


@dataclass(frozen=True, slots=True)
class GitHubCar:
    """What the queue keeps of a car asked for on GitHub."""

    pr: int
    head_sha: str = ""
    asked_by: str = ""
    note: str = ""
    comment_id: int = 0


def _car(row: sqlite3.Row) -> Car:
    return Car(
        pr=row["pr"],
        priority=row["priority"],
        enqueued_at=row["enqueued_at"],
        state=row["state"],
        attempts=row["attempts"],
        updated_at=row["updated_at"],
        landed_commit=row["landed_commit"],
        prepared=row["prepared"],
        refused_step=row["refused_step"],
        refused_reason=row["refused_reason"],
        rows=None
        if row["by_pr"] is None
        else RowCounts(row["by_pr"], row["ahead"], row["run"], row["failed"]),
        blocked_by=row["blocked_by"] or 0,
        candidate=row["candidate"] or "",
        candidate_on=row["candidate_on"] or 0,
    )


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate built for a car (`gov queue run --ahead N`)."""

    pr: int
    sha: str
    tree: str
    head: str
    base: str
    base_pr: int  # 0: main's tip
    ref: str = ""  # '' once released


class QueueStore:
    """The cars and the paused flag; every method is one transaction."""

    def __init__(self, layout: StateLayout) -> None:
        path = layout.queue_db

        def error(message: str) -> QueueError:
            return QueueError(
                message, f"the queue database is {path}; upgrade gov, or delete it to start empty"
            )

        self.db = SqliteStore(path, "the queue database", _SCHEMA, SCHEMA_VERSION, error)

    def get(self, pr: int) -> Car | None:
        with self.db.connect(write=False) as conn:
            row = conn.execute(f"{_SELECT} WHERE pr = ?", (pr,)).fetchone()
        return _car(row) if row is not None else None

    def cars(self, states: tuple[CarState, ...] | None = None) -> list[Car]:
        """Cars in run order (priority, then enqueue time); `states` filters."""
        query = _SELECT
        args: tuple[str, ...] = ()
        if states:
            query += f" WHERE state IN ({', '.join('?' * len(states))})"
            args = states
        with self.db.connect(write=False) as conn:
            rows = conn.execute(f"{query} ORDER BY {_ORDER}", args).fetchall()
        return [_car(row) for row in rows]

    def add(self, pr: int, priority: Priority, now: str) -> Car:
        """Enqueue PR `pr` (again, if it was refused or removed)."""
        with self.db.connect(write=True) as conn:
            row = conn.execute("SELECT state FROM cars WHERE pr = ?", (pr,)).fetchone()
            if row is not None and row["state"] in ACTIVE:
                raise UsageError(
                    f"PR #{pr} is already in the queue ({row['state']})",
                    "gov queue status lists the cars; gov queue remove --pr N takes one out",
                )
            if row is not None and row["state"] == "landed":
                raise UsageError(f"PR #{pr} already landed through the queue", "nothing to do")
            seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM cars").fetchone()[0]
            conn.execute("DELETE FROM car_rows WHERE pr = ?", (pr,))  # a new car, no sweep yet
            conn.execute("DELETE FROM parked WHERE pr = ?", (pr,))
            # A new car: its old builds go, but for any whose ref is still recorded.
            conn.execute("DELETE FROM candidates WHERE pr = ? AND ref = ''", (pr,))
            conn.execute(
                "INSERT OR REPLACE INTO cars (pr, priority, seq, enqueued_at, state, attempts,"
                " updated_at) VALUES (?, ?, ?, ?, 'queued', 0, ?)",
                (pr, priority, seq, now, now),
            )
        car = self.get(pr)
        assert car is not None
        return car

    def remove(self, pr: int, now: str) -> Car:
        with self.db.connect(write=True) as conn:
            row = conn.execute("SELECT state FROM cars WHERE pr = ?", (pr,)).fetchone()
            if row is None or row["state"] not in ACTIVE:
                raise UsageError(
                    f"PR #{pr} is not in the queue"
                    + (f" (it is {row['state']})" if row is not None else ""),
                    "gov queue status lists the queued cars",
                )
            if row["state"] == "running":
                raise UsageError(
                    f"PR #{pr} is being landed (running)",
                    "let `gov queue run` finish it (it resumes a killed run), then remove it",
                )
            conn.execute(
                "UPDATE cars SET state = 'removed', updated_at = ? WHERE pr = ?", (now, pr)
            )
            conn.execute("DELETE FROM parked WHERE pr = ?", (pr,))
        car = self.get(pr)
        assert car is not None
        return car

    def start(self, pr: int, now: str) -> None:
        """The car is being landed: `running`, one more attempt."""
        with self.db.connect(write=True) as conn:
            conn.execute(
                "UPDATE cars SET state = 'running', attempts = attempts + 1, updated_at = ?"
                " WHERE pr = ?",
                (now, pr),
            )

    def requeue(self, pr: int, now: str) -> None:
        """Back to `queued` (an interrupted or busy car), keeping its place."""
        with self.db.connect(write=True) as conn:
            conn.execute("UPDATE cars SET state = 'queued', updated_at = ? WHERE pr = ?", (now, pr))

    def landed(self, pr: int, commit: str, prepared: str, now: str) -> None:
        with self.db.connect(write=True) as conn:
            conn.execute(
                "UPDATE cars SET state = 'landed', landed_commit = ?, prepared = ?,"
                " refused_step = '', refused_reason = '', updated_at = ? WHERE pr = ?",
                (commit, prepared, now, pr),
            )
            conn.execute("DELETE FROM parked WHERE pr = ?", (pr,))

    def refused(self, pr: int, step: str, reason: str, now: str) -> None:
        with self.db.connect(write=True) as conn:
            conn.execute(
                "UPDATE cars SET state = 'refused', refused_step = ?, refused_reason = ?,"
                " updated_at = ? WHERE pr = ?",
                (step, reason, now, pr),
            )
            conn.execute("DELETE FROM parked WHERE pr = ?", (pr,))

    def github(self, pr: int) -> GitHubCar:
        with self.db.connect(write=False) as conn:
            row = conn.execute("SELECT * FROM github WHERE pr = ?", (pr,)).fetchone()
        return GitHubCar(**dict(row)) if row is not None else GitHubCar(pr)

    def set_github(self, car: GitHubCar) -> None:
        with self.db.connect(write=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO github (pr, head_sha, asked_by, note, comment_id)"
                " VALUES (?, ?, ?, ?, ?)",
                (car.pr, car.head_sha, car.asked_by, car.note, car.comment_id),
            )

    def record_rows(self, pr: int, rows: RowCounts) -> None:
        """What the car's sweep decided per row (its last attempt's)."""
        with self.db.connect(write=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO car_rows (pr, by_pr, ahead, run, failed)"
                " VALUES (?, ?, ?, ?, ?)",
                (pr, rows.pr, rows.ahead, rows.run, rows.failed),
            )

    @property
    def paused(self) -> bool:
        with self.db.connect(write=False) as conn:
            return bool(conn.execute("SELECT paused FROM queue WHERE id = 1").fetchone()[0])

    def set_paused(self, paused: bool) -> None:
        with self.db.connect(write=True) as conn:
            conn.execute("UPDATE queue SET paused = ? WHERE id = 1", (int(paused),))

    # -- speculation (`gov queue run --ahead N`) ---------------------------------

    def add_candidate(self, candidate: Candidate) -> None:
        """Record a candidate and the ref that will keep it, before the ref exists:
        every `refs/gov/queue/*` ref gov makes is one the database records."""
        with self.db.connect(write=True) as conn:
            conn.execute(
                "INSERT INTO candidates (pr, sha, tree, head, base, base_pr, ref)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (candidate.pr, candidate.sha, candidate.tree, candidate.head, candidate.base,
                 candidate.base_pr, candidate.ref),
            )  # fmt: skip

    def candidates(self, pr: int | None = None, *, held: bool = False) -> list[Candidate]:
        """Candidates in build order: one car's (`pr`), or every car's; `held`: only
        those whose ref is still recorded (not released)."""
        where, args = [], []
        if pr is not None:
            where.append("pr = ?")
            args.append(pr)
        if held:
            where.append("ref != ''")
        query = "SELECT pr, sha, tree, head, base, base_pr, ref FROM candidates"
        query += f" WHERE {' AND '.join(where)}" if where else ""
        with self.db.connect(write=False) as conn:
            rows = conn.execute(f"{query} ORDER BY id", args).fetchall()
        return [Candidate(**dict(row)) for row in rows]

    def release_candidates(self, pr: int) -> None:
        """The car's candidates hold no ref any more (the caller deleted them)."""
        with self.db.connect(write=True) as conn:
            conn.execute("UPDATE candidates SET ref = '' WHERE pr = ?", (pr,))

    def park(self, pr: int, blocked_by: int) -> None:
        with self.db.connect(write=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO parked (pr, blocked_by) VALUES (?, ?)", (pr, blocked_by)
            )

    def unpark(self, pr: int) -> None:
        with self.db.connect(write=True) as conn:
            conn.execute("DELETE FROM parked WHERE pr = ?", (pr,))

    def unpark_behind(self, blocker: int) -> None:
        """The cars parked behind `blocker` (done now) are retried."""
        with self.db.connect(write=True) as conn:
            conn.execute("DELETE FROM parked WHERE blocked_by = ?", (blocker,))
