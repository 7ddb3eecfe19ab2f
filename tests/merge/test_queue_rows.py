"""A car's sweep rows by decision: the pure count of prepare-merge's sweep
report, and the queue database keeping it (schema v2, opened from a v1 file)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from governance.core.state import StateLayout
from governance.merge.car_rows import RowCounts, rows_by_decision
from governance.merge.queue_store import SCHEMA_VERSION, QueueError, QueueStore


def reused(origin: str) -> dict[str, object]:
    return {"action": "reused", "origin": origin}


def rerun(status: str) -> dict[str, object]:
    return {"action": "rerun", "status": status}


def test_rows_are_counted_by_where_their_result_comes_from() -> None:
    sweep = {
        "rows": [
            reused("pr"), reused("pr"), reused("ahead"),
            rerun("succeeded"), rerun("failed"), rerun("timed-out"), rerun("not launched"),
        ]
    }  # fmt: skip
    counts = rows_by_decision(sweep)
    assert counts == RowCounts(pr=2, ahead=1, run=4, failed=3)
    assert counts.text() == "2 by the PR, 1 by a car ahead, 4 run, 3 of them failed"
    assert counts.to_dict() == {"pr": 2, "ahead": 1, "run": 4, "failed": 3}


def test_a_dry_run_fails_nothing_and_no_sweep_counts_nothing() -> None:
    assert rows_by_decision({"rows": [rerun("dry-run")]}) == RowCounts(run=1)
    assert rows_by_decision({"rows": []}) == RowCounts()
    assert rows_by_decision(None) is None


def test_a_v1_queue_database_gains_the_rows_table(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path / ".git")
    QueueStore(layout).add(7, "high", "2026-08-15T10:00:00")
    # What gov wrote before v2: the same cars, no rows table (nor v3's), user_version 1.
    with sqlite3.connect(layout.queue_db) as conn:
        for table in ("car_rows", "candidates", "parked"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("PRAGMA user_version = 1")
    store = QueueStore(layout)
    car = store.get(7)
    assert car is not None and car.priority == "high" and car.rows is None
    store.record_rows(7, RowCounts(pr=3, ahead=1, run=2, failed=1))
    assert [c.rows for c in store.cars()] == [RowCounts(3, 1, 2, 1)]
    with sqlite3.connect(layout.queue_db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    # Queued again after a refusal: a new car, whose rows are not decided yet.
    store.refused(7, "plan", "sweep: 1 row(s) did not produce a result", "2026-08-15T10:01:00")
    store.add(7, "normal", "2026-08-15T10:02:00")
    again = store.get(7)
    assert again is not None and again.rows is None


def test_a_newer_queue_database_is_refused(tmp_path: Path) -> None:
    layout = StateLayout(tmp_path / ".git")
    QueueStore(layout)
    with sqlite3.connect(layout.queue_db) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(QueueError, match="newer than this gov knows"):
        QueueStore(layout)
