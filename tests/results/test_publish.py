"""`gov results publish` to the default SQLite results database: whole commits,
each row once, and what a refusal or a killed process leaves."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from governance.git.repo import GitRepo
from governance.sweeps.ledger import Ledger, Publications
from tests.harness import Repo, run_gov, run_process
from tests.results.conftest import LANDED_PR, gov_exe, land_with_sweep, ledger_rows


def database(repo: Repo) -> Path:
    return repo.path / ".git" / "gov" / "results.sqlite3"


def published(repo: Repo) -> list[dict[str, object]]:
    with sqlite3.connect(database(repo)) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute("SELECT * FROM results ORDER BY job_key")]


def states(repo: Repo) -> list[str]:
    with Ledger(GitRepo(repo.path).git_dir / "gov" / "runs.sqlite3") as ledger:
        return [p.state for p in Publications(ledger).of(repo.sha("main"))]


def test_a_landed_commit_is_published_row_for_row_and_only_once(landed: Repo) -> None:
    expected = ledger_rows(landed)
    first = run_gov("results", "publish", "--commit", "main", "--format", "json", cwd=landed.path)
    assert first.exit_code == 0, first.stdout + first.stderr
    outcome = json.loads(first.stdout)[0]
    assert outcome["ok"] and outcome["rows"] == outcome["inserted"] == len(expected) > 0
    rows = published(landed)
    assert {r["job_key"]: r["result_sha256"] for r in rows} == expected
    assert {r["commit_sha"] for r in rows} == {landed.sha("main")}
    assert {r["origin"] for r in rows} == {"measured"} and {r["pr"] for r in rows} == {LANDED_PR}
    assert all(r["tput_per_gpu"] and r["tput_per_gpu"] > 0 for r in rows if r["kind"] != "eval")
    assert len({r["row_identity"] for r in rows}) == len(rows)
    again = run_gov("results", "publish", "--commit", "main", cwd=landed.path)
    assert again.exit_code == 0 and f"{len(expected)} row(s), 0 new" in again.stdout
    assert published(landed) == rows and states(landed) == ["published"]


def test_a_commit_that_did_not_land_is_refused(landed: Repo) -> None:
    done = run_gov("results", "publish", "--commit", "pr", cwd=landed.path)
    assert done.exit_code == 2 and "only landed commits are published" in done.stderr
    assert not database(landed).exists()


def test_a_result_file_altered_after_its_run_publishes_nothing(landed: Repo) -> None:
    rows = ledger_rows(landed)
    results = landed.path / ".git" / "gov" / "results"
    victim = next(p for p in sorted(results.rglob("*.json")) if p.name != "gov-row.json")
    original = victim.read_bytes()
    victim.write_bytes(original.replace(b"1", b"9", 1))
    done = run_gov("results", "publish", "--commit", "main", cwd=landed.path)
    assert done.exit_code == 1, done.stdout + done.stderr
    assert "NOT published" in done.stdout and "refused: run" in done.stdout
    assert not database(landed).exists() or published(landed) == []
    assert states(landed) == ["failed"]
    victim.write_bytes(original)  # the run's own bytes again
    retried = run_gov("results", "publish", "--retry-failed", cwd=landed.path)
    assert retried.exit_code == 0, retried.stdout + retried.stderr
    assert len(published(landed)) == len(rows) and states(landed) == ["published"]


@pytest.mark.parametrize("step", ["publish-pending", "publish-inserted", "publish-committed"])
def test_a_publish_killed_anywhere_is_finished_by_retry_failed(landed: Repo, step: str) -> None:
    rows = ledger_rows(landed)
    killed = run_process(
        [gov_exe(), "results", "publish", "--commit", "main"],
        cwd=landed.path,
        env={"GOV_TEST_CRASH_AFTER": step},
    )
    assert killed.exit_code == -9, killed.stdout + killed.stderr
    written = published(landed) if database(landed).exists() else []
    assert len(written) == (len(rows) if step == "publish-committed" else 0)
    assert states(landed) == ["pending"]  # the ledger does not claim what it cannot know
    retried = run_gov("results", "publish", "--retry-failed", "--format", "json", cwd=landed.path)
    assert retried.exit_code == 0, retried.stdout + retried.stderr
    assert [item["ok"] for item in json.loads(retried.stdout)] == [True]
    assert sorted(r["job_key"] for r in published(landed)) == sorted(rows)  # each exactly once
    assert states(landed) == ["published"]
    nothing = run_gov("results", "publish", "--retry-failed", cwd=landed.path)
    assert nothing.exit_code == 0 and "nothing to retry" in nothing.stdout


def test_publish_needs_a_commit_or_retry_and_a_url_without_a_password(landed: Repo) -> None:
    neither = run_gov("results", "publish", cwd=landed.path)
    assert neither.exit_code == 2 and "--commit SHA" in neither.stderr
    secret = "hunter2-not-printed"
    url = f"postgresql://gov:{secret}@127.0.0.1:1/results"
    refused = run_gov(
        "results", "publish", "--commit", "main", cwd=landed.path,
        env={"GOV_RESULTS_DATABASE": url},
    )  # fmt: skip
    assert refused.exit_code == 2 and "carries a password" in refused.stderr
    assert secret not in refused.stdout + refused.stderr


def test_publish_on_merge_publishes_what_lands_and_a_failure_waits_for_retry(
    sweep_repo: Repo, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the database's folder should be\n")
    out = land_with_sweep(
        sweep_repo,
        env={"GOV_PUBLISH_ON_MERGE": "true", "GOV_RESULTS_DATABASE": str(blocked / "r.sqlite3")},
    )
    assert "squash-merged as" in out and "not published to " in out, out
    assert "gov results publish --retry-failed" in out
    assert states(sweep_repo) == ["failed"]  # landed all the same; the publish waits
    env = {"GOV_RESULTS_DATABASE": str(blocked / "r.sqlite3")}
    still = run_gov("results", "publish", "--retry-failed", cwd=sweep_repo.path, env=env)
    assert still.exit_code == 2 and "cannot create" in still.stdout + still.stderr
    blocked.unlink()  # the operator fixes the cause
    retried = run_gov("results", "publish", "--retry-failed", cwd=sweep_repo.path, env=env)
    assert retried.exit_code == 0, retried.stdout + retried.stderr
    with sqlite3.connect(blocked / "r.sqlite3") as conn:
        keys = {row[0] for row in conn.execute("SELECT job_key FROM results")}
    assert keys == set(ledger_rows(sweep_repo)) and states(sweep_repo) == ["published"]


def test_publish_on_merge_to_the_default_database(sweep_repo: Repo) -> None:
    out = land_with_sweep(sweep_repo, env={"GOV_PUBLISH_ON_MERGE": "true"})
    rows = ledger_rows(sweep_repo)
    assert f"published {len(rows)} row(s) to " in out, out
    assert {r["job_key"] for r in published(sweep_repo)} == set(rows)
    assert states(sweep_repo) == ["published"]
