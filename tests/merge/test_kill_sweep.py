"""SIGKILL `prepare-merge --sweep` (local launcher) at a random moment, then
rerun (the first trial kills once a row is known to run, so the test never
depends on the machine's speed): the killed run's benchmark processes (own sessions, re-parented to
init) are ended, its linked worktree and temporary folders removed, branches,
main and the checkout restored, and the rerun lands the same bytes as a run
that was never interrupted."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.sweeps.orphans import OWNER_ENV
from tests.harness import PROJECT, Repo, run_gov, start_process
from tests.sweeps.test_cli_sweeps import append_entry

Factory = Callable[[str], Repo]
PR = 5
BENCH = "launch/benchmarks/lib/cpu_bench.sh"
# Each row leaves a background child behind (a server a real script would
# start), then says it is running (the marker: the first trial waits for it, so
# at least one kill lands while rows run whatever the machine's speed), and
# takes a moment. The marker path is the same for every repository of this
# test process, so every trial lands the same tree as the reference.
STARTED = Path(tempfile.gettempdir()) / f"kill-test-{os.getpid()}.started"
SLOW = f"sleep 300 &\n: > '{STARTED}'\nsleep 0.15\n"


def _setup(repo: Repo) -> Repo:
    repo.configure_identity()
    text = (repo.path / BENCH).read_text().replace("set -eu\n", "set -eu\n" + SLOW, 1)
    repo.commit("slow bench", **{BENCH.replace("/", "__"): text})
    repo.git("checkout", "-q", "-b", "pr")
    append_entry(repo, "dsr1-fp8-mi300x-sglang")
    repo.git("checkout", "-q", "main")
    assert (
        run_gov("pr", "open", "--number", str(PR), "--branch", "pr", cwd=repo.path).exit_code == 0
    )
    return repo


def _owned_by(pid: int) -> list[int]:
    """Live processes whose environment names `pid` as their launching gov."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"{OWNER_ENV}={pid}:".encode() in environ:
            found.append(int(entry.name))
    return found


def _litter(pid: int) -> list[str]:
    tmp = Path(tempfile.gettempdir())
    return sorted(p.name for p in tmp.glob(f"gov-*-{pid}-*"))


def _landed(repo: Repo) -> str:
    assert repo.git("rev-list", "--count", "main~1..main") == "1"
    assert repo.git("symbolic-ref", "--short", "HEAD") == "main"
    assert repo.git("status", "--porcelain") == ""
    assert repo.git("for-each-ref", "--format=%(refname)", "refs/gov") == ""
    assert len(repo.git("worktree", "list", "--porcelain").split("\n\n")) == 1
    return repo.git("rev-parse", "main^{tree}")


@pytest.fixture
def reference_tree(sweep_repo_factory: Factory) -> str:
    repo = _setup(sweep_repo_factory("reference"))
    done = run_gov("prepare-merge", "--pr", str(PR), "--sweep", cwd=repo.path)
    assert done.exit_code == 0, done.stdout + done.stderr
    return _landed(repo)


@pytest.fixture
def sweep_repo_factory(make_repo: Callable[[str], Repo]) -> Factory:
    def make(name: str) -> Repo:
        repo = make_repo(name)
        for rel in (
            "perf-changelog.yaml",
            "configs/amd-master.yaml",
            "configs/nvidia-master.yaml",
            "configs/runners.yaml",
        ):
            repo.write(rel, (PROJECT / rel).read_bytes())
        shutil.copytree(
            PROJECT / "launch" / "benchmarks", repo.path / "launch" / "benchmarks", symlinks=True
        )
        repo.write("pyproject.toml", '[tool.gov]\nscripts = "launch/benchmarks"\n')
        repo.commit("example")
        return repo

    return make


TRIALS = int(os.environ.get("GOV_KILL_TRIALS", "6"))


def test_random_kills_while_sweeping_leave_nothing_behind(
    gov_exe: str, reference_tree: str, sweep_repo_factory: Factory
) -> None:
    _kill_trials(gov_exe, reference_tree, sweep_repo_factory, TRIALS)


@pytest.mark.slow
def test_many_random_kills_while_sweeping(
    gov_exe: str, reference_tree: str, sweep_repo_factory: Factory
) -> None:
    _kill_trials(gov_exe, reference_tree, sweep_repo_factory, 40)


def _kill_trials(
    gov_exe: str, reference_tree: str, sweep_repo_factory: Factory, trials: int
) -> None:
    rng = random.Random(int(os.environ.get("GOV_KILL_SEED", "20261202")) + trials)
    adopted = 0
    for trial in range(trials):
        repo = _setup(sweep_repo_factory(f"trial{trial}"))
        STARTED.unlink(missing_ok=True)
        proc = start_process([gov_exe, "prepare-merge", "--pr", str(PR), "--sweep"], cwd=repo.path)
        if trial == 0:  # deterministic: kill once a row is known to be running
            _wait_for(STARTED, proc)
        else:
            time.sleep(rng.uniform(0.3, 1.8))
        proc.send_signal(signal.SIGKILL)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
        orphans = _owned_by(proc.pid)
        adopted += bool(orphans)
        rerun = run_gov("prepare-merge", "--pr", str(PR), "--sweep", cwd=repo.path)
        assert rerun.exit_code == 0, (trial, rerun.stdout, rerun.stderr)
        deadline = time.monotonic() + 5
        while _owned_by(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # SIGKILL is delivered asynchronously
        assert _owned_by(proc.pid) == [], trial
        assert _litter(proc.pid) == [], trial
        assert _landed(repo) == reference_tree, trial
    # The test means something: the first kill landed while a row ran.
    print(f"random kills: {trials} trials, {adopted} with launched rows adopted, 0 failures")
    assert adopted > 0


def _wait_for(marker: Path, proc: subprocess.Popen[str]) -> None:
    """Until a row has started (a generous bound only against a hang: the
    result does not depend on how long it takes)."""
    deadline = time.monotonic() + 300
    while not marker.exists():
        assert proc.poll() is None, "prepare-merge ended before any row started"
        assert time.monotonic() < deadline, "no row started within 300 s"
        time.sleep(0.01)
