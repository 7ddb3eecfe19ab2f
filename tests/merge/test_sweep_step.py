"""prepare-merge's sweep step through the real CLI: the PR sweeps its head,
main moves, and `gov prepare-merge` reuses what still matches, launches the
rest from the merged tree's scripts, and never pushes ahead of a failed row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.core.settings import Settings
from governance.git.repo import GitRepo
from governance.matrix.sources import plan_between
from tests.harness import Repo
from tests.sweeps.test_cli_sweeps import append_entry, gov

PR = 5
AMD = "configs/amd-master.yaml"
MTP_SCRIPT = "launch/benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi300x_mtp.sh"


@pytest.fixture
def swept(sweep_repo: Repo, tmp_path: Path) -> Repo:
    """PR 5 appends two configs and sweeps its head; then main bumps the MTP
    config's image (so those rows' fingerprints change)."""
    repo = sweep_repo
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "pr")
    head = append_entry(repo, "dsr1-fp8-mi300x-sglang", "dsv4-fp8-mi300x-vllm-mtp")
    assert gov(repo, "pr", "open", "--number", str(PR), "--branch", "pr").exit_code == 0
    plan = tmp_path / "head.json"
    plan.write_text(
        json.dumps(
            plan_between(GitRepo(repo.path), base, head, layout=Settings().layout()).document
        )
    )
    ran = gov(repo, "launch", "--plan", str(plan), "--parallel", "3", "--pr", str(PR))
    assert ran.exit_code == 0, ran.stderr
    repo.git("checkout", "-q", "main")
    configs = (repo.path / AMD).read_text()
    before, _, mtp = configs.partition("dsv4-fp8-mi300x-vllm-mtp:")
    repo.write(AMD, before + "dsv4-fp8-mi300x-vllm-mtp:" + mtp.replace("v0.11.2", "v0.12.0", 1))
    repo.commit("Bump the MTP image")
    return repo


def prepare(repo: Repo, *flags: str, sweep: bool = True) -> tuple[int, dict]:
    asked = ("--sweep",) if sweep else ()
    result = gov(repo, "prepare-merge", "--pr", str(PR), "--format", "json", *asked, *flags)
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout)


def runs(repo: Repo) -> list[dict]:
    listed = gov(repo, "runs", "list", "--pr", str(PR), "--format", "json")
    return json.loads(listed.stdout)


def test_without_sweep_asked_it_plans_and_reports_and_launches_nothing(swept: Repo) -> None:
    """The scripts folder exists, as in every InferenceX clone: still nothing
    runs on the maintainer's machine unless asked, and the report says how."""
    before = runs(swept)
    text = gov(swept, "prepare-merge", "--pr", str(PR), "--no-push")
    assert text.exit_code == 0, text.stdout + text.stderr
    assert "not swept here (pass --sweep, or set sweep-on-merge = true" in text.stdout
    assert "post-merge plan:" in text.stdout
    assert runs(swept) == before


def test_the_sweep_on_merge_setting_asks_for_the_sweep(swept: Repo) -> None:
    settings = '[tool.gov]\nscripts = "launch/benchmarks"\nsweep-on-merge = true\n'
    swept.write("pyproject.toml", settings)
    swept.commit("Sweep at merge time")
    code, report = prepare(swept, "--no-push", sweep=False)
    assert code == 0, report["status"]
    assert report["sweep"] and any(r["action"] == "rerun" for r in report["sweep"]["rows"])


def test_reuses_unchanged_recipes_and_reruns_what_main_changed(swept: Repo) -> None:
    before = runs(swept)
    code, report = prepare(swept)
    assert code == 0, report["status"]
    sweep = report["sweep"]
    reused = [r for r in sweep["rows"] if r["action"] == "reused"]
    rerun = [r for r in sweep["rows"] if r["action"] == "rerun"]
    assert reused and rerun
    previous = {r["fingerprint"] for r in before}
    # Reused rows come from the PR's own runs; the MTP throughput rows run again
    # because main's image bump changed their fingerprint.
    assert all(r["fingerprint"] in previous for r in reused)
    changed = [r for r in rerun if r["reason"] == "recipe changed by main"]
    assert changed and all(r["fingerprint"] not in previous for r in changed)
    assert all(r["status"] == "succeeded" for r in rerun)
    after = runs(swept)
    assert len(after) == len(before) + len(rerun)
    assert {r["commit_sha"] for r in after[len(before) :]} == {report["prepared"]}
    assert report["merge_commit"] and swept.git("worktree", "list").count("\n") == 0


def test_reuse_only_refuses_and_leaves_everything_as_it_was(swept: Repo) -> None:
    pr_head = swept.git("rev-parse", "pr")
    before = runs(swept)
    code, report = prepare(swept, "--reuse-only")
    assert code == 1 and report["failed_step"] == "plan"
    codes = {v["code"] for step in report["steps"] for v in step.get("violations", [])}
    assert codes == {"GOV704"}
    assert swept.git("rev-parse", "pr") == pr_head and runs(swept) == before
    assert swept.git("for-each-ref", "refs/gov") == ""


def test_dry_run_launches_nothing(swept: Repo) -> None:
    before = runs(swept)
    code, report = prepare(swept, "--dry-run")
    assert code == 0, report["status"]
    assert report["sweep"]["dry_run"] and report["sweep"]["rerun"] > 0
    assert runs(swept) == before
    assert swept.git("worktree", "list").count("\n") == 0


def test_a_failing_row_stops_the_merge_before_push(swept: Repo) -> None:
    # The scripts come from the merged tree: main's broken MTP script is the one that runs.
    swept.write(MTP_SCRIPT, "#!/bin/sh\necho 'GPU on fire' >&2\nexit 3\n")
    swept.commit("Break the MTP script")
    pr_head = swept.git("rev-parse", "pr")
    code, report = prepare(swept)
    assert code == 1 and report["failed_step"] == "plan"
    codes = {v["code"] for step in report["steps"] for v in step.get("violations", [])}
    assert codes == {"GOV705"}
    # Each finding is located at the script the row ran, as the merged tree holds it.
    found = [v for step in report["steps"] for v in step.get("violations", [])]
    assert {v["path"] for v in found} == {MTP_SCRIPT}
    assert all(": failed (exit 3); plan row single_node." in v["message"] for v in found), found
    assert swept.git("rev-parse", "pr") == pr_head  # not pushed, not merged
    failed = [r for r in runs(swept) if r["status"] == "failed"]
    assert failed and all(r["exit_code"] == 3 for r in failed)
    # After the script is fixed, a rerun reuses what succeeded and merges.
    swept.write(MTP_SCRIPT, (Path(__file__).parents[2] / MTP_SCRIPT).read_text())
    swept.commit("Fix the MTP script")
    code, report = prepare(swept)
    assert code == 0, report["status"]


def test_canary_at_merge_stops_the_failing_recipe_and_says_why(swept: Repo) -> None:
    swept.write(MTP_SCRIPT, "#!/bin/sh\necho 'GPU on fire' >&2\nexit 3\n")
    swept.commit("Break the MTP script")
    code, report = prepare(swept, "--canary", "--parallel", "2")
    assert code == 1 and report["failed_step"] == "plan"
    rerun = [r for r in report["sweep"]["rows"] if r["action"] == "rerun"]
    mtp = [r for r in rerun if r["reason"] == "recipe changed by main"]
    failed = [r for r in mtp if r["status"] == "failed"]
    assert len(failed) == len({r["fingerprint"] for r in mtp})  # one canary per recipe
    canary = {r["fingerprint"]: r["key"] for r in failed}
    stopped = [r for r in mtp if r["status"] == "cancelled"]
    assert stopped and len(stopped) + len(failed) == len(mtp)
    assert all(r["stopped"] == f"canary failed: {canary[r['fingerprint']]}" for r in stopped)
    messages = [v["message"] for step in report["steps"] for v in step.get("violations", [])]
    assert any(f"{stopped[0]['key']}: cancelled (canary failed: " in m for m in messages)
    recorded = {r["job_key"]: r for r in runs(swept)}
    assert recorded[stopped[0]["key"]]["detail"].startswith("canary failed: ")
