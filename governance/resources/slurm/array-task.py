#!/usr/bin/env python3
"""One task of a gov Slurm job array: run one manifest entry.

Usage (as the sbatch batch script): array-task.py MANIFEST

Reads entry $SLURM_ARRAY_TASK_ID of the manifest the launcher wrote
(governance/sweeps/slurm_manifest.py) and runs its argv with exactly the entry's
environment (plus the variables Slurm sets for the allocation), cwd = the
entry's result folder, stdout and stderr into its log file. Every value
travels as data (JSON file, argv, environ); nothing is given to a shell.

The per-row timeout is enforced here, to the second: the job array's --time
is one limit for all tasks (the largest row timeout) and only a backstop.

When the script ends, a status file is written atomically (temp file +
rename) so the launcher never reads a half-written one:
    {"exit_code", "timed_out", "signal", "started_at", "ended_at", "error"}
The wrapper exits with the script's exit code (128+N when killed by signal N,
124 on timeout), so Slurm's own job state agrees with the status file.

Standard library only, and no syntax newer than Python 3.6: compute nodes run
whatever python3 they have, not gov's virtualenv.
"""

import contextlib
import datetime
import json
import os
import signal
import subprocess
import sys
import time

# Variables Slurm sets for the allocation that a benchmark script legitimately
# needs (srun inside the allocation, the GPUs it was given). Everything else of
# the batch environment is dropped: the script sees the row's environment.
PASS_THROUGH_PREFIXES = ("SLURM_", "SLURMD_")
PASS_THROUGH = (
    "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
)
TIMEOUT_EXIT = 124  # what coreutils timeout(1) uses


def now():
    # datetime.UTC would need Python 3.11 on the compute nodes.
    return datetime.datetime.now(datetime.timezone.utc).isoformat()  # noqa: UP017


def write_status(path, status):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(status, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def child_env(task_env, secrets=()):
    env = {}
    for name, value in os.environ.items():
        if name.startswith(PASS_THROUGH_PREFIXES) or name in PASS_THROUGH:
            env[name] = value
    env.update(task_env)  # the row wins
    for name in secrets:  # named in the manifest, valued by the job environment only
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def kill_group(pid, sig):
    with contextlib.suppress(OSError):  # the group is gone already
        os.killpg(pid, sig)


def run(task):
    """Run the task's argv; return the status dict."""
    status = {
        "exit_code": None,
        "timed_out": False,
        "signal": None,
        "started_at": now(),
        "ended_at": None,
        "error": "",
    }
    os.makedirs(task["cwd"], exist_ok=True)
    received = []

    with open(task["log"], "wb") as log:
        try:
            # A session of its own, so a timeout can kill the script's whole
            # process group (servers it started included).
            child = subprocess.Popen(
                task["argv"],
                env=child_env(task["env"], task.get("secrets", ())),
                cwd=task["cwd"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            status["exit_code"] = 126 if isinstance(exc, PermissionError) else 127
            status["error"] = f"cannot start {task['argv'][0]}: {exc}"
            log.write((status["error"] + "\n").encode())
            status["ended_at"] = now()
            return status

        def forward(signum, _frame):
            # scancel / Slurm's own time limit: pass the signal to the script's group.
            received.append(signum)
            kill_group(child.pid, signum)

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(signum, forward)

        deadline = time.monotonic() + float(task["timeout_seconds"])
        grace = float(task.get("kill_grace_seconds", 10))
        try:
            code = child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            status["timed_out"] = True
            kill_group(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                kill_group(child.pid, signal.SIGKILL)
                child.wait()
            code = TIMEOUT_EXIT
            status["error"] = f"timed out after {task['timeout_seconds']} s"
        # Whatever the script left behind in its group goes with it.
        kill_group(child.pid, signal.SIGKILL)

    if code < 0:
        status["signal"] = signal.Signals(-code).name
        code = 128 - code
    if received and not status["error"]:
        status["error"] = f"received {signal.Signals(received[0]).name}"
    status["exit_code"] = code
    status["ended_at"] = now()
    return status


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: array-task.py MANIFEST\n")
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        manifest = json.load(handle)
    index = int(os.environ["SLURM_ARRAY_TASK_ID"])
    task = manifest["tasks"][index]
    status = run(task)
    write_status(task["status"], status)
    return status["exit_code"]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
