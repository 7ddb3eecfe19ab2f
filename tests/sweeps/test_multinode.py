"""Multi-node rows: the per-family selection rules, node counts, and a real
local launch of the example repository's multi-node script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.sweeps.identity import PlanRow, RowError
from governance.sweeps.multinode import node_count
from governance.sweeps.naming import ScriptResolver
from tests.harness import Repo, run_gov
from tests.sweeps.conftest import make_multinode_row, plan_of, write_script


def row(section: str = "multi_node", bucket: str = "1k1k", **kw: Any) -> PlanRow:
    return PlanRow(section, bucket, 0, make_multinode_row(**kw))


def cfg(value: str) -> list[str]:
    return [f"CONFIG_FILE={value}"]


def test_mi355x_disagg_runs_its_multi_node_script_fixed_and_agentic(scripts_dir: Path) -> None:
    fixed = write_script(scripts_dir, "multi_node/dsr1_fp8_mi355x_sglang-disagg.sh", "")
    agentic = write_script(scripts_dir, "multi_node/agentic/dsr1_fp8_mi355x_sglang-disagg.sh", "")
    resolver = ScriptResolver(scripts_dir)
    found = resolver.resolve(row(runner="cluster:mi355x-amds"))
    assert (found.script, found.rule, found.kind) == (fixed.resolve(), "mi355x-disagg", "script")
    assert resolver.resolve(row(bucket="agentic")).script == agentic.resolve()


def test_mi355x_without_the_script_names_what_it_tried(scripts_dir: Path) -> None:
    found = ScriptResolver(scripts_dir).resolve(row())
    assert found.script is None
    assert found.tried == ("multi_node/dsr1_fp8_mi355x_sglang-disagg.sh",)
    assert found.reason == "none of the candidate scripts exists (rule mi355x-disagg)"


def test_b200_tilert_has_its_own_script(scripts_dir: Path) -> None:
    script = write_script(scripts_dir, "multi_node/glm5.1_fp8_b200_tilert-disagg.sh", "")
    found = ScriptResolver(scripts_dir).resolve(
        row(runner="b200-multinode", framework="tilert", **{"exp-name": "glm5.1_8k1k"})
    )
    assert (found.script, found.rule) == (script.resolve(), "b200-tilert")


def test_srt_slurm_external_recipe_is_external_not_an_error(scripts_dir: Path) -> None:
    runner = write_script(scripts_dir, "multi_node/srt-slurm.sh", "")
    found = ScriptResolver(scripts_dir).resolve(
        row(runner="b300", framework="dynamo-trt", prefill=cfg("recipes/b300/x.yaml"))
    )
    assert (found.problem, found.kind, found.recipe) == ("", "external", "recipes/b300/x.yaml")
    assert found.script == runner.resolve() and found.recipe_path is None


def test_srt_slurm_repository_recipe_must_exist(scripts_dir: Path) -> None:
    recipe = write_script(scripts_dir, "multi_node/srt-slurm-recipes/a.yaml", "")
    resolver = ScriptResolver(scripts_dir)
    here = resolver.resolve(
        row(
            runner="cluster:gb300-nv", prefill=cfg("benchmarks/multi_node/srt-slurm-recipes/a.yaml")
        )
    )
    assert (here.problem, here.kind, here.recipe_path) == ("", "recipe", recipe.resolve())
    assert here.runner_missing == "multi_node/srt-slurm.sh"  # selected, not launchable here
    gone = resolver.resolve(
        row(
            runner="cluster:gb300-nv", prefill=cfg("benchmarks/multi_node/srt-slurm-recipes/b.yaml")
        )
    )
    assert gone.problem == (
        "CONFIG_FILE benchmarks/multi_node/srt-slurm-recipes/b.yaml: no such recipe in the "
        "repository (rule gb300-srt-slurm)"
    )


def test_srt_slurm_without_config_file_says_so(scripts_dir: Path) -> None:
    found = ScriptResolver(scripts_dir).resolve(row(runner="h200-multinode", framework="vllm"))
    assert found.problem == "no CONFIG_FILE in additional-settings (rule h200-srt-slurm)"


@pytest.mark.parametrize(
    ("value", "code"),
    [("../etc/passwd", "GOV703"), ("/abs.yaml", "GOV703"), ("elsewhere/x.yaml", "")],
)
def test_config_file_outside_both_places_is_refused(
    scripts_dir: Path, value: str, code: str
) -> None:
    found = ScriptResolver(scripts_dir).resolve(row(runner="b200-multinode", prefill=cfg(value)))
    assert found.problem and found.code == code


def test_gb200_llm_d_wrapper_and_its_recipe_folder(scripts_dir: Path) -> None:
    wrapper = write_script(scripts_dir, "multi_node/dsv4_fp4_gb200_llmd-vllm-disagg.sh", "")
    write_script(scripts_dir, "multi_node/llm-d-recipes/low.yaml", "")
    resolver = ScriptResolver(scripts_dir)
    shape = {
        "runner": "gb200",
        "framework": "llmd-vllm",
        "exp-name": "dsv4_8k1k",
        "precision": "fp4",
    }
    found = resolver.resolve(row(prefill=cfg("low.yaml"), **shape))
    assert (found.script, found.rule, found.problem) == (wrapper.resolve(), "gb200-llm-d", "")
    missing = resolver.resolve(row(prefill=cfg("high.yaml"), **shape))
    assert "no such recipe in multi_node/llm-d-recipes/" in missing.problem


def test_gb200_legacy_script_without_config_file_else_recipe(scripts_dir: Path) -> None:
    legacy = write_script(scripts_dir, "multi_node/dsr1_fp8_gb200_dynamo-sglang.sh", "")
    resolver = ScriptResolver(scripts_dir)
    shape = {"runner": "cluster:gb200-nv", "framework": "dynamo-sglang"}
    assert resolver.resolve(row(**shape)).script == legacy.resolve()
    with_recipe = resolver.resolve(row(prefill=cfg("recipes/gb200/x.yaml"), **shape))
    assert (with_recipe.kind, with_recipe.rule) == ("external", "gb200-srt-slurm")


def test_other_hardware_keeps_the_single_node_table_under_multi_node(scripts_dir: Path) -> None:
    script = write_script(scripts_dir, "multi_node/fixed_seq_len/dsr1_fp8_mi300x.sh", "")
    found = ScriptResolver(scripts_dir).resolve(row(runner="mi300x", framework="sglang"))
    assert (found.script, found.rule) == (script.resolve(), "")


def test_node_count_from_workers_settings_and_gpus_per_node() -> None:
    assert node_count(row(), "mi355x") == 2  # 1 x TP8 + 1 x TP8 on 8-GPU nodes
    assert node_count(row(prefill=["PREFILL_NODES=3"], decode=["DECODE_NODES=2"]), "b200") == 5
    assert node_count(row(), "gb200") == 4  # 4 GPUs per tray
    assert node_count(row(prefill=["GPUS_PER_NODE=16"]), "b200") == 2  # ceil(8/16) each
    agg = make_multinode_row()
    agg["decode"]["num-worker"] = 0
    agg["prefill"].update({"num-worker": 3, "tp": 4, "ep": 1})
    assert node_count(PlanRow("multi_node", "1k1k", 0, agg), "b300") == 2  # 12 GPUs
    with pytest.raises(RowError, match="PREFILL_NODES"):
        node_count(row(prefill=["PREFILL_NODES=two"]), "b200")


def test_local_launch_of_the_example_multi_node_script(sweep_repo: Repo, tmp_path: Path) -> None:
    """`gov launch --launcher local` runs the example repository's multi-node
    script (mi355x rule) and its recipe runner (an srt-slurm recipe of the
    repository) on this machine; both leave `<RF>_conc<N>.json` per conc."""
    recipe = "launch/benchmarks/multi_node/srt-slurm-recipes/example-1p1d.yaml"
    rows = [
        make_multinode_row(),
        make_multinode_row(runner="b200-multinode", framework="dynamo-sglang", prefill=cfg(recipe)),
    ]
    document = plan_of([])
    document["multi_node"] = {"1k1k": rows}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(document))
    dry = run_gov("-C", str(sweep_repo.path), "launch", "--plan", str(plan), "--dry-run")
    assert dry.exit_code == 0, dry.stdout + dry.stderr
    assert dry.stdout.splitlines()[0].endswith("-> multi_node/dsr1_fp8_mi355x_sglang-disagg.sh")
    assert f"-> recipe {recipe} (repository) via multi_node/srt-slurm.sh" in dry.stdout
    assert (
        "multi-node rows: 2: 2 resolved (1 script, 1 repository recipe), 0 external" in dry.stdout
    )

    run = run_gov("-C", str(sweep_repo.path), "launch", "--plan", str(plan), "--parallel", "2")
    assert run.exit_code == 0, run.stdout + run.stderr
    listed = json.loads(
        run_gov("-C", str(sweep_repo.path), "runs", "list", "--format", "json").stdout
    )
    assert [r["status"] for r in listed] == ["succeeded", "succeeded"]
    for run_row in listed:
        folder = Path(run_row["result_path"])
        assert folder.name.endswith("-conc4x8") and folder.parent.parent.name == "runs"
        names = sorted(p.name for p in folder.glob("*_conc[0-9]*.json"))
        assert len(names) == 2 and names[0].endswith("_conc4.json"), names
        job_env = json.loads((folder / "gov-row.json").read_text())
        assert job_env["conc"] == [4, 8]
    log = (Path(listed[1]["result_path"]) / "gov-job.log").read_text()
    assert "recipe launch/benchmarks/multi_node/srt-slurm-recipes/example-1p1d.yaml" in log
    assert "prefill_nodes: 1" in log


def test_a_recipe_row_without_the_runner_cannot_launch(scripts_dir: Path, tmp_path: Path) -> None:
    from governance.sweeps.resolve import resolve_rows

    recipe_row = row(runner="b300", framework="dynamo-trt", prefill=cfg("recipes/b300/x.yaml"))
    resolver = ScriptResolver(scripts_dir)
    (dry,) = resolve_rows([recipe_row], resolver, tmp_path, machine="m", build=False)
    assert dry.ok and dry.resolution is not None and dry.resolution.kind == "external"
    (real,) = resolve_rows([recipe_row], resolver, tmp_path, machine="m", build=True)
    assert real.code == "GOV702" and "runs through multi_node/srt-slurm.sh" in real.problem
    write_script(scripts_dir, "multi_node/srt-slurm.sh", "")
    (ready,) = resolve_rows([recipe_row], ScriptResolver(scripts_dir), tmp_path, machine="m")
    assert ready.job is not None and ready.job.nodes == 2
    assert ready.job.env["CONFIG_FILE"] == "recipes/b300/x.yaml"
    assert ready.job.env["GOV_NODES"] == "2" and "GOV_RECIPE_PATH" not in ready.job.env


def test_sbatch_lines_of_a_mixed_launch(tmp_path: Path) -> None:
    """Single-node rows share one array; each multi-node row is its own job."""
    from governance.sweeps.launcher import LaunchJob
    from governance.sweeps.slurm_manifest import array_spec, sbatch_argv

    def job(key: str, nodes: int | None) -> LaunchJob:
        return LaunchJob(key, tmp_path / "s.sh", {}, tmp_path / "r.json", tmp_path, 600, nodes)

    jobs = [job("a", None), job("b", 3), job("c", None), job("d", None)]
    single = sbatch_argv(
        tmp_path, jobs, 2, partition=None, account=None, extra=(), indices=[0, 2, 3]
    )
    assert "--array=0,2-3%2" in single and not any(a.startswith("--nodes") for a in single)
    multi = sbatch_argv(tmp_path, jobs, 2, partition="p", account=None, extra=(), indices=[1])
    assert {"--array=1%1", "--nodes=3", "--ntasks-per-node=1", "--partition=p"} <= set(multi)
    assert f"--job-name=gov-{tmp_path.name}-b" in multi
    assert array_spec([4, 5, 6, 9], 8) == "4-6,9%4"
