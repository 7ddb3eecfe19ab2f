"""Priority and fail-fast on a real Slurm cluster: one array per priority class
with its `--nice` (as `scontrol show job` reports it), and fail-fast
scancelling what waits and what runs. Skipped, with the probe's reason,
without a cluster."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

from governance.sweeps.identity import PlanRow
from governance.sweeps.launcher import JobStatus
from governance.sweeps.schedule import Schedule, run_scheduled
from governance.sweeps.slurm_manifest import sbatch_argv
from tests.sweeps.conftest import make_row
from tests.sweeps.test_slurm import launcher, make_job, needs_cluster, wait_array_gone

OK = "printf '{}' > result.json\n"
BLOCK = 'while [ ! -e "$RESULT_DIR/never" ]; do sleep 0.1; done\n'


def nice_of(job_id: str) -> set[int]:
    shown = subprocess.run(
        ["scontrol", "show", "job", job_id], capture_output=True, text=True, check=True
    ).stdout
    return {int(n) for n in re.findall(r"\bNice=(-?\d+)", shown)}


def test_sbatch_line_carries_nice_only_below_the_top(tmp_path: Path) -> None:
    top = make_job(tmp_path, "top", OK)
    low = replace(make_job(tmp_path, "low", OK), nice=75)
    assert not any(
        a.startswith("--nice")
        for a in sbatch_argv(tmp_path, [top], 1, partition=None, account=None, extra=())
    )
    argv = sbatch_argv(tmp_path, [top, low], 1, partition=None, account=None, extra=(), indices=[1])
    assert "--nice=75" in argv and argv.index("--nice=75") < argv.index("--")


@needs_cluster
def test_each_priority_class_is_an_array_with_its_nice(tmp_path: Path) -> None:
    jobs = [
        make_job(tmp_path, "a", OK),
        replace(make_job(tmp_path, "b", OK), nice=250),
        make_job(tmp_path, "c", OK),
    ]
    slurm = launcher(tmp_path)
    outcomes = slurm.launch(jobs, parallel=2)
    assert [o.status for o in outcomes] == [JobStatus.SUCCEEDED] * 3
    assert len(slurm.job_ids) == 2  # the top class first, then the one below it
    top, below = slurm.job_ids
    assert nice_of(top) == {0} and nice_of(below) == {250}
    assert (
        f"{below}_1"
        in subprocess.run(
            ["squeue", "--noheader", "--states=all", "--array", f"--jobs={below}", "--format=%i"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )  # the row's manifest index, in its own array


@needs_cluster
def test_fail_fast_scancels_the_rest(tmp_path: Path) -> None:
    bodies = [("bad", "exit 4\n"), ("wait1", BLOCK), ("wait2", BLOCK)]
    items = [
        (make_job(tmp_path, key, body), PlanRow("single_node", "1k1k", i, make_row(conc=4 << i)))
        for i, (key, body) in enumerate(bodies)
    ]
    slurm = launcher(tmp_path)
    done = run_scheduled(
        slurm,
        items,
        Schedule(fail_fast=True),
        parallel=1,
        passed=lambda _job, status: status is JobStatus.SUCCEEDED,
    )
    for job_id in slurm.job_ids:
        wait_array_gone(job_id)
    assert [o.status for o in done.outcomes] == [
        JobStatus.FAILED,
        JobStatus.CANCELLED,
        JobStatus.CANCELLED,
    ]
    assert set(done.stopped) == {"wait1", "wait2"}
    assert all(why == "fail-fast: bad failed" for why in done.stopped.values())
    assert done.outcomes[1].detail.startswith("fail-fast: bad failed (")


@needs_cluster
def test_canary_is_a_submission_of_its_own_and_stops_its_recipe(tmp_path: Path) -> None:
    plan = [("good4", "good", OK), ("bad4", "bad", "exit 5\n"), ("good8", "good", OK)]
    plan += [("bad8", "bad", OK)]
    items = [
        (make_job(tmp_path, key, body), PlanRow("single_node", "1k1k", i, make_row(image=image)))
        for i, (key, image, body) in enumerate(plan)
    ]
    slurm = launcher(tmp_path)
    done = run_scheduled(
        slurm,
        items,
        Schedule(canary=True),
        parallel=2,
        passed=lambda _job, status: status is JobStatus.SUCCEEDED,
    )
    assert [(o.job.key, o.status) for o in done.outcomes] == [
        ("good4", JobStatus.SUCCEEDED),
        ("bad4", JobStatus.FAILED),
        ("good8", JobStatus.SUCCEEDED),
        ("bad8", JobStatus.CANCELLED),
    ]
    assert done.stopped == {"bad8": "canary failed: bad4"}
    assert not (tmp_path / "results" / "bad8" / "result.json").exists()  # never submitted
