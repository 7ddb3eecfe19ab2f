"""The local launcher: real processes, bounded parallelism, timeouts that kill
the whole process group, Ctrl-C that stops children and records them."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from governance.sweeps.launcher import JobEvent, JobStatus, LaunchJob
from governance.sweeps.local_launcher import LocalLauncher
from tests.harness import Repo, run_gov, start_process
from tests.sweeps.conftest import make_row, plan_of, write_script


def job(tmp_path: Path, script: Path, key: str, timeout: float = 30.0, **env: str) -> LaunchJob:
    folder = tmp_path / "results" / key
    return LaunchJob(
        key, script, {"RESULT_DIR": str(folder), **env}, folder / "row.json", folder, timeout
    )


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in state


def test_statuses_logs_and_order(tmp_path: Path, scripts_dir: Path) -> None:
    ok = write_script(scripts_dir, "ok.sh", 'echo "hello $NAME"\n')
    bad = write_script(scripts_dir, "bad.sh", "echo broken >&2\nexit 3\n")
    jobs = [job(tmp_path, bad, "b"), job(tmp_path, ok, "a", NAME="row")]
    events: list[JobEvent] = []
    outcomes = LocalLauncher().launch(jobs, parallel=2, on_event=events.append)
    assert [o.job.key for o in outcomes] == ["b", "a"]  # input order
    assert [o.status for o in outcomes] == [JobStatus.FAILED, JobStatus.SUCCEEDED]
    assert outcomes[0].exit_code == 3 and outcomes[0].detail == "exit status 3"
    assert outcomes[0].log_path.read_text() == "broken\n"
    assert outcomes[1].log_path.read_text() == "hello row\n"
    assert sorted((e.key, e.status) for e in events if e.status) == [
        ("a", JobStatus.SUCCEEDED),
        ("b", JobStatus.FAILED),
    ]


def test_environment_is_the_row_not_gov(tmp_path: Path, scripts_dir: Path) -> None:
    script = write_script(scripts_dir, "env.sh", 'env > "$RESULT_DIR/env.txt"\n')
    launcher = LocalLauncher({"PATH": os.environ["PATH"], "SECRET_THING": "x", "HOME": "/h"})
    [outcome] = launcher.launch([job(tmp_path, script, "e", CONC="4")], parallel=1)
    seen = dict(
        line.split("=", 1)
        for line in (outcome.job.result_dir / "env.txt").read_text().splitlines()
        if "=" in line
    )
    assert seen["CONC"] == "4" and seen["HOME"] == "/h" and "SECRET_THING" not in seen


def test_parallelism_is_bounded(tmp_path: Path, scripts_dir: Path) -> None:
    script = write_script(
        scripts_dir,
        "span.sh",
        'date +%s%N > "$RESULT_DIR/start"\nsleep 0.3\ndate +%s%N > "$RESULT_DIR/end"\n',
    )
    jobs = [job(tmp_path, script, f"j{i}") for i in range(6)]
    outcomes = LocalLauncher().launch(jobs, parallel=2)
    assert all(o.status is JobStatus.SUCCEEDED for o in outcomes)
    spans = [
        (int((j.result_dir / "start").read_text()), int((j.result_dir / "end").read_text()))
        for j in jobs
    ]
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert most == 2


def test_timeout_kills_the_process_group(tmp_path: Path, scripts_dir: Path) -> None:
    script = write_script(
        scripts_dir, "hang.sh", 'sleep 60 &\necho $! > "$RESULT_DIR/child.pid"\nsleep 60\n'
    )
    started = time.monotonic()
    [outcome] = LocalLauncher().launch([job(tmp_path, script, "t", timeout=0.5)], parallel=1)
    assert time.monotonic() - started < 10
    assert outcome.status is JobStatus.TIMED_OUT and outcome.detail == "killed after 0.5s"
    child = int((outcome.job.result_dir / "child.pid").read_text())
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child)


def test_a_script_that_cannot_start_fails_cleanly(tmp_path: Path, scripts_dir: Path) -> None:
    script = scripts_dir / "badshebang.sh"
    script.write_text("#!/nonexistent/interpreter\ntrue\n")
    script.chmod(0o755)
    [outcome] = LocalLauncher().launch([job(tmp_path, script, "n")], parallel=1)
    assert outcome.status is JobStatus.FAILED and outcome.detail.startswith("cannot start")


def test_a_script_without_the_executable_bit_runs_through_bash(
    tmp_path: Path, scripts_dir: Path
) -> None:
    # Same rule as the Slurm launcher (launcher.script_argv).
    script = scripts_dir / "noexec.sh"
    script.write_text("echo ran > ran.txt\n")
    script.chmod(0o644)
    [outcome] = LocalLauncher().launch([job(tmp_path, script, "n")], parallel=1)
    assert outcome.status is JobStatus.SUCCEEDED, outcome.detail
    assert (outcome.job.result_dir / "ran.txt").read_text() == "ran\n"


def test_ctrl_c_stops_children_and_records_them(
    sweep_repo: Repo, tmp_path: Path, gov_exe: str
) -> None:
    folder = sweep_repo.path / "slow"
    write_script(
        folder,
        "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh",
        'sleep 60 &\necho $! > "$RESULT_DIR/child.pid"\nwait\n',
    )
    sweep_repo.write(".gov.toml", 'scripts = "slow"\n')
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_of([make_row(conc=c) for c in (4, 8, 16)])))
    process = start_process(
        [gov_exe, "-C", str(sweep_repo.path), "launch", "--plan", str(plan), "--parallel", "2"]
    )
    results = sweep_repo.path / ".git" / "gov" / "results"
    deadline = time.monotonic() + 20
    while len(list(results.glob("runs/*/*/child.pid"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(p.read_text()) for p in results.glob("runs/*/*/child.pid")]
    assert len(pids) == 2
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=20)
    assert process.returncode == 130, err
    assert "gov: interrupted" in err
    for pid in pids:
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
    listed = run_gov("-C", str(sweep_repo.path), "runs", "list", "--format", "json")
    assert listed.exit_code == 0, listed.stderr
    statuses = sorted(run["status"] for run in json.loads(listed.stdout))
    assert statuses == ["cancelled"] * 3  # recorded by the interrupted process itself
