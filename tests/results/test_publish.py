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
from tests.sweeps.test_cli_sweeps import append_entry


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


def test_compare_reads_mains_side_from_the_configured_database(
    landed: Repo, tmp_path: Path
) -> None:
    """Main's baseline is what was published for main: a row edited in the
    database shows in the comparison; without the setting the ledger is read."""
    target = tmp_path / "results.sqlite3"
    env = {"GOV_RESULTS_DATABASE": str(target)}
    nothing = run_gov(
        "results", "compare", "--pr", "5", "--format", "json", cwd=landed.path, env=env
    )
    assert "nothing published yet" in json.loads(nothing.stdout)["main"]
    assert (
        run_gov("results", "publish", "--commit", "main", cwd=landed.path, env=env).exit_code == 0
    )
    with sqlite3.connect(target) as conn:
        conn.execute("UPDATE results SET tput_per_gpu = 4242.5 WHERE kind = 'throughput'")
    landed.git("checkout", "-q", "-b", "pr6", "main")
    append_entry(landed, "dsr1-fp8-mi300x-sglang")
    plan = run_gov("plan", "--base-ref", "main", "--format", "json", cwd=landed.path)
    (tmp_path / "plan6.json").write_text(plan.stdout)
    ran = run_gov("launch", "--plan", str(tmp_path / "plan6.json"), "--pr", "6", cwd=landed.path)
    assert ran.exit_code == 0, ran.stdout + ran.stderr

    from_db = json.loads(
        run_gov(
            "results", "compare", "--pr", "6", "--format", "json", cwd=landed.path, env=env
        ).stdout
    )
    assert from_db["main"].endswith(f"(results database {target})")
    throughput = [c for c in from_db["comparisons"] if c["pr"]["figures"]["kind"] == "throughput"]
    assert throughput and all(c["main"]["figures"]["tput_per_gpu"] == 4242.5 for c in throughput)
    assert {c["main"]["landed_as"] for c in throughput} == {landed.sha("main")}
    from_ledger = json.loads(
        run_gov("results", "compare", "--pr", "6", "--format", "json", cwd=landed.path).stdout
    )
    assert all(c["main"]["figures"]["tput_per_gpu"] != 4242.5 for c in from_ledger["comparisons"]
               if c["main"])  # fmt: skip


def test_a_version_1_database_is_migrated_in_place(landed: Repo, tmp_path: Path) -> None:
    from governance.results.database import MIGRATIONS, SCHEMA_VERSION

    target = tmp_path / "old.sqlite3"
    with sqlite3.connect(target) as conn:  # what gov's first results schema wrote
        conn.execute("CREATE TABLE gov_schema (version INTEGER NOT NULL)")
        for statement in MIGRATIONS[1]:
            conn.execute(statement)
        conn.execute("INSERT INTO gov_schema (version) VALUES (1)")
    done = run_gov("results", "publish", "--commit", "main", cwd=landed.path,
                   env={"GOV_RESULTS_DATABASE": str(target)})  # fmt: skip
    assert done.exit_code == 0, done.stdout + done.stderr
    with sqlite3.connect(target) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM gov_schema ORDER BY version")]
        keys = [k for (k,) in conn.execute("SELECT config_key FROM results")]
    assert versions == list(range(1, SCHEMA_VERSION + 1)) and SCHEMA_VERSION >= 2
    assert keys and all(json.loads(k) for k in keys)
