"""`gov launch --canary / --fail-fast` as a process on the example repository,
with the default priority rules: the MTP config's script fails, the plain one
works."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from tests.harness import Repo, start_process
from tests.sweeps.conftest import make_row, plan_of, write_script
from tests.sweeps.test_cli_sweeps import append_entry, gov, plan_file

MTP_SCRIPT = "launch/benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi300x_mtp.sh"


def throughput_plan(repo: Repo, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """vLLM then vLLM-MTP rows (evals left out: they are never canaries)."""
    write_script(repo.path, MTP_SCRIPT, "echo 'engine crashed' >&2\nexit 3\n")
    repo.commit("Break the MTP script")
    base = repo.git("rev-parse", "HEAD")
    append_entry(repo, "dsv4-fp8-mi300x-vllm", "dsv4-fp8-mi300x-vllm-mtp")
    path = plan_file(repo, base, tmp_path)
    document = json.loads(path.read_text())
    for section in ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals"):
        document[section] = []
    path.write_text(json.dumps(document))
    rows = [row for bucket in document["single_node"].values() for row in bucket]
    return path, rows


def runs(repo: Repo) -> list[dict[str, Any]]:
    listed = gov(repo, "runs", "list", "--format", "json")
    assert listed.exit_code == 0, listed.stderr
    return json.loads(listed.stdout)


def test_canary_stops_the_failing_recipe_only(sweep_repo: Repo, tmp_path: Path) -> None:
    plan, rows = throughput_plan(sweep_repo, tmp_path)
    mtp = {r["recipe-fingerprint"] for r in rows if r["spec-decoding"] == "mtp"}
    plain = {r["recipe-fingerprint"] for r in rows if r["spec-decoding"] != "mtp"}
    assert mtp and plain and len(rows) > len(mtp) + len(plain)  # recipes with several rows
    run = gov(sweep_repo, "launch", "--plan", str(plan), "--canary", "--parallel", "2")
    assert run.exit_code == 1, run.stderr
    recorded = runs(sweep_repo)
    assert len(recorded) == len(rows)  # every row recorded, the stopped ones too
    by_status: dict[str, list[dict[str, Any]]] = {}
    for r in recorded:
        by_status.setdefault(r["status"], []).append(r)
    assert {r["fingerprint"] for r in by_status["succeeded"]} == plain
    assert len(by_status["succeeded"]) == sum(r["recipe-fingerprint"] in plain for r in rows)
    canaries = {r["fingerprint"]: r["job_key"] for r in by_status["failed"]}
    assert set(canaries) == mtp and len(by_status["failed"]) == len(mtp)  # one per recipe
    for r in by_status["cancelled"]:
        assert r["detail"] == f"canary failed: {canaries[r['fingerprint']]}"
        assert f"{r['job_key']} cancelled: canary failed: " in run.stderr  # GOV705 says so
    assert len(by_status) == 3 and "gov: interrupted" not in run.stderr


def test_fail_fast_with_default_priority(sweep_repo: Repo, tmp_path: Path) -> None:
    plan, rows = throughput_plan(sweep_repo, tmp_path)
    # The plan lists the plain config first; the default rules put MTP (3.0:
    # spec-decoding) before it (2.25), so the first row launched fails.
    assert rows[0]["spec-decoding"] == "none"
    run = gov(sweep_repo, "launch", "--plan", str(plan), "--fail-fast")
    assert run.exit_code == 1, run.stderr
    recorded = runs(sweep_repo)
    [failed] = [r for r in recorded if r["status"] == "failed"]
    mtp = {r["recipe-fingerprint"] for r in rows if r["spec-decoding"] == "mtp"}
    assert failed["fingerprint"] in mtp
    others = [r for r in recorded if r is not failed]
    assert len(others) == len(rows) - 1
    assert {r["status"] for r in others} == {"cancelled"}
    assert {r["detail"] for r in others} == {f"fail-fast: {failed['job_key']} failed (not started)"}


def test_dry_run_shows_the_priority_classes(sweep_repo: Repo, tmp_path: Path) -> None:
    plan, rows = throughput_plan(sweep_repo, tmp_path)
    dry = gov(sweep_repo, "launch", "--plan", str(plan), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    mtp = sum(r["spec-decoding"] == "mtp" for r in rows)
    classes = [line for line in dry.stdout.splitlines() if line.startswith("priority ")]
    assert classes == [
        f"priority 3: {mtp} row(s) (dsv4-fp8-mi300x-vllm-mtp)",
        f"priority 2.25: {len(rows) - mtp} row(s) (dsv4-fp8-mi300x-vllm)",
    ]
    # the patchwork label pins every row to 0; the settings can replace the rules
    patch = gov(sweep_repo, "launch", "--plan", str(plan), "--dry-run", "--label", "engine-patch")
    assert [line for line in patch.stdout.splitlines() if line.startswith("priority ")] == [
        f"priority 0: {len(rows)} row(s) (dsv4-fp8-mi300x-vllm, dsv4-fp8-mi300x-vllm-mtp)"
    ]
    sweep_repo.write(".gov.toml", 'scripts = "launch/benchmarks"\npriority = []\n')
    flat = gov(sweep_repo, "launch", "--plan", str(plan), "--dry-run")
    assert [line for line in flat.stdout.splitlines() if line.startswith("priority ")] == [
        f"priority 0: {len(rows)} row(s) (dsv4-fp8-mi300x-vllm, dsv4-fp8-mi300x-vllm-mtp)"
    ]


def test_ctrl_c_with_canary_and_fail_fast_is_still_an_interrupt(
    sweep_repo: Repo, tmp_path: Path, gov_exe: str
) -> None:
    folder = sweep_repo.path / "slow"
    write_script(
        folder,
        "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh",
        'sleep 60 &\necho $! > "$RESULT_DIR/child.pid"\nwait\n',
    )
    sweep_repo.write(".gov.toml", 'scripts = "slow"\n')
    plan = tmp_path / "plan.json"
    rows = [make_row(conc=c) for c in (4, 8)] + [make_row(conc=4, image="other")]
    plan.write_text(json.dumps(plan_of(rows)))
    argv = ["launch", "--plan", str(plan), "--parallel", "2", "--canary", "--fail-fast"]
    process = start_process([gov_exe, "-C", str(sweep_repo.path), *argv])
    results = sweep_repo.path / ".git" / "gov" / "results"
    deadline = time.monotonic() + 20
    while len(list(results.glob("runs/*/*/child.pid"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(list(results.glob("runs/*/*/child.pid"))) == 2  # the two canaries run
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    details = sorted(r["detail"] for r in runs(sweep_repo))
    assert details == ["interrupted", "interrupted", "not started (interrupted)"]
