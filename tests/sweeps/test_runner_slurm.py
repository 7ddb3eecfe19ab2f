"""The runner launcher on the CI Slurm cluster (launch/slurm/local-cluster.sh).

gov adds no allocation: the runner script, modelled on InferenceX's
`runners/launch_mi300x-amds.sh`, allocates with `salloc --no-shell` and runs
the benchmark script through `srun --jobid` (no container). A single-node row
runs in a one-node allocation, a multi-node row's workers reach two nodes,
and an allocation the cluster refuses is exit 2 with salloc's own reason.
Skipped, with the reason, without a cluster of two usable nodes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.core.fingerprint import recipe_fingerprint
from governance.sweeps.slurm_client import slurm_available
from tests.harness import Repo, run_gov
from tests.sweeps.conftest import make_multinode_row, make_row
from tests.sweeps.runner_fixtures import SLURM_RUNNER, runner_repo, write_plan
from tests.sweeps.test_slurm_multinode import usable_nodes

MakeRepo = Callable[..., Repo]

UNAVAILABLE = slurm_available()
if UNAVAILABLE is None and usable_nodes() < 2:
    UNAVAILABLE = f"the cluster has {usable_nodes()} usable node(s), the multi-node row needs 2"
pytestmark = pytest.mark.skipif(
    UNAVAILABLE is not None, reason=f"no multi-node Slurm cluster: {UNAVAILABLE}"
)


@pytest.fixture
def repo(make_repo: MakeRepo) -> Repo:
    return runner_repo(make_repo("slurm-bench"), SLURM_RUNNER)


def jobs_named(name: str) -> list[str]:
    """States of the Slurm jobs called `name` (the runner scripts name them RUNNER_NAME)."""
    out = subprocess.run(
        ["squeue", "--noheader", "--states=all", f"--name={name}", "--format=%T"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.split()


def test_single_and_multi_node_rows_run_in_the_scripts_own_allocations(
    repo: Repo, tmp_path: Path
) -> None:
    plan = write_plan(tmp_path / "plan.json", [make_row()], [make_multinode_row()])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--timeout", "120")
    assert run.exit_code == 0, run.stdout + run.stderr
    out = run_gov("-C", str(repo.path), "runs", "list", "--format", "json")
    runs = {r["conc"]: r for r in json.loads(out.stdout)}
    assert {r["launcher"] for r in runs.values()} == {"runner"} and len(runs) == 2
    single = Path(runs["4"]["result_path"])
    [result] = single.glob("*_testrig_0[01]_recipe-*.json")
    data = json.loads(result.read_text())
    assert data["job"] and data["host"] != "local"  # ran by srun inside the script's allocation
    log = (single / "gov-job.log").read_text()
    assert f"Granted job allocation {data['job']}" in log
    multi = Path(runs["4x8"]["result_path"])
    assert len(list(multi.glob("*_testrig_02_recipe-*_conc*.json"))) == 2
    workers = {
        line.split()[-1]
        for line in (multi / "gov-job.log").read_text().splitlines()
        if line.startswith("worker on ")
    }
    assert len(workers) == 2  # one task on each of the two nodes
    # The scripts' allocations are over (their trap, and gov's scancel).
    for node in ("testrig_00", "testrig_01", "testrig_02"):
        assert set(jobs_named(node)) <= {"COMPLETED", "CANCELLED", "COMPLETING"}


def test_a_refused_allocation_is_exit_2_with_the_scripts_reason(repo: Repo, tmp_path: Path) -> None:
    huge = make_multinode_row()
    huge["prefill"]["num-worker"] = 2  # 2 + 1 nodes; the cluster has 2
    del huge["recipe-fingerprint"]
    huge["recipe-fingerprint"] = recipe_fingerprint(huge)  # the changed recipe's
    plan = write_plan(tmp_path / "plan.json", [], [huge])
    run = run_gov("-C", str(repo.path), "launch", "--plan", str(plan), "--timeout", "120")
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "GOV706 launch-rejected" in run.stderr
    assert "Node count specification invalid" in run.stderr  # salloc's own words
    # The row's detail is the script's log tail. (Like launch_mi300x-amds.sh under
    # `set -e`, the script stops at the empty JOB_ID, before its own ERROR line.)
    assert "exit status 1: salloc: error: Job submit/allocate failed" in run.stdout
    assert "Traceback" not in run.stderr
