"""Launches outlive a SIGKILLed gov and are adopted by the next run.

`prepare-merge --sweep` (local launcher) is killed by the `launch-started`
crash point right after it starts its first row. That row's script (which
appends its row to a counter, then waits for a release file the test
creates) runs on. The next `prepare-merge --sweep` finds the dead gov's open
launch in the ledger and, the row still running, waits for it instead of
starting it again; the test releases the script only once the new run says
it adopted the row. Every row then ran exactly once, is recorded once, and
nothing is left running. Killing the row too while gov is down gets it
recorded failed (with the reason) and launched again, as any failed row is.
No step waits on time: each one waits on a file or a line of output.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.sweeps import slurm_adopt
from governance.sweeps.launch_record import EXIT_NAME, LAUNCH_NAME, lock_held, same_process
from governance.sweeps.launches import Launches
from governance.sweeps.ledger import Ledger
from governance.sweeps.slurm_client import (
    RUNNING_STATES,
    array_states,
    cancel_jobs,
    slurm_available,
)
from tests.harness import Repo, run_gov, start_process
from tests.merge import test_kill_sweep
from tests.merge.test_kill_sweep import (
    BENCH,
    PR,
    _landed,
    _litter,
    _owned_by,
)
from tests.sweeps.test_cli_sweeps import append_entry

Factory = Callable[[str], Repo]
sweep_repo_factory = test_kill_sweep.sweep_repo_factory  # the example repository, as a fixture
HANG_GUARD = 300.0  # only against a hang: no result depends on it
CRASH = "GOV_TEST_CRASH_AFTER"
SLURM_DOWN = slurm_available()  # None when a cluster answers (launch/slurm/local-cluster.sh)


@pytest.fixture
def sync(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder a row's script talks to the test through (one per test, the
    same for its reference repository, so both land the same bytes)."""
    return tmp_path_factory.mktemp("sync")


def _script(sync: Path) -> str:
    """Each row appends its result file name to the counter, says it started,
    and waits for the release file."""
    return (
        f"echo \"$RESULT_FILENAME\" >> '{sync}/counter'\n"
        f": > '{sync}/started'\n"
        f"while [ ! -e '{sync}/release' ]; do sleep 0.02; done\n"
    )


def _setup(repo: Repo, sync: Path) -> Repo:
    repo.configure_identity()
    text = (repo.path / BENCH).read_text().replace("set -eu\n", "set -eu\n" + _script(sync), 1)
    repo.commit("waiting bench", **{BENCH.replace("/", "__"): text})
    repo.git("checkout", "-q", "-b", "pr")
    append_entry(repo, "dsr1-fp8-mi300x-sglang")
    repo.git("checkout", "-q", "main")
    opened = run_gov("pr", "open", "--number", str(PR), "--branch", "pr", cwd=repo.path)
    assert opened.exit_code == 0, opened.stderr
    return repo


def _root(repo: Repo) -> Path:
    return repo.path / ".git"


def _ledger(repo: Repo) -> Ledger:
    [path] = (repo.path / ".git").rglob("runs.sqlite3")
    return Ledger(path)


def _wait_until(done: Callable[[], bool], what: str) -> None:
    """Until `done()` (the bound is only against a hang)."""
    deadline = time.monotonic() + HANG_GUARD
    while not done():
        assert time.monotonic() < deadline, f"still waiting: {what}"
        time.sleep(0.01)


def _wait_file(path: Path) -> None:
    _wait_until(path.exists, f"{path.name} to appear")


PREPARE = ("prepare-merge", "--pr", str(PR), "--sweep")
QUEUE = ("queue", "run", "--sweep")


def _killed_at_first_row(
    gov_exe: str, repo: Repo, sync: Path, command: tuple[str, ...] = PREPARE
) -> tuple[int, Path, dict[str, int]]:
    """Run `command` until the crash point after its first row starts; the
    row's folder and its recorded wrapper, checked to be still running."""
    if command == QUEUE:
        added = run_gov("queue", "add", "--pr", str(PR), cwd=repo.path)
        assert added.exit_code == 0, added.stdout + added.stderr
    proc = start_process(
        [gov_exe, *command],
        cwd=repo.path,
        env={CRASH: "launch-started"},
    )
    proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    _wait_file(sync / "started")  # the row's script runs on without its gov
    [folder] = [p.parent for p in (repo.path / ".git" / "gov").rglob(LAUNCH_NAME)]
    record = json.loads((folder / LAUNCH_NAME).read_text())
    assert same_process(record["pid"], record["start_time"]), "the row died with gov"
    return proc.pid, folder, record


def _reference(make: Factory, sync: Path) -> str:
    repo = _setup(make("reference"), sync)
    (sync / "release").touch()
    done = run_gov("prepare-merge", "--pr", str(PR), "--sweep", cwd=repo.path)
    assert done.exit_code == 0, done.stdout + done.stderr
    (sync / "release").unlink()
    rows = (sync / "counter").read_text().splitlines()
    (sync / "counter").unlink()
    (sync / "started").unlink()
    assert len(rows) == len(set(rows)) > 1  # several rows, each once
    return _landed(repo)


def _lines(stream: subprocess.Popen[str]) -> queue.Queue[str]:
    """The process's stderr lines, as they come (read by a thread, so the
    pipe never fills up)."""
    out: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert stream.stderr is not None
        for line in stream.stderr:
            out.put(line)
        out.put("")

    threading.Thread(target=pump, daemon=True).start()
    return out


def _wait_line(lines: queue.Queue[str], needle: str) -> list[str]:
    seen = []
    while True:
        line = lines.get(timeout=HANG_GUARD)
        assert line, f"the run ended without saying {needle!r}: {''.join(seen)}"
        seen.append(line)
        if needle in line:
            return seen


def _nothing_left(dead: int, repo: Repo) -> None:
    assert _owned_by(dead) == []
    assert _litter(dead) == []
    assert Launches(_ledger(repo)).still_open() == []


def _end(record: dict[str, int]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(record["pid"], signal.SIGKILL)


@pytest.mark.parametrize("command", [PREPARE, QUEUE], ids=["prepare-merge", "queue-run"])
def test_a_restarted_sweep_adopts_the_running_row(
    gov_exe: str, sweep_repo_factory: Factory, sync: Path, command: tuple[str, ...]
) -> None:
    reference = _reference(sweep_repo_factory, sync)
    repo = _setup(sweep_repo_factory("killed"), sync)
    dead, folder, record = _killed_at_first_row(gov_exe, repo, sync, command)
    try:
        rerun = start_process([gov_exe, *command], cwd=repo.path)
        lines = _lines(rerun)
        said = _wait_line(lines, "adopted")
        assert f"pid {record['pid']}" in said[-1]
        (sync / "release").touch()  # only now: the new run is waiting on the old row
        rerun.wait(timeout=HANG_GUARD)
        rest = []
        while line := lines.get(timeout=HANG_GUARD):
            rest.append(line)
        assert rerun.returncode == 0, "".join(said + rest)
    finally:
        _end(record)
    rows = (sync / "counter").read_text().splitlines()
    assert len(rows) == len(set(rows)) > 1, rows  # every row ran exactly once
    runs = _ledger(repo).runs(pr=PR)
    assert sorted(r.job_key for r in runs) == sorted({r.job_key for r in runs})
    assert all(r.status == "succeeded" for r in runs), [(r.job_key, r.detail) for r in runs]
    [adopted] = [r for r in runs if r.result_path == str(folder)]
    assert adopted.exit_code == 0
    assert _landed(repo) == reference
    _nothing_left(dead, repo)


def test_a_row_that_died_while_gov_was_down_is_recorded_failed_and_rerun(
    gov_exe: str, sweep_repo_factory: Factory, sync: Path
) -> None:
    reference = _reference(sweep_repo_factory, sync)
    repo = _setup(sweep_repo_factory("died"), sync)
    dead, folder, record = _killed_at_first_row(gov_exe, repo, sync)
    _end(record)  # the row dies too, before it could write its exit status
    # SIGKILL lands asynchronously.
    _wait_until(lambda: not same_process(record["pid"], record["start_time"]), "the row to die")
    (sync / "release").touch()
    rerun = run_gov("prepare-merge", "--pr", str(PR), "--sweep", cwd=repo.path)
    assert rerun.exit_code == 0, rerun.stdout + rerun.stderr
    runs = _ledger(repo).runs(pr=PR)
    [died] = [r for r in runs if r.result_path == str(folder)]
    assert died.status == "failed" and "ended without an exit status" in died.detail
    assert f"pid {record['pid']}" in died.detail
    again = [r for r in runs if r.job_key == died.job_key and r.id != died.id]
    assert [r.status for r in again] == ["succeeded"]  # relaunched, as a failed row is
    rows = (sync / "counter").read_text().splitlines()
    assert len(rows) == len(set(rows)) + 1  # that row twice (died, rerun), the others once
    assert _landed(repo) == reference
    _nothing_left(dead, repo)


def test_a_row_that_finished_while_gov_was_down_is_collected_not_rerun(
    gov_exe: str, sweep_repo_factory: Factory, sync: Path
) -> None:
    reference = _reference(sweep_repo_factory, sync)
    repo = _setup(sweep_repo_factory("finished"), sync)
    dead, folder, _record = _killed_at_first_row(gov_exe, repo, sync)
    (sync / "release").touch()  # the row ends with no gov waiting on it
    _wait_file(folder / EXIT_NAME)
    _wait_until(lambda: not lock_held(folder), "the wrapper to exit")
    rerun = run_gov("prepare-merge", "--pr", str(PR), "--sweep", cwd=repo.path)
    assert rerun.exit_code == 0, rerun.stdout + rerun.stderr
    rows = (sync / "counter").read_text().splitlines()
    assert len(rows) == len(set(rows)) > 1, rows  # the finished row did not run again
    runs = _ledger(repo).runs(pr=PR)
    assert all(r.status == "succeeded" for r in runs), [(r.job_key, r.detail) for r in runs]
    assert len(runs) == len({r.job_key for r in runs})
    [collected] = [r for r in runs if r.result_path == str(folder)]
    assert collected.exit_code == 0
    files = _ledger(repo).files([collected.id])[collected.id]
    assert EXIT_NAME in {f.name for f in files}  # its result files recorded as for any run
    assert _landed(repo) == reference
    _nothing_left(dead, repo)


@pytest.mark.skipif(SLURM_DOWN is not None, reason=f"no Slurm cluster: {SLURM_DOWN}")
def test_a_restarted_sweep_adopts_the_running_slurm_task(
    gov_exe: str, sweep_repo_factory: Factory, sync: Path
) -> None:
    """The array outlives gov; the restart follows the running task, cancels
    the pending ones (none of them ran) and submits those rows afresh."""
    reference = _reference(sweep_repo_factory, sync)
    repo = _setup(sweep_repo_factory("slurm"), sync)
    command = (*PREPARE, "--launcher", "slurm")
    proc = start_process([gov_exe, *command], cwd=repo.path, env={CRASH: "launch-started"})
    proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    _wait_file(sync / "started")  # a task of the dead run's array runs on
    submitted = [slurm_adopt.read(p.parent) for p in _root(repo).rglob(slurm_adopt.RECORD_NAME)]
    [job_id] = {s.job_id for s in submitted if s is not None}
    try:
        rerun = start_process([gov_exe, *command], cwd=repo.path)
        lines = _lines(rerun)
        said = _wait_line(lines, "adopted")
        assert f"Slurm task {job_id}_" in said[-1]
        (sync / "release").touch()  # only now: the new run follows the old task
        rerun.wait(timeout=HANG_GUARD)
        rest = []
        while line := lines.get(timeout=HANG_GUARD):
            rest.append(line)
        assert rerun.returncode == 0, "".join(said + rest)
    finally:
        (sync / "release").touch()
        cancel_jobs([job_id])
    rows = (sync / "counter").read_text().splitlines()
    assert len(rows) == len(set(rows)) > 1, rows  # every row ran exactly once
    runs = _ledger(repo).runs(pr=PR)
    assert len(runs) == len({r.job_key for r in runs})
    assert all(r.status == "succeeded" for r in runs), [(r.job_key, r.detail) for r in runs]
    assert _landed(repo) == reference
    assert Launches(_ledger(repo)).still_open() == []
    states = array_states(job_id) or {}
    assert [i for i, (state, _) in states.items() if state in {"PENDING", *RUNNING_STATES}] == []
