"""The run ledger: real SQLite, transactional batches, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from governance.core.diagnostics import UsageError
from governance.sweeps.ledger import Ledger, NewRun
from tests.sweeps.conftest import fingerprint_of


def new_run(i: int, *, pr: int | None = 1, status: str = "succeeded") -> NewRun:
    fp = fingerprint_of(str(i % 3))
    return NewRun(
        fp,
        f"{fp[:16]}-conc{i}",
        str(i),
        f"{i:040x}",
        pr,
        "local",
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:01+00:00",
        status,
        0,
        "",
        f"/r/{i}",
    )


def test_round_trip_and_queries(tmp_path: Path) -> None:
    with Ledger(tmp_path / "gov" / "runs.sqlite3") as ledger:
        ids = ledger.add([new_run(1), new_run(2, pr=None), new_run(4, status="failed")])
        assert ids == [1, 2, 3]
        assert [r.id for r in ledger.runs(pr=1)] == [1, 3]
        fp = fingerprint_of("1")
        assert [r.conc for r in ledger.by_fingerprint(fp[:8])] == ["1", "4"]
        assert [r.id for r in ledger.for_fingerprints([fp, fingerprint_of("2")])] == [1, 2, 3]
        record = ledger.runs()[2].record()
        assert (record.run_id, record.status, record.conc) == (3, "failed", "4")


def test_a_failed_batch_leaves_nothing(tmp_path: Path) -> None:
    with Ledger(tmp_path / "runs.sqlite3") as ledger:
        bad = new_run(2)
        object.__setattr__(bad, "job_key", None)  # NOT NULL violation mid-batch
        with pytest.raises(sqlite3.IntegrityError):
            ledger.add([new_run(1), bad])
        assert ledger.runs() == []


def _writer(path: str, start: int) -> None:
    with Ledger(Path(path)) as ledger:
        for i in range(start, start + 25):
            ledger.add([new_run(i), new_run(i + 1000)])


def test_concurrent_writers_do_not_corrupt_it(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    Ledger(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), n * 100)) for n in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    with Ledger(path) as ledger:
        runs = ledger.runs()
    assert len(runs) == 4 * 25 * 2
    assert len({r.id for r in runs}) == len(runs)
    check = sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0]
    assert check == "ok"


def test_not_a_database_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    path.write_text("this is not sqlite, " * 100)
    with pytest.raises(UsageError, match="cannot open the run ledger"):
        Ledger(path)
