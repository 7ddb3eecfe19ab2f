"""The runner launcher end to end without Slurm: `gov launch` runs each row
through `runners/launch_<prefix>.sh` in a workspace checked out from HEAD,
with the job template's environment, and collects the template's files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.sweeps.launcher import default_launcher, launcher_names
from governance.sweeps.runner_launcher import collect, refusal
from tests.harness import Repo, run_gov
from tests.sweeps.conftest import make_multinode_row, make_row
from tests.sweeps.runner_fixtures import FAILING, LOCAL_RUNNER, runner_repo, write_plan

MakeRepo = Callable[..., Repo]


@pytest.fixture
def repo(make_repo: MakeRepo) -> Repo:
    return runner_repo(make_repo("bench"), LOCAL_RUNNER)


def runs(repo: Repo) -> list[dict[str, object]]:
    out = run_gov("-C", str(repo.path), "runs", "list", "--format", "json")
    return list(json.loads(out.stdout))


def test_rows_run_through_the_runner_script_by_default(repo: Repo, tmp_path: Path) -> None:
    assert default_launcher(repo.path) == "runner" and "runner" in launcher_names()
    # The working tree differs from HEAD: the row runs the commit's script.
    repo.write("benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", "exit 9\n")
    row = make_row()
    plan = write_plan(tmp_path / "plan.json", [row, make_row(conc=8)], [])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--parallel", "2")
    assert run.exit_code == 0, run.stdout + run.stderr
    recorded = runs(repo)
    assert {r["launcher"] for r in recorded} == {"runner"} and len(recorded) == 2
    nodes = set()
    for record in recorded:
        folder = Path(str(record["result_path"]))
        [result] = folder.glob("dsr1_1k1k_fp8_sglang_*_recipe-*.json")
        data = json.loads(result.read_text())
        nodes.add(data["runner"])
        assert result.name.endswith(
            f"conc{data['conc']}_{data['runner']}_recipe-{result.name[-21:]}"
        )
        assert data["gpus"] == 8  # GPU_COUNT = TP x PP x PCP
        # the template's collected files, not the rest of the workspace
        assert (folder / "server.log").is_file() and not (folder / "scratch.txt").exists()
        assert str(record["script"]).endswith("runners/launch_testrig.sh")
    assert nodes == {"testrig_00", "testrig_01"}  # the label's nodes take rows in turn
    # workspaces are removed once collected
    assert not any((repo.path / ".git" / "gov" / "results" / ".runner").glob("*/*"))


def test_a_multi_node_row_gets_the_multinode_contract(repo: Repo, tmp_path: Path) -> None:
    plan = write_plan(tmp_path / "plan.json", [], [make_multinode_row()])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--launcher", "runner")
    assert run.exit_code == 0, run.stdout + run.stderr
    [record] = runs(repo)
    folder = Path(str(record["result_path"]))
    names = sorted(p.name for p in folder.glob("*_conc*.json"))
    assert len(names) == 2 and names[0].endswith("_conc4.json"), names
    assert "testrig_02_recipe-" in names[0]


def test_a_recipe_row_runs_through_the_runner_script(repo: Repo, tmp_path: Path) -> None:
    # No recipe runner in the scripts folder: the runner script runs CONFIG_FILE.
    row = make_multinode_row(
        prefill=["CONFIG_FILE=recipes/gb200/dsr1.yaml"], runner="gb200", framework="dynamo-sglang"
    )
    plan = write_plan(tmp_path / "plan.json", [], [row])
    local = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--launcher", "local")
    assert local.exit_code == 1 and "srt-slurm.sh" in local.stdout + local.stderr
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan))
    assert run.exit_code == 0, run.stdout + run.stderr
    [record] = [r for r in runs(repo) if r["launcher"] == "runner"]
    results = sorted(Path(str(record["result_path"])).glob("*_testrig_03_recipe-*_conc*.json"))
    assert [json.loads(p.read_text()) for p in results] == [
        {"recipe": "recipes/gb200/dsr1.yaml"}
    ] * 2


def test_a_failing_runner_script_is_the_rows_failure_with_its_log_tail(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo = runner_repo(make_repo("failing"), LOCAL_RUNNER, single=FAILING)
    plan = write_plan(tmp_path / "plan.json", [make_row()], [])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan))
    assert run.exit_code == 1, run.stdout + run.stderr
    assert "exit status 3: loading model | CUDA error: out of memory" in run.stdout
    [record] = runs(repo)
    assert record["status"] == "failed" and "out of memory" in str(record["detail"])


def test_dry_run_names_runner_node_and_environment(repo: Repo, tmp_path: Path) -> None:
    row = make_row(runner="mi300x")
    plan = write_plan(tmp_path / "plan.json", [row, make_row(runner="mi300x-gone")], [])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--dry-run", "--show-env")
    assert run.exit_code == 1, run.stdout + run.stderr  # mi300x-gone has no node
    assert "[runners/launch_testrig.sh on testrig_00]" in run.stdout
    assert "runner scripts: 2 rows: 1 resolved, 1 unresolvable" in run.stdout
    assert "runner label 'mi300x-gone' is not in configs/runners.yaml" in run.stdout
    assert "3 of 3 labels and 4 of 4 nodes resolve to a runner script" in run.stdout
    env = dict(
        line.split("=", 1) for line in run.stdout.splitlines() if line[:1].isupper() and "=" in line
    )
    assert env["RUNNER_NAME"] == "testrig_00" and env["RUNNER_TYPE"] == "mi300x"
    assert env["RESULT_FILENAME"].endswith(f"_testrig_00_recipe-{row['recipe-fingerprint'][:16]}")
    assert env["RESULT_FILENAME"].startswith(env["RESULT_FILENAME_BASE"])
    assert env["GPU_COUNT"] == "8" and env["RESULT_DIR"] == "/workspace/results"
    assert env["KV_OFFLOADING"] == "''" and "HF_TOKEN" not in env


@pytest.mark.parametrize(
    ("nodes", "problem"),
    [
        ("    - ../evil_00\n", "GOV703"),  # a node name that would leave runners/
        ("    - gone_00\n", "runners/launch_gone.sh does not exist"),
    ],
)
def test_node_names_from_the_runner_file_are_checked(
    make_repo: MakeRepo, tmp_path: Path, nodes: str, problem: str
) -> None:
    repo = runner_repo(make_repo("names"), LOCAL_RUNNER)
    repo.commit("Runner file", **{"configs/runners.yaml": "labels:\n  mi300x:\n" + nodes})
    plan = write_plan(tmp_path / "plan.json", [make_row()], [])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--dry-run")
    assert run.exit_code == 1 and problem in run.stdout, run.stdout + run.stderr


def test_a_symlinked_runner_script_leaving_runners_is_refused(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    repo = runner_repo(make_repo("link"), LOCAL_RUNNER)
    (repo.path / "runners" / "launch_testrig.sh").unlink()
    (repo.path / "runners" / "launch_testrig.sh").symlink_to("../benchmarks/x.sh")
    repo.commit("Link")
    plan = write_plan(tmp_path / "plan.json", [make_row()], [])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--dry-run")
    assert run.exit_code == 1 and "leaves runners/" in run.stdout, run.stdout


def test_an_unknown_launcher_lists_the_registry(repo: Repo, tmp_path: Path) -> None:
    plan = write_plan(tmp_path / "plan.json", [make_row()], [])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--launcher", "k8s")
    assert run.exit_code == 2
    assert "'k8s' is not one of " + ", ".join(map(repr, launcher_names())) in run.stderr


def test_collect_copies_only_regular_files_inside_the_workspace(tmp_path: Path) -> None:
    workspace, results, outside = tmp_path / "ws", tmp_path / "res", tmp_path / "outside"
    (workspace / "results").mkdir(parents=True)
    outside.mkdir()
    results.mkdir()
    (outside / "secret.log").write_text("not the row's")
    (workspace / "RF.json").write_text("{}")
    (workspace / "results" / "server.log").write_text("log")
    (workspace / "results" / "link.log").symlink_to(outside / "secret.log")
    (workspace / "LOGS").symlink_to(outside)  # a folder leaving the workspace
    (results / "gov-row.json").write_text("gov's")
    (workspace / "gov-row.json").write_text("the script's")
    copied = collect(
        workspace, results, ("{RF}.json", "results/*.log", "LOGS/*", "gov-row.json"), "RF"
    )
    assert sorted(copied) == ["RF.json", "results/server.log"]
    assert (results / "gov-row.json").read_text() == "gov's"
    assert not (results / "LOGS").exists()


def test_a_refusal_is_read_from_the_log(tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text("salloc: error: Job submit/allocate failed: Invalid partition name specified\n")
    assert refusal(log) == "Job submit/allocate failed: Invalid partition name specified"
    log.write_text(
        "salloc: Granted job allocation 7\nsrun: error: task 0: Exited with exit code 1\n"
    )
    assert refusal(log) == ""  # granted: the benchmark failed, not the allocation


def test_prepare_merges_sweep_runs_rerun_rows_through_the_runner(repo: Repo) -> None:
    from governance.core.settings import load_settings
    from governance.git.repo import GitRepo
    from governance.merge.sweep_service import sweep_after_merge
    from governance.sweeps.reuse import ReuseMode
    from tests.sweeps.conftest import plan_of

    git_repo = GitRepo(repo.path)
    head = repo.git("rev-parse", "HEAD")
    section = sweep_after_merge(
        git_repo,
        load_settings(git_repo.root),
        plan_of([make_row()]),
        7,
        [head],
        "runner",
        ReuseMode.AUTO,
        False,
        progress=False,
    )
    assert section.ok and section.launch is not None, section.render_text()
    [outcome] = section.launch.outcomes
    assert str(outcome.job.script).endswith("runners/launch_testrig.sh")
    assert [r["launcher"] for r in runs(repo)] == ["runner"]
