"""Talking to a Slurm cluster: its client tools, its job states, whether it
can take jobs, the state of a job array's tasks, cancelling them. The launcher
(`slurm_launcher`) builds on these; the tests use
`slurm_available()` to skip, with its reason, where no cluster answers."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Sequence

from governance.core.diagnostics import UsageError
from governance.sweeps.launcher import JobStatus

TOOLS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")

# Slurm job states (squeue %T / sacct State) that end a task, and what they mean here.
STATE_STATUS: dict[str, JobStatus] = {
    "COMPLETED": JobStatus.SUCCEEDED,
    "FAILED": JobStatus.FAILED,
    "NODE_FAIL": JobStatus.FAILED,
    "OUT_OF_MEMORY": JobStatus.FAILED,
    "BOOT_FAIL": JobStatus.FAILED,
    "SPECIAL_EXIT": JobStatus.FAILED,
    "TIMEOUT": JobStatus.TIMED_OUT,
    "DEADLINE": JobStatus.TIMED_OUT,
    "CANCELLED": JobStatus.CANCELLED,
    "PREEMPTED": JobStatus.CANCELLED,
    "REVOKED": JobStatus.CANCELLED,
}
RUNNING_STATES = {"RUNNING", "COMPLETING", "CONFIGURING", "SIGNALING", "STAGE_OUT", "SUSPENDED"}
USABLE_NODE_STATES = {"idle", "mixed", "allocated", "completing"}


class SlurmError(UsageError):
    """The cluster refused a submission (GOV706, exit 2 with its reason):
    nothing ran, so there is no outcome to report. A problem of the user's
    cluster or settings, not a bug of gov's."""

    def __init__(self, message: str) -> None:
        super().__init__(
            f"GOV706 launch-rejected: {message}",
            "nothing was launched; check the cluster with `sinfo`; sbatch reads SBATCH_PARTITION "
            "and SBATCH_ACCOUNT from the environment; a multi-node row asks for the nodes its "
            "prefill and decode workers need; `gov launch --dry-run` shows the rows without "
            "submitting",
        )


def run_tool(argv: Sequence[str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False)


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


def slurm_available(timeout: float = 15.0) -> str | None:
    """None when jobs can be submitted to a Slurm cluster, else the reason why not."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"Slurm client tools not on PATH: {', '.join(missing)}"
    try:
        ping = run_tool(["scontrol", "ping"], timeout)
        if " is UP" not in ping.stdout:
            reason = first_line(ping.stderr) or first_line(ping.stdout) or "no answer"
            return f"slurmctld is not reachable (scontrol ping: {reason})"
        info = run_tool(["sinfo", "--noheader", "--format=%T"], timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Slurm does not answer: {exc}"
    states = {line.strip() for line in info.stdout.splitlines() if line.strip()}
    if info.returncode != 0 or not states & USABLE_NODE_STATES:
        shown = ", ".join(sorted(states)) or first_line(info.stderr) or "none"
        return f"no usable Slurm node (node states: {shown})"
    return None


def accounting_available(timeout: float = 15.0) -> bool:
    """Whether `sacct` answers (it needs slurmdbd; the CI cluster has none)."""
    try:
        probe = run_tool(["sacct", "--noheader", "--allocations", "--starttime=now"], timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0 and "disabled" not in probe.stderr.lower()


def array_states(job_id: str) -> dict[int, tuple[str, str]] | None:
    """Array task index → (state, reason) from squeue; None when squeue fails."""
    argv = ["squeue", "--noheader", "--array", "--states=all", f"--jobs={job_id}"]
    try:
        done = run_tool([*argv, "--format=%K|%T|%r"])
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        # An array purged completely from memory is "Invalid job id": not a failure to ask.
        return {} if "Invalid job id" in done.stderr else None
    states = {}
    for line in done.stdout.splitlines():
        index, _, rest = line.strip().partition("|")
        state, _, reason = rest.partition("|")
        if index.isdigit():  # a still-unsplit pending range shows as "0-9%2"
            states[int(index)] = (state.split()[0] if state else "PENDING", reason)
    return states


def accounting_states(job_id: str) -> dict[int, str]:
    """Array task index → final state from sacct (empty when sacct fails)."""
    argv = ["sacct", "--noheader", "--parsable2", "--allocations", f"--jobs={job_id}"]
    try:
        done = run_tool([*argv, "--format=JobID,State"])
    except (OSError, subprocess.TimeoutExpired):
        return {}
    states = {}
    for line in done.stdout.splitlines():
        ident, _, state = line.partition("|")
        _, _, index = ident.partition("_")
        if index.isdigit() and state:
            states[int(index)] = state.split()[0]  # "CANCELLED by 0" → CANCELLED
    return states


def task_exit_code(job_id: str, index: int) -> int | None:
    """ExitCode=<code>:<signal> of one array task, from scontrol."""
    try:
        done = run_tool(["scontrol", "--oneliner", "show", "job", f"{job_id}_{index}"])
    except (OSError, subprocess.TimeoutExpired):
        return None
    for field in done.stdout.split():
        if field.startswith("ExitCode="):
            code = field.removeprefix("ExitCode=").split(":")[0]
            return int(code) if code.isdigit() else None
    return None


def cancel_jobs(ids: Sequence[str]) -> None:
    """scancel, best effort: on failure the tasks end by their time limit at the latest."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        run_tool(["scancel", *ids])
