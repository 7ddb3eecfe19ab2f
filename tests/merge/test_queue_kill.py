"""SIGKILL `gov queue run` in the middle of its first car (the test-only
GOV_TEST_CRASH_AFTER hook: the queue's own points and prepare-merge's steps),
then a plain `gov queue run` resumes the `running` car, lets prepare-merge
recover from its journal, and converges to the main an uninterrupted run
lands: same changelog bytes, same tree, one commit per landed PR, nothing of
gov left behind, and a PR the dead run had already merged is never merged twice."""

from __future__ import annotations

import random
import signal
import time
from collections.abc import Callable

import pytest

from tests.harness import Repo, run_gov, run_process, start_process
from tests.merge.queue_train import Train, example_train

# queue-start: marked running, prepare-merge not started; then after each of
# prepare-merge's steps (from commit on, its journal is at that step; land: PR
# 101 merged by the dead run); queue-prepared: prepare-merge returned, the
# queue had not recorded it yet.
STEPS = (
    "preflight", "validate", "merge", "resolve", "canonicalize", "commit",
    "check", "plan", "push", "checks", "land",
)  # fmt: skip
POINTS = ("queue-start", *STEPS, "queue-prepared")


def _train(make_repo: Callable[..., Repo], name: str) -> Train:
    return example_train(make_repo, name)


@pytest.mark.parametrize("point", POINTS)
def test_kill_mid_car_then_rerun_converges(
    make_repo: Callable[..., Repo], gov_exe: str, point: str
) -> None:
    reference = _train(make_repo, f"reference-{point}")
    assert reference.run().exit_code == 1  # PR 102 refused at check

    train = _train(make_repo, f"killed-{point}")
    killed = run_process(
        [gov_exe, "queue", "run", "--no-sweep"],
        cwd=train.path,
        env={"GOV_TEST_CRASH_AFTER": point},
    )
    assert killed.exit_code == -signal.SIGKILL, killed.stdout + killed.stderr
    first = train.store().get(101)
    assert first is not None and first.state == "running" and first.attempts == 1
    merged_by_dead_run = point in ("land", "queue-prepared")
    assert (train.forge().get_pull(101).state == "merged") is merged_by_dead_run
    assert len(train.landed()) == int(merged_by_dead_run)

    rerun = run_gov("queue", "run", "--no-sweep", cwd=train.path)
    assert rerun.exit_code == 1, rerun.stdout + rerun.stderr  # PR 102 refused again
    assert rerun.stdout.index("PR #101") < rerun.stdout.index("PR #102")  # resumed first
    assert ("PR #101 already merged" in rerun.stdout) is merged_by_dead_run, rerun.stdout

    states = {car.pr: car.state for car in train.store().cars()}
    assert states == {101: "landed", 102: "refused", 103: "landed"}
    assert train.changelog() == reference.changelog() == train.expected(101, 103)
    assert train.tree("main") == reference.tree("main")
    landed = train.landed()
    assert len(landed) == 2  # merged once each, never twice
    assert [train.store().get(pr).landed_commit for pr in (101, 103)] == landed  # type: ignore[union-attr]
    assert train.git("rev-parse", f"{landed[0]}^") == train.base
    assert train.leftovers() == []
    assert train.git("status", "--porcelain") == ""
    assert train.git("symbolic-ref", "--short", "HEAD") == "main"


@pytest.mark.parametrize("ahead", ["0", "2"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_at_a_random_moment_then_rerun_converges(
    make_repo: Callable[..., Repo], gov_exe: str, seed: int, ahead: str
) -> None:
    """SIGKILL at a moment no crash point chose: once the first car is running,
    after a seeded random pause. Wherever the process was (a git command, a
    journal write, between cars, or already done), a rerun lands what an
    uninterrupted run lands. The outcome never depends on the moment, nor on
    whether the cars behind were being built ahead (`--ahead 2`)."""
    reference = _train(make_repo, f"reference-{seed}-{ahead}")
    assert reference.run().exit_code == 1

    train = _train(make_repo, f"killed-{seed}-{ahead}")
    command = [gov_exe, "queue", "run", "--no-sweep", "--ahead", ahead]
    process = start_process(command, cwd=train.path)
    try:
        while process.poll() is None and not (
            any(car.state != "queued" for car in train.store().cars())
            or train.store().candidates()  # --ahead: a candidate is built
        ):
            time.sleep(0.01)  # until the train has started (no assertion rests on it)
        time.sleep(random.Random(seed).uniform(0.0, 1.5))
    finally:
        process.kill()
        process.communicate()

    rerun = run_gov("queue", "run", "--no-sweep", "--ahead", ahead, cwd=train.path)
    assert rerun.exit_code in (0, 1), rerun.stdout + rerun.stderr  # 0: nothing left to refuse
    states = {car.pr: car.state for car in train.store().cars()}
    assert states == {101: "landed", 102: "refused", 103: "landed"}, rerun.stdout + rerun.stderr
    assert train.leftovers() == [], rerun.stdout  # before the byte checks: says what was left
    assert train.changelog() == reference.changelog() == train.expected(101, 103)
    assert train.tree("main") == reference.tree("main")
    assert len(train.landed()) == 2  # merged once each, never twice
    assert train.git("status", "--porcelain") == ""
