"""A run's own files: recorded when it ends, verified before anything reads
them; and a v2 ledger, migrated, whose runs are no reuse sources."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from governance.core.settings import Settings, load_settings
from governance.git.repo import GitRepo
from governance.matrix.sources import plan_between
from governance.merge.sweep_service import sweep_after_merge
from governance.sweeps import runfiles
from governance.sweeps.ledger import SCHEMA_VERSION, Ledger, NewRun
from governance.sweeps.reuse import Reason, ReuseMode
from governance.sweeps.runfiles import (
    MAX_HASHED_BYTES,
    NO_DIGESTS,
    RunFile,
    launch_folder,
    record,
    verify,
)
from tests.harness import Repo
from tests.sweeps.test_cli_sweeps import append_entry

# The ledger schema as gov wrote it at version 2 (before run_files).
V2_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT,
    job_key     TEXT NOT NULL,
    conc        TEXT NOT NULL,
    commit_sha  TEXT NOT NULL,
    pr          INTEGER,
    launcher    TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT NOT NULL,
    status      TEXT NOT NULL,
    exit_code   INTEGER,
    detail      TEXT NOT NULL DEFAULT '',
    result_path TEXT NOT NULL,
    script      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS runs_fingerprint ON runs (fingerprint, conc);
CREATE INDEX IF NOT EXISTS runs_pr ON runs (pr);
CREATE TABLE IF NOT EXISTS commit_runs (
    commit_sha  TEXT NOT NULL,
    job_key     TEXT NOT NULL,
    run_id      INTEGER NOT NULL REFERENCES runs (id),
    origin      TEXT NOT NULL,
    pr          INTEGER,
    PRIMARY KEY (commit_sha, job_key)
);
PRAGMA user_version = 2;
"""


def a_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "gov-row.json").write_text('{"conc": 4}\n')
    (folder / "gov-job.log").write_text("ran\n")
    (folder / "dsr1_conc4.json").write_text('{"total_token_throughput": 8000}\n')
    (folder / "sub").mkdir()
    (folder / "sub" / "trace.txt").write_text("t\n")
    return folder


def test_a_launch_folder_is_new_each_time(tmp_path: Path) -> None:
    first, second = launch_folder(tmp_path), launch_folder(tmp_path)
    assert first != second and first.parent == second.parent == tmp_path / "runs"


def test_every_file_is_recorded_and_verifies_until_touched(tmp_path: Path) -> None:
    folder = a_run(tmp_path / "run")
    files = record(folder)
    assert [f.name for f in files] == [
        "dsr1_conc4.json",
        "gov-job.log",
        "gov-row.json",
        "sub/trace.txt",
    ]
    assert all(f.sha256 and len(f.sha256) == 64 for f in files)
    assert verify(folder, files) == ""
    (folder / "added-later.json").write_text("{}")  # not recorded: not read, not judged
    assert verify(folder, files) == ""
    (folder / "dsr1_conc4.json").write_text('{"total_token_throughput": 9000}\n')  # same size
    assert verify(folder, files) == "result file altered: dsr1_conc4.json"
    (folder / "dsr1_conc4.json").unlink()
    (folder / "gov-job.log").unlink()
    assert verify(folder, files) == "result files missing: dsr1_conc4.json, gov-job.log"
    assert verify(folder, ()) == NO_DIGESTS


def test_a_symlink_counts_as_altered(tmp_path: Path) -> None:
    folder = a_run(tmp_path / "run")
    files = record(folder)
    other = a_run(tmp_path / "other-pr")  # the same bytes, somewhere else
    (folder / "dsr1_conc4.json").unlink()
    (folder / "dsr1_conc4.json").symlink_to(other / "dsr1_conc4.json")
    assert verify(folder, files) == "result file altered: dsr1_conc4.json (a symlink)"
    # A symlink the script itself left is recorded unhashed and never verifies.
    (folder / "link.json").symlink_to(other / "gov-row.json")
    again = record(other)
    linked = [*record(folder)]
    assert RunFile("link.json", runfiles.NOT_REGULAR, None) in linked
    assert verify(other, again) == ""
    assert "result file altered" in verify(folder, [f for f in linked if f.name == "link.json"])


def test_a_file_over_the_cap_is_not_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runfiles, "MAX_HASHED_BYTES", 1024)
    folder = a_run(tmp_path / "run")
    (folder / "big.json").write_bytes(b" " * 4096)
    files = {f.name: f for f in runfiles.record(folder)}
    assert files["big.json"] == RunFile("big.json", 4096, None)
    assert verify(folder, tuple(files.values())) == "result file too large: big.json"
    assert MAX_HASHED_BYTES == 16 * 1024 * 1024


def test_files_are_recorded_with_the_run_in_one_transaction(tmp_path: Path) -> None:
    folder = a_run(tmp_path / "run")
    files = record(folder)
    run = NewRun(
        "f" * 64,
        "ffff-conc4",
        "4",
        "a" * 40,
        1,
        "local",
        "t0",
        "t1",
        "succeeded",
        0,
        "",
        str(folder),
        files=files,
    )
    with Ledger(tmp_path / "runs.sqlite3") as ledger:
        (run_id,) = ledger.add([run])
        assert ledger.files([run_id]) == {run_id: files}
        bad = replace(run, job_key="ffff-conc8", conc="8", files=(files[0], files[0]))
        with pytest.raises(sqlite3.IntegrityError):  # a duplicate name mid-batch
            ledger.add([run, bad])
        assert [r.id for r in ledger.runs()] == [run_id]
        (stored,) = ledger.runs()
        assert runfiles.evidence(ledger, [stored]) == {run_id: ""}


def test_a_v2_ledger_is_migrated_and_its_runs_are_no_reuse_sources(
    sweep_repo: Repo, tmp_path: Path
) -> None:
    repo = sweep_repo
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "pr")
    head = append_entry(repo, "dsr1-fp8-mi300x-sglang")
    plan = plan_between(GitRepo(repo.path), base, head, layout=Settings().layout()).document
    rows = [row for bucket in plan["single_node"].values() for row in bucket]
    # A ledger written by gov at v2: every point ran at the PR head, its files are there.
    path = repo.path / ".git" / "gov" / "runs.sqlite3"
    path.parent.mkdir(parents=True)
    old = sqlite3.connect(path)
    old.executescript(V2_SCHEMA)
    for row in rows:
        fp = row["recipe-fingerprint"]
        folder = a_run(tmp_path / "results" / fp[:16] / f"conc{row['conc']}")
        old.execute(
            "INSERT INTO runs (fingerprint, job_key, conc, commit_sha, pr, launcher, started_at,"
            " ended_at, status, exit_code, result_path) VALUES (?, ?, ?, ?, 5, 'local', 't0',"
            " 't1', 'succeeded', 0, ?)",
            (fp, f"{fp[:16]}-conc{row['conc']}", str(row["conc"]), head, str(folder)),
        )
    old.commit()
    old.close()

    git = GitRepo(repo.path)
    section = sweep_after_merge(
        git,
        load_settings(git.root),
        plan,
        5,
        [head],
        "local",
        ReuseMode.AUTO,
        dry_run=True,
        progress=False,
    )
    throughput = [d for d in section.decision.rows if d.row.fingerprint]
    assert len(throughput) == len(rows) > 0 and not section.decision.reused
    assert {d.reason for d in throughput} == {Reason.RESULTS_UNVERIFIABLE}
    assert all(d.detail.endswith(NO_DIGESTS) for d in throughput)
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    tables = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "run_files" in tables
    assert check.execute("SELECT count(*) FROM runs").fetchone()[0] == len(rows)
    check.close()
    assert json.loads(json.dumps(section.to_dict()))["reused"] == 0
