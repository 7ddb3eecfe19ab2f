"""`gov launch` and `gov runs` end to end: real repository, real scripts, real SQLite."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from governance.core.diagnostics import UsageError
from governance.sweeps import launcher as launcher_module
from tests.harness import Repo, Result, run_gov
from tests.sweeps.conftest import make_row, plan_of, write_script

ENTRY = """
- config-keys:
    - {key}
  description:
    - "Rerun {key}"
  pr-link: XXX
"""


def gov(repo: Repo, *args: str) -> Result:
    return run_gov("-C", str(repo.path), *args)


def append_entry(repo: Repo, *keys: str) -> str:
    text = (repo.path / "perf-changelog.yaml").read_text()
    for key in keys:
        text += ENTRY.format(key=key)
    repo.write("perf-changelog.yaml", text)
    return repo.commit("Append " + ", ".join(keys))


def plan_file(repo: Repo, base: str, tmp_path: Path) -> Path:
    out = gov(repo, "plan", "--base-ref", base, "--format", "json")
    assert out.exit_code == 0, out.stderr
    path = tmp_path / "plan.json"
    path.write_text(out.stdout)
    return path


def test_dry_run_then_launch_then_runs(sweep_repo: Repo, tmp_path: Path) -> None:
    base = sweep_repo.git("rev-parse", "HEAD")
    head = append_entry(sweep_repo, "dsr1-fp8-mi300x-sglang")
    plan = plan_file(sweep_repo, base, tmp_path)
    dry = gov(sweep_repo, "launch", "--plan", str(plan), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0].startswith("single_node.1k1k[0]  ")
    assert lines[0].endswith("-> single_node/fixed_seq_len/dsr1_fp8_mi300x.sh")
    assert lines[-1].startswith("10 of 10 rows resolve")  # 9 throughput + 1 eval
    assert not (sweep_repo.path / ".git" / "gov" / "results").exists()

    run = gov(sweep_repo, "launch", "--plan", str(plan), "--parallel", "3", "--pr", "42")
    assert run.exit_code == 0, run.stderr
    assert "10/10 done, 0 running, 0 failed" in run.stderr
    listed = json.loads(gov(sweep_repo, "runs", "list", "--pr", "42", "--format", "json").stdout)
    assert len(listed) == 10 and {r["commit_sha"] for r in listed} == {head}
    assert {r["status"] for r in listed} == {"succeeded"} and {r["launcher"] for r in listed} == {
        "local"
    }
    first = listed[0]
    folder = Path(first["result_path"])
    assert folder.parts[-3] == "runs" and folder.name == f"{first['fingerprint'][:16]}-conc4"
    [result] = folder.glob("*_recipe-*.json")
    data = json.loads(result.read_text())
    assert data["max_concurrency"] == 4 and data["recipe_fingerprint"] == first["fingerprint"]
    assert (folder / "gov-job.log").is_file() and (folder / "gov-row.json").is_file()
    assert result.name.startswith(
        "dsr1_1k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false"
    )
    shown = gov(sweep_repo, "runs", "show", first["fingerprint"][:10])
    assert shown.exit_code == 0 and shown.stdout.count("\n") == 5  # concs 4..64 of that recipe
    assert gov(sweep_repo, "runs", "list", "--pr", "7").stdout == ""


def test_only_and_missing_scripts(sweep_repo: Repo, tmp_path: Path) -> None:
    rows = [make_row(conc=4), make_row(conc=4, runner="b300", precision="fp4")]
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_of(rows)))
    dry = gov(sweep_repo, "launch", "--plan", str(plan), "--dry-run")
    assert dry.exit_code == 1
    assert "!! GOV702 none of the candidate scripts exists" in dry.stdout
    assert "tried single_node/fixed_seq_len/dsr1_fp4_b300_sglang.sh" in dry.stdout
    only = rows[0]["recipe-fingerprint"][:12]
    run = gov(sweep_repo, "launch", "--plan", str(plan), "--only", only)
    assert run.exit_code == 0, run.stderr
    bad = gov(sweep_repo, "launch", "--plan", str(plan), "--only", "xyz")
    assert bad.exit_code == 2 and "not a hex fingerprint prefix" in bad.stderr


def test_failures_are_findings(sweep_repo: Repo, tmp_path: Path) -> None:
    folder = sweep_repo.path / "mine"
    write_script(folder, "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", "exit 0\n")  # no result
    sweep_repo.write(".gov.toml", 'scripts = "mine"\n')
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_of([make_row()])))
    run = gov(sweep_repo, "launch", "--plan", str(plan))
    assert run.exit_code == 1
    assert "GOV705" in run.stderr and "exit 0 but no result file" in run.stderr
    listed = json.loads(gov(sweep_repo, "runs", "list", "--format", "json").stdout)
    assert [r["status"] for r in listed] == ["failed"]


@pytest.mark.parametrize(
    ("text", "where"),
    [('{\n  "single_node": {\n    "1k1k": [,]\n  }\n}', ":3:14"), ("[1, 2]", "plan.json: GOV701")],
)
def test_bad_plan_files(sweep_repo: Repo, tmp_path: Path, text: str, where: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(text)
    run = gov(sweep_repo, "launch", "--plan", str(plan), "--dry-run")
    assert run.exit_code == 2 and where in run.stderr and "hint:" in run.stderr
    assert "Traceback" not in run.stderr


def test_launcher_errors(sweep_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_of([make_row()])))
    run = gov(sweep_repo, "launch", "--plan", str(plan), "--launcher", "nope")
    assert run.exit_code == 2 and "'nope' is not one of 'local', 'slurm'" in run.stderr
    monkeypatch.setitem(launcher_module.LAUNCHERS, "gone", "governance.sweeps.not_there:Gone")
    with pytest.raises(UsageError, match="launcher 'gone' is not available"):
        launcher_module.get_launcher("gone")


def test_bad_script_names_setting(sweep_repo: Repo, tmp_path: Path) -> None:
    sweep_repo.write(".gov.toml", '[script-names]\n"*" = ["{modle}.sh"]\n')
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_of([make_row()])))
    run = gov(sweep_repo, "launch", "--plan", str(plan), "--dry-run")
    assert run.exit_code == 2 and "unknown placeholder '{modle}'" in run.stderr


def test_runs_show_unknown(sweep_repo: Repo) -> None:
    assert gov(sweep_repo, "runs", "show", "abc").exit_code == 1
    assert gov(sweep_repo, "runs", "show", "../x").exit_code == 2


def test_launch_on_the_local_slurm_cluster(sweep_repo: Repo, tmp_path: Path) -> None:
    """The same rows through `--launcher slurm`: one job array on the real
    single-node cluster that .ci/run starts; results and ledger as with local."""
    from governance.sweeps.slurm_client import slurm_available

    if (reason := slurm_available()) is not None:
        pytest.skip(f"no Slurm cluster: {reason}")
    base = sweep_repo.git("rev-parse", "HEAD")
    append_entry(sweep_repo, "dsr1-fp8-mi300x-sglang")
    plan = plan_file(sweep_repo, base, tmp_path)
    run = gov(
        sweep_repo,
        "launch",
        "--plan",
        str(plan),
        "--launcher",
        "slurm",
        "--parallel",
        "5",
        "--pr",
        "9",
    )
    assert run.exit_code == 0, run.stdout + run.stderr
    listed = json.loads(gov(sweep_repo, "runs", "list", "--pr", "9", "--format", "json").stdout)
    assert len(listed) == 10 and {r["launcher"] for r in listed} == {"slurm"}
    assert {r["status"] for r in listed} == {"succeeded"}
    folder = Path(listed[0]["result_path"])
    assert list(folder.glob("*_recipe-*.json")) and (folder / "gov-job.log").is_file()
    assert (sweep_repo.path / ".git" / "gov" / "results" / ".slurm").is_dir()


def test_a_cluster_that_refuses_the_job_is_a_usage_error(sweep_repo: Repo, tmp_path: Path) -> None:
    """A rejected sbatch is the user's cluster problem: exit 2 with sbatch's
    own reason and a hint, not "internal error ... report it"."""
    base = sweep_repo.git("rev-parse", "HEAD")
    append_entry(sweep_repo, "dsr1-fp8-mi300x-sglang")
    plan = plan_file(sweep_repo, base, tmp_path)
    tools = tmp_path / "bin"
    tools.mkdir()
    sbatch = tools / "sbatch"
    sbatch.write_text(
        "#!/bin/sh\necho 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n"
    )
    sbatch.chmod(0o755)
    path = f"{tools}:{os.environ['PATH']}"
    out = run_gov(
        "-C", str(sweep_repo.path), "launch", "--plan", str(plan), "--launcher", "slurm",
        env={"PATH": path},
    )  # fmt: skip
    assert out.exit_code == 2, out.stderr
    assert "sbatch failed (exit 1): sbatch: error: invalid partition specified: gpu" in out.stderr
    assert "hint:" in out.stderr and "internal error" not in out.stderr
