"""The launch folder of one Slurm launch and the `sbatch` call that submits it.

The folder (under the launcher's `work_dir`, visible from the compute nodes)
holds `manifest.json` (per task: argv, environment, cwd = result folder, row
JSON, log and status file paths, timeout), a copy of the array-task wrapper
(package data) and, later, the status files and Slurm's per-task output.
Values travel as data: the sbatch command line is an argv list. Secrets
(`launcher.SECRET_ENV`, e.g. HF_TOKEN) are never written: the manifest (mode
0600) names them, and the wrapper takes their values from the job's
environment, which sbatch exports from gov's (`--export=ALL`); the folder is
kept for diagnosis and holds no secret.
"""

from __future__ import annotations

import json
import math
import os
import uuid
from collections.abc import Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path

from governance.sweeps.launcher import (
    LOG_NAME,
    SECRET_ENV,
    LaunchJob,
    inherited_env,
    script_argv,
)

# The array-task wrapper ships as package data (copied into each launch folder).
WRAPPER = Path(str(resources.files("governance.resources") / "slurm" / "array-task.py"))
# Seconds added to a row's timeout before Slurm's --time and the launcher's own
# check step in: the wrapper needs its SIGTERM→SIGKILL grace and some start-up.
SLURM_TIME_MARGIN = 60.0


def time_limit_minutes(jobs: Sequence[LaunchJob]) -> int:
    """The array's --time: the largest row timeout plus the margin, in minutes."""
    longest = max(job.timeout_seconds for job in jobs) + SLURM_TIME_MARGIN
    return max(1, math.ceil(longest / 60))


def new_launch_dir(work_dir: Path, now: datetime) -> Path:
    """A fresh, uniquely named launch folder with its `status/` subfolder."""
    launch_id = f"{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
    launch_dir = (work_dir / launch_id).resolve()
    (launch_dir / "status").mkdir(parents=True)
    return launch_dir


def write_manifest(
    launch_dir: Path, tasks: Sequence[tuple[LaunchJob, Path]], kill_grace_seconds: float
) -> None:
    """`manifest.json`: one entry per (job, status file), in array-index order;
    each job's result folder is created on the way."""
    entries = []
    secrets = sorted(name for name in SECRET_ENV if name in os.environ)
    for job, status_file in tasks:
        job.result_dir.mkdir(parents=True, exist_ok=True)
        entries.append(
            {
                "key": job.key,
                "script": str(job.script),
                "argv": script_argv(job.script),
                "env": {
                    **inherited_env(os.environ, secrets=False),
                    **{k: v for k, v in job.env.items() if k not in SECRET_ENV},
                },
                "secrets": secrets,
                "cwd": str(job.result_dir),
                "row_json": str(job.row_json),
                "log": str(job.result_dir / LOG_NAME),
                "status": str(status_file),
                "timeout_seconds": job.timeout_seconds,
                "kill_grace_seconds": kill_grace_seconds,
            }
        )
    manifest = {"version": 1, "launch_id": launch_dir.name, "tasks": entries}
    path = launch_dir / "manifest.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(manifest, indent=2))


def copy_wrapper(launch_dir: Path, wrapper: Path, python: str | None) -> None:
    """A copy of the wrapper goes into the launch folder: the launch stays
    reproducible, and its first line can name the compute nodes' python."""
    source = wrapper.read_text(encoding="utf-8")
    if python:
        if any(ch.isspace() for ch in python):
            raise ValueError(f"python path must not contain whitespace: {python!r}")
        source = f"#!{python}\n" + source.split("\n", 1)[1]
    target = launch_dir / "array-task.py"
    target.write_text(source, encoding="utf-8")
    target.chmod(0o755)


def array_spec(indices: Sequence[int], parallel: int) -> str:
    """`0-3,7,9-10%<parallel>`: the manifest indices a submission runs."""
    ordered = sorted(indices)
    ranges: list[list[int]] = []
    for index in ordered:
        if ranges and index == ranges[-1][1] + 1:
            ranges[-1][1] = index
        else:
            ranges.append([index, index])
    text = ",".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges)
    return f"{text}%{max(1, min(parallel, len(ordered)))}"


def sbatch_argv(
    launch_dir: Path,
    jobs: Sequence[LaunchJob],
    parallel: int,
    *,
    partition: str | None,
    account: str | None,
    extra: Sequence[str],
    indices: Sequence[int] | None = None,
) -> list[str]:
    """One `sbatch` of the wrapper over manifest entries `indices` (default:
    all `jobs`), at most `parallel` at once. A multi-node row is submitted
    alone (`indices` = its entry): `--nodes` = the nodes it needs, one task
    per node; its script starts on the first node and reaches the others
    with `srun`."""
    indices = list(range(len(jobs))) if indices is None else list(indices)
    # '%' starts a filename pattern in --output; the folder name must stay literal.
    out_dir = str(launch_dir).replace("%", "%%")
    nodes = [n for i in indices if (n := jobs[i].nodes) is not None]
    name = f"gov-{launch_dir.name}"
    if nodes:
        name += f"-{jobs[indices[0]].key}"
    argv = [
        "sbatch",
        "--parsable",
        f"--array={array_spec(indices, parallel)}",
        f"--time={time_limit_minutes([jobs[i] for i in indices])}",
        f"--job-name={name}",
        f"--output={out_dir}/slurm-%A_%a.out",
        f"--chdir={launch_dir}",
        "--no-requeue",  # a silently re-run row would be counted twice
        "--export=ALL",  # the job environment carries the secrets the manifest only names
    ]
    if nodes:
        argv += [f"--nodes={max(nodes)}", "--ntasks-per-node=1"]
    nice = max(jobs[i].nice for i in indices)
    if nice > 0:  # below the launch's top priority (only root may lower nice)
        argv.append(f"--nice={nice}")
    if partition:
        argv.append(f"--partition={partition}")
    if account:
        argv.append(f"--account={account}")
    argv += [*extra, "--"]
    argv += [str(launch_dir / "array-task.py"), str(launch_dir / "manifest.json")]
    return argv


def parse_time(value: object) -> datetime | None:
    """A status file's ISO 8601 timestamp, or None."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None
