"""Slurm launches that outlive gov: the record each row's folder keeps, and
where a recorded task stands for a restarted run (docs/sweeps.md, 'What
survives a kill').

A job array belongs to slurmctld, so killing gov does not end it. Right
after `sbatch` answers, each row's folder gets `gov-slurm.json` (job id,
array index, launch folder), written atomically; with the ledger's open
launch (`launches`) that is what a restarted run adopts: it follows a
running or ended task instead of submitting the row again. A task still
pending is cancelled (`scancel JOB_INDEX`: nothing of it ran) and the row
is submitted afresh, from the restarted run's checkout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from governance.core.atomic import write_atomically
from governance.sweeps.launch_record import LaunchState, Phase
from governance.sweeps.launcher import JobOutcome, LaunchJob
from governance.sweeps.slurm_client import RUNNING_STATES, array_states, cancel_jobs

RECORD_NAME = "gov-slurm.json"


@dataclass
class Task:
    """What the launcher knows about one array task while following it."""

    index: int
    job: LaunchJob
    status_file: Path
    job_id: str = ""  # the Slurm job (array) this task belongs to
    seen_running: datetime | None = None
    outcome: JobOutcome | None = None
    forced_timeout: bool = False  # the launcher cancelled it for overrunning its timeout
    status_waits: int = 0  # polls spent waiting for the status file to appear
    launch_dir: Path | None = None  # set for a task a dead gov submitted (adopted)


@dataclass(frozen=True, slots=True)
class Submitted:
    job_id: str
    index: int  # the task's array index (its manifest entry)
    launch_dir: Path  # the launch folder: manifest, status files, Slurm's output


def record(folder: Path, submitted: Submitted) -> None:
    data = {"job_id": submitted.job_id, "index": submitted.index}
    data["launch_dir"] = str(submitted.launch_dir)
    write_atomically(folder / RECORD_NAME, json.dumps(data).encode("utf-8"))


def read(folder: Path) -> Submitted | None:
    try:
        data = json.loads((folder / RECORD_NAME).read_text(encoding="utf-8"))
        return Submitted(str(data["job_id"]), int(data["index"]), Path(data["launch_dir"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def recorded_state(folder: Path) -> LaunchState:
    """Where the task recorded in `folder` stands: NEVER when none was
    recorded or it was still pending (then cancelled here), RUNNING while
    Slurm runs it (or cannot be asked), FINISHED once it left the queue (its
    status file, or its absence, tells the launcher how)."""
    submitted = read(folder)
    if submitted is None:
        return LaunchState(Phase.NEVER)
    states = array_states(submitted.job_id)
    if states is None:
        return LaunchState(Phase.RUNNING)
    state = states.get(submitted.index, ("", ""))[0]
    if state == "PENDING":
        cancel_jobs([f"{submitted.job_id}_{submitted.index}"])
        return LaunchState(Phase.NEVER)
    return LaunchState(Phase.RUNNING if state in RUNNING_STATES else Phase.FINISHED)


def task(job: LaunchJob, submitted: Submitted) -> Task:
    """A task a dead gov submitted, followed where it runs."""
    status = submitted.launch_dir / "status" / f"{submitted.index}.json"
    return Task(submitted.index, job, status, submitted.job_id, launch_dir=submitted.launch_dir)
