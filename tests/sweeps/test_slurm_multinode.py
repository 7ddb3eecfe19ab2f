"""Multi-node rows on the CI Slurm cluster (launch/slurm/local-cluster.sh), through `gov launch`.

The CI cluster runs two node names on one host (one slurmd each), so a row
whose prefill and decode workers need two nodes is a real two-node job: its
script's `srun` starts one task on each node. Skipped, with the reason, when
no cluster answers or it has fewer than two usable nodes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from governance.sweeps.slurm_client import slurm_available
from tests.harness import Repo, run_gov
from tests.sweeps.conftest import make_multinode_row, make_row, plan_of


def usable_nodes() -> int:
    done = subprocess.run(
        [
            "sinfo",
            "--Node",
            "--noheader",
            "--responding",
            "--states=idle,mixed,allocated",
            "--format=%N",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    return len(set(done.stdout.split()))


UNAVAILABLE = slurm_available()
if UNAVAILABLE is None and usable_nodes() < 2:
    UNAVAILABLE = (
        f"the cluster has {usable_nodes()} usable node(s), a multi-node row needs 2 "
        "(launch/slurm/local-cluster.sh starts GOV_SLURM_NODES=2 node names on one host)"
    )
pytestmark = pytest.mark.skipif(
    UNAVAILABLE is not None, reason=f"no multi-node Slurm cluster: {UNAVAILABLE}"
)


def write_plan(
    tmp_path: Path, multi: list[dict[str, object]], single: list[dict[str, object]]
) -> Path:
    document = plan_of(single)
    document["multi_node"] = {"1k1k": multi}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    return path


def states_under(folder: Path) -> list[str]:
    """States of the Slurm jobs whose working directory is inside `folder`."""
    out = subprocess.run(
        ["squeue", "--noheader", "--states=all", "--format=%Z|%T"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    rows = [line.rpartition("|") for line in out.splitlines()]
    return [state for where, _, state in rows if where.startswith(str(folder))]


def test_a_multi_node_row_is_one_job_across_two_nodes(sweep_repo: Repo, tmp_path: Path) -> None:
    plan = write_plan(tmp_path, [make_multinode_row()], [make_row()])
    run = run_gov(
        "-C",
        str(sweep_repo.path),
        "launch",
        "--plan",
        str(plan),
        "--launcher",
        "slurm",
        "--timeout",
        "120",
    )
    assert run.exit_code == 0, run.stdout + run.stderr
    runs = json.loads(
        run_gov("-C", str(sweep_repo.path), "runs", "list", "--format", "json").stdout
    )
    assert {r["launcher"] for r in runs} == {"slurm"} and len(runs) == 2
    multi = Path(next(r["result_path"] for r in runs if r["conc"] == "4x8"))
    nodes = (multi / "nodes.txt").read_text().split()
    assert len(nodes) == 2 and len(set(nodes)) == 2, nodes  # one srun task on each node
    assert len(list(multi.glob("*_conc4.json"))) == 1 and len(list(multi.glob("*_conc8.json"))) == 1
    log = (multi / "gov-job.log").read_text()
    assert "workers on 2 node(s) (asked: 2)" in log
    manifest = next(
        (sweep_repo.path / ".git" / "gov" / "results" / ".slurm").glob("*/manifest.json")
    )
    envs = [task["env"] for task in json.loads(manifest.read_text())["tasks"]]
    multi_env = next(env for env in envs if env.get("IS_MULTINODE") == "true")
    assert multi_env["CONC_LIST"] == "4 8" and multi_env["GOV_NODES"] == "2"
    assert multi_env["PREFILL_TP"] == "8" and multi_env["DECODE_NUM_WORKERS"] == "1"


def test_a_row_larger_than_the_cluster_is_refused_cleanly(sweep_repo: Repo, tmp_path: Path) -> None:
    huge = make_multinode_row(prefill=["PREFILL_NODES=2"])  # 2 + 1 nodes
    plan = write_plan(tmp_path, [huge], [make_row()])
    run = run_gov("-C", str(sweep_repo.path), "launch", "--plan", str(plan), "--launcher", "slurm")
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "GOV706 launch-rejected: sbatch failed (exit 1)" in run.stderr
    assert "Node count specification invalid" in run.stderr
    assert "Traceback" not in run.stderr
    # The single-node array went in first; the refusal cancelled it.
    assert set(states_under(sweep_repo.path)) <= {"CANCELLED"}
    runs = run_gov("-C", str(sweep_repo.path), "runs", "list", "--format", "json")
    assert json.loads(runs.stdout) == []
