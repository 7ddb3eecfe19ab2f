"""The Slurm launcher against a real cluster (launch/slurm/local-cluster.sh in CI).

Tests marked `needs_cluster` submit real job arrays and are skipped, with the
probe's reason, when no Slurm cluster answers. The wrapper tests at the end
run array-task.py directly and need no cluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from governance.sweeps.launcher import JobEvent, JobStatus, LaunchJob, script_argv
from governance.sweeps.slurm_client import slurm_available
from governance.sweeps.slurm_launcher import SlurmLauncher
from governance.sweeps.slurm_manifest import WRAPPER, time_limit_minutes

UNAVAILABLE = slurm_available()
needs_cluster = pytest.mark.skipif(
    UNAVAILABLE is not None, reason=f"no Slurm cluster: {UNAVAILABLE}"
)

POLL = 0.2
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}


def make_job(
    root: Path, key: str, body: str, *, env: dict[str, str] | None = None, timeout: float = 60
) -> LaunchJob:
    """A job whose script is `body` under a /bin/sh shebang, laid out like a real launch."""
    # Spaces and a semicolon in the paths: they must survive as plain data too.
    script = root / "scripts dir" / f"{key}; run.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    script.chmod(0o755)
    result_dir = root / "results" / key
    row_json = root / "rows" / f"{key}.json"
    row_json.parent.mkdir(parents=True, exist_ok=True)
    row_json.write_text(json.dumps({"key": key}), encoding="utf-8")
    full_env = {
        **BASE_ENV,
        "GOV_ROW_JSON": str(row_json),
        "RESULT_DIR": str(result_dir),
        **(env or {}),
    }
    return LaunchJob(key, script, full_env, row_json, result_dir, timeout)


def launcher(tmp_path: Path) -> SlurmLauncher:
    return SlurmLauncher(tmp_path / "slurm", poll_interval=POLL, kill_grace_seconds=2)


def wait_array_gone(job_id: str, limit: float = 30) -> None:
    """Leave nothing running behind a test: wait until no task of the array is active."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        out = subprocess.run(
            ["squeue", "--noheader", "--array", f"--jobs={job_id}", "--format=%T"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        if not out:
            return
        time.sleep(POLL)
    pytest.fail(f"array {job_id} still has active tasks: {out}")


@needs_cluster
def test_rows_succeed_and_write_results(tmp_path: Path) -> None:
    body = 'echo "row $CONC"\nprintf \'{"conc": %s}\' "$CONC" > result.json\n'
    jobs = [make_job(tmp_path, f"row{i}", body, env={"CONC": str(4 * i)}) for i in range(1, 4)]
    events: list[JobEvent] = []
    slurm = launcher(tmp_path)
    outcomes = slurm.launch(jobs, parallel=2, on_event=events.append)

    assert [o.job for o in outcomes] == jobs  # input order
    for i, (job, outcome) in enumerate(zip(jobs, outcomes, strict=True), start=1):
        assert outcome.status is JobStatus.SUCCEEDED, outcome.detail
        assert outcome.exit_code == 0
        assert json.loads((job.result_dir / "result.json").read_text()) == {"conc": 4 * i}
        assert outcome.log_path.parent == job.result_dir
        assert outcome.log_path.read_text() == f"row {4 * i}\n"
        assert outcome.started_at <= outcome.ended_at
    starts = [e.key for e in events if e.status is None]
    finishes = [e.key for e in events if e.status is not None]
    assert sorted(starts) == sorted(finishes) == sorted(j.key for j in jobs)
    # One array for the whole launch, its manifest kept in the launch folder.
    assert slurm.job_id is not None and slurm.launch_dir is not None
    manifest = json.loads((slurm.launch_dir / "manifest.json").read_text())
    assert [t["key"] for t in manifest["tasks"]] == [j.key for j in jobs]


@needs_cluster
def test_failure_exit_code_and_timeout(tmp_path: Path) -> None:
    jobs = [
        make_job(tmp_path, "fails", "echo boom >&2\nexit 3\n"),
        make_job(tmp_path, "sleeps", "echo start\nsleep 120\n", timeout=2),
        make_job(tmp_path, "fine", "true\n"),
    ]
    started = time.monotonic()
    outcomes = launcher(tmp_path).launch(jobs, parallel=3)
    # The row timeout is enforced to the second by the wrapper, not by --time (minutes).
    assert time.monotonic() - started < 45

    failed, timed_out, fine = outcomes
    assert failed.status is JobStatus.FAILED
    assert failed.exit_code == 3
    assert "exit code 3" in failed.detail
    assert failed.log_path.read_text() == "boom\n"
    assert timed_out.status is JobStatus.TIMED_OUT, timed_out.detail
    assert "timed out" in timed_out.detail
    assert (timed_out.ended_at - timed_out.started_at).total_seconds() < 30
    assert timed_out.log_path.read_text() == "start\n"
    assert fine.status is JobStatus.SUCCEEDED


@needs_cluster
def test_env_values_arrive_verbatim_and_execute_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = tmp_path / "pwned"
    hostile = {
        "SUBST": f"$(touch {canary})",
        "BACKTICK": f"`touch {canary}2`",
        "SEMI": f"x; touch {canary}3; echo",
        "NEWLINE": f"line1\ntouch {canary}4\nline3",
        "QUOTES": "'\"\\ *?[a] ~ %A %a ${HOME} -n",
        "PLAIN_PWNED": "$(touch /tmp/pwned)",
        "UNICODE": "café ✓",
    }
    # Present in the submitting process (sbatch exports it to the batch job),
    # but not part of the row: the script must not see it.
    monkeypatch.setenv("GOV_TEST_SUBMITTER_ONLY", "leaked")
    pwned_before = Path("/tmp/pwned").exists()
    body = (
        "#!/usr/bin/env python3\n"
        "import json, os\n"
        "json.dump({'env': dict(os.environ), 'cwd': os.getcwd()},"
        " open('env.json', 'w'))\n"
    )
    job = make_job(tmp_path, "env", "", env=hostile)
    job.script.write_text(body, encoding="utf-8")

    [outcome] = launcher(tmp_path).launch([job], parallel=1)

    assert outcome.status is JobStatus.SUCCEEDED, outcome.detail
    seen = json.loads((job.result_dir / "env.json").read_text())
    assert seen["cwd"] == str(job.result_dir)
    for name, value in job.env.items():
        assert seen["env"][name] == value
    assert "GOV_TEST_SUBMITTER_ONLY" not in seen["env"]
    # Slurm's own allocation variables do reach the script (for srun, GPUs).
    assert seen["env"]["SLURM_ARRAY_TASK_ID"] == "0"
    assert list(tmp_path.glob("pwned*")) == []
    assert Path("/tmp/pwned").exists() == pwned_before


@needs_cluster
def test_cancel_method_cancels_the_array(tmp_path: Path) -> None:
    jobs = [make_job(tmp_path, f"long{i}", "sleep 120\n") for i in range(3)]
    slurm = launcher(tmp_path)
    events: list[JobEvent] = []

    def on_event(event: JobEvent) -> None:
        events.append(event)
        if event.status is None:  # the first task is running: cancel everything
            slurm.cancel()

    started = time.monotonic()
    outcomes = slurm.launch(jobs, parallel=1, on_event=on_event)
    assert time.monotonic() - started < 30
    assert [o.status for o in outcomes] == [JobStatus.CANCELLED] * 3
    # Tasks cancelled while pending never started: finish events only.
    assert [e.key for e in events if e.status is None] == ["long0"]
    assert sorted(e.key for e in events if e.status is not None) == ["long0", "long1", "long2"]
    assert slurm.job_id is not None
    wait_array_gone(slurm.job_id)


@needs_cluster
def test_keyboard_interrupt_scancels_and_reports_cancelled(tmp_path: Path) -> None:
    jobs = [
        make_job(tmp_path, "quick", "true\n"),
        make_job(tmp_path, "slow", "sleep 120\n"),
    ]
    slurm = launcher(tmp_path)

    def on_event(event: JobEvent) -> None:
        if event.key == "slow" and event.status is None:
            raise KeyboardInterrupt  # what Ctrl-C during the wait looks like

    outcomes = slurm.launch(jobs, parallel=1, on_event=on_event)
    assert outcomes[0].status is JobStatus.SUCCEEDED  # finished before the interrupt
    assert outcomes[1].status is JobStatus.CANCELLED
    assert "interrupted" in outcomes[1].detail
    assert slurm.job_id is not None
    wait_array_gone(slurm.job_id)


def test_probe_reports_missing_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    reason = slurm_available()
    assert reason is not None and "sbatch" in reason


def test_time_limit_and_argv(tmp_path: Path) -> None:
    job = make_job(tmp_path, "t", "true\n", timeout=30)
    assert time_limit_minutes([job]) == 2  # 30 s + margin, rounded up to minutes
    assert script_argv(job.script) == [str(job.script)]
    job.script.chmod(0o644)
    assert script_argv(job.script) == ["bash", str(job.script)]


def run_wrapper(tmp_path: Path, job: LaunchJob, argv: list[str] | None = None) -> dict[str, object]:
    """Run array-task.py the way a Slurm array task would, without Slurm."""
    status = tmp_path / "status.json"
    task = {
        "argv": argv or script_argv(job.script),
        "env": dict(job.env),
        "cwd": str(job.result_dir),
        "log": str(job.result_dir / "launch.log"),
        "status": str(status),
        "timeout_seconds": job.timeout_seconds,
        "kill_grace_seconds": 1,
    }
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"tasks": [task]}), encoding="utf-8")
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "0"}
    subprocess.run([sys.executable, str(WRAPPER), str(manifest)], env=env, check=False, timeout=60)
    return json.loads(status.read_text())


def test_wrapper_exit_code_and_own_timeout(tmp_path: Path) -> None:
    failed = run_wrapper(tmp_path, make_job(tmp_path, "f", "echo out; exit 7\n"))
    assert failed["exit_code"] == 7 and failed["timed_out"] is False
    assert (tmp_path / "results" / "f" / "launch.log").read_text() == "out\n"

    slow = run_wrapper(tmp_path, make_job(tmp_path, "s", "sleep 60\n", timeout=0.5))
    assert slow["timed_out"] is True and slow["exit_code"] == 124

    missing = make_job(tmp_path, "m", "true\n")
    missing.script.unlink()
    gone = run_wrapper(tmp_path, missing, [str(missing.script)])
    assert gone["exit_code"] == 127 and "cannot start" in str(gone["error"])


def test_slurm_states_map_onto_job_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state mapping, with squeue faked (Slurm's own TIMEOUT takes minutes to see)."""
    states = ["COMPLETED", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT", "CANCELLED"]
    jobs = [make_job(tmp_path, f"j{i}", "true\n") for i in range(len(states) + 2)]
    slurm = launcher(tmp_path)
    slurm._use_sacct = False  # no accounting: purged tasks are read from status files
    monkeypatch.setattr(slurm, "_sbatch", lambda tasks, indices, parallel: "42")
    monkeypatch.setattr(slurm, "_scontrol_exit_code", lambda task: 1)
    # The last two tasks were purged from the controller; one left a status file.
    listed = {i: (state, "None") for i, state in enumerate(states)}
    monkeypatch.setattr(slurm, "_squeue", lambda job_id: listed)
    real_prepare = slurm._prepare

    def prepare(jobs_: list[LaunchJob]) -> list[object]:
        tasks = real_prepare(jobs_)
        tasks[-2].status_file.write_text(json.dumps({"exit_code": 0, "timed_out": False}))
        return tasks

    monkeypatch.setattr(slurm, "_prepare", prepare)
    outcomes = slurm.launch(jobs, parallel=2)
    assert [o.status for o in outcomes] == [
        JobStatus.SUCCEEDED,
        JobStatus.FAILED,
        JobStatus.FAILED,
        JobStatus.FAILED,
        JobStatus.TIMED_OUT,
        JobStatus.CANCELLED,
        JobStatus.SUCCEEDED,
        JobStatus.FAILED,
    ]
    assert outcomes[2].detail.startswith("exit code 1; Slurm state NODE_FAIL; no status file")
    assert "without writing its status file" in outcomes[-1].detail


# -- secrets never land on disk --------------------------------------------------------------

SECRET = "hf_" + "S3cr3t" * 6


def test_the_manifest_names_secrets_but_never_holds_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from governance.sweeps.slurm_manifest import write_manifest

    monkeypatch.setenv("HF_TOKEN", SECRET)
    job = make_job(tmp_path, "s", "true\n", env={"HF_TOKEN": SECRET})  # even from a row
    launch_dir = tmp_path / "launch"
    launch_dir.mkdir()
    write_manifest(launch_dir, [(job, launch_dir / "0.json")], 2)
    manifest = launch_dir / "manifest.json"
    assert SECRET not in manifest.read_text()
    assert manifest.stat().st_mode & 0o777 == 0o600
    (task,) = json.loads(manifest.read_text())["tasks"]
    assert task["secrets"] == ["HF_TOKEN"] and "HF_TOKEN" not in task["env"]


def test_the_wrapper_takes_secret_values_from_the_job_environment(tmp_path: Path) -> None:
    job = make_job(tmp_path, "t", 'echo "token:${HF_TOKEN:-none}"\n')
    status = tmp_path / "status.json"
    task = {
        "argv": script_argv(job.script),
        "env": dict(job.env),
        "secrets": ["HF_TOKEN"],
        "cwd": str(job.result_dir),
        "log": str(job.result_dir / "launch.log"),
        "status": str(status),
        "timeout_seconds": 30,
        "kill_grace_seconds": 1,
    }
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"tasks": [task]}), encoding="utf-8")
    env = {**os.environ, "SLURM_ARRAY_TASK_ID": "0", "HF_TOKEN": SECRET}
    subprocess.run([sys.executable, str(WRAPPER), str(manifest)], env=env, check=True, timeout=60)
    assert (job.result_dir / "launch.log").read_text() == f"token:{SECRET}\n"


@needs_cluster
def test_a_slurm_launch_passes_the_token_and_writes_it_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", SECRET)
    job = make_job(tmp_path, "tok", 'test "$HF_TOKEN" = "' + SECRET + '" && echo ok\n')
    slurm = launcher(tmp_path)
    (outcome,) = slurm.launch([job], parallel=1)
    assert outcome.status is JobStatus.SUCCEEDED, outcome.detail
    assert outcome.log_path.read_text() == "ok\n"
    assert slurm.launch_dir is not None
    assert (slurm.launch_dir / "manifest.json").stat().st_mode & 0o777 == 0o600
    for path in (tmp_path / "slurm").rglob("*"):
        assert not path.is_file() or SECRET not in path.read_text(errors="replace")
