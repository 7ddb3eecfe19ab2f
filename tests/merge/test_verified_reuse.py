"""prepare-merge reuses only results whose files are still what the PR's sweep
left: a deleted or edited result file reruns its row, with the reason."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness import Repo
from tests.merge.test_sweep_step import PR, prepare, runs, swept  # noqa: F401 (fixture)
from tests.sweeps.test_cli_sweeps import gov


def _reusable(repo: Repo) -> dict:
    """A run of the PR's sweep that prepare-merge would reuse (a dsr1 row)."""
    code, report = prepare(repo, "--dry-run")
    assert code == 0, report["status"]
    reused = [r for r in report["sweep"]["rows"] if r["action"] == "reused"]
    assert reused
    by_id = {r["id"]: r for r in runs(repo)}
    return by_id[reused[0]["run_id"]]


def _result_file(run: dict) -> Path:
    [path] = Path(run["result_path"]).glob("*_recipe-*.json")
    return path


def _row_of(report: dict, run: dict) -> dict:
    [row] = [r for r in report["sweep"]["rows"] if r["key"] == run["job_key"]]
    return row


def test_deleted_result_files_rerun_the_row(swept: Repo) -> None:  # noqa: F811
    run = _reusable(swept)
    _result_file(run).unlink()
    code, report = prepare(swept, "--no-push")
    assert code == 0, report["status"]
    row = _row_of(report, run)
    assert row["action"] == "rerun" and row["reason"] == "result files unverifiable"
    assert row["detail"].startswith(f"run {run['id']}: result files missing: ")
    assert row["status"] == "succeeded" and row["run_id"] != run["id"]
    # The prepared commit's record stands on the new run, and every row verifies.
    listed = gov(swept, "runs", "list", "--commit", report["prepared"], "--format", "json")
    assert listed.exit_code == 0, listed.stderr
    record = {r["job_key"]: r for r in json.loads(listed.stdout)}
    assert record[run["job_key"]]["origin"] == "measured"
    assert record[run["job_key"]]["id"] == row["run_id"]
    assert all(r["verified"] and r["evidence"] == "" for r in record.values())


def test_an_edited_result_file_reruns_the_row_and_compare_says_unverifiable(
    swept: Repo,  # noqa: F811
) -> None:
    run = _reusable(swept)
    path = _result_file(run)
    data = json.loads(path.read_text())
    data["total_token_throughput"] *= 10  # a better number than was measured
    path.write_text(json.dumps(data))
    compared = gov(swept, "results", "compare", "--pr", str(PR), "--format", "json")
    assert compared.exit_code == 0, compared.stderr
    out = json.loads(compared.stdout)
    assert (
        f"run {run['id']} {run['job_key']}: unverifiable (result file altered: {path.name})"
        in (out["unverifiable"])
    )
    assert run["id"] not in {c["pr"]["run"] for c in out["comparisons"]}
    text = gov(swept, "results", "compare", "--pr", str(PR)).stdout
    assert f"unverifiable (result file altered: {path.name})" in text
    code, report = prepare(swept, "--no-push")
    assert code == 0, report["status"]
    row = _row_of(report, run)
    assert row["action"] == "rerun" and row["reason"] == "result files unverifiable"
    assert row["detail"] == f"run {run['id']}: result file altered: {path.name}"
    assert row["status"] == "succeeded"
    # The commit the PR head's run stands for (a plain launch: measured) says so too.
    listed = gov(swept, "runs", "list", "--commit", run["commit_sha"])
    assert listed.exit_code == 1
    assert f"unverifiable (result file altered: {path.name})" in listed.stdout
    assert "1 unverifiable" in listed.stdout.splitlines()[-1]
    assert f"have unverifiable results: {run['job_key']}" in listed.stderr
