"""`gov queue run --ahead N`: candidates built ahead on their predecessors land
the main the sequential train lands, a car refused in the middle never takes
the cars behind it down, and the candidates' refs are recorded, then gone."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable

import pytest

from governance.merge.queue_store import QueueStore
from tests.harness import Repo, run_gov, run_process
from tests.merge.queue_train import example_train


def bases(store: QueueStore, pr: int) -> list[int]:
    """Whose candidate each of the car's candidates was built on (0: main's tip)."""
    return [held.base_pr for held in store.candidates(pr)]


@pytest.mark.parametrize("ahead", [1, 2, 5])
def test_ahead_lands_the_same_main_as_the_sequential_train(
    make_repo: Callable[..., Repo], ahead: int
) -> None:
    sequential = example_train(make_repo, "sequential")
    assert sequential.run().exit_code == 1  # PR 102 refused at check

    train = example_train(make_repo, f"ahead-{ahead}")
    store = train.store()
    result = train.run(ahead=ahead)

    assert [(c.pr, c.outcome, c.step) for c in result.cars] == [
        (101, "landed", ""), (102, "refused", "check"), (103, "landed", ""),
    ]  # fmt: skip
    assert result.exit_code == 1
    assert train.changelog() == sequential.changelog() == train.expected(101, 103)
    assert train.tree("main") == sequential.tree("main")
    refused = store.get(102)
    assert refused is not None and refused.refused_step == "check"
    assert refused.refused_reason == sequential.store().get(102).refused_reason  # type: ignore[union-attr]
    # Candidates ahead: 101 on main's tip, 103 on 101's candidate (102 failed on it
    # and waited for its own turn on main), each landed as exactly its candidate's tree.
    assert bases(store, 101) == [0] and store.candidates(101)[0].base == train.base
    assert bases(store, 102) == []  # never a candidate: refused
    assert bases(store, 103) == [101]
    assert store.candidates(103)[0].base == store.candidates(101)[0].sha
    landed = train.landed()
    for pr, commit in zip((101, 103), landed, strict=True):
        car = store.get(pr)
        assert car is not None and car.landed_commit == commit and car.attempts == 1
        assert train.tree(commit) == store.candidates(pr)[-1].tree
    assert train.git("rev-parse", f"{landed[1]}^") == landed[0]  # one commit each, in order
    # Nothing held once the pass is over: no ref, and the database records none.
    assert store.candidates(held=True) == []
    assert train.leftovers() == []
    assert train.git("status", "--porcelain") == ""
    assert train.git("symbolic-ref", "--short", "HEAD") == "main"


def test_ahead_through_the_cli_and_its_status(make_repo: Callable[..., Repo]) -> None:
    train = example_train(make_repo, "cli")
    bad = run_gov("queue", "run", "--ahead", "1", "--watch", "5", cwd=train.path)
    assert bad.exit_code == 2 and "--ahead" in bad.stderr, bad.stdout + bad.stderr
    ran = run_gov("queue", "run", "--no-sweep", "--ahead", "2", cwd=train.path)
    assert ran.exit_code == 1, ran.stdout + ran.stderr
    assert "[NO] PR #102 refused at check" in ran.stdout, ran.stdout
    assert train.changelog() == train.expected(101, 103)
    status = json.loads(run_gov("queue", "status", "--format", "json", cwd=train.path).stdout)
    assert {c["pr"]: (c["state"], c["blocked_by"], c["candidate"]) for c in status["cars"]} == {
        101: ("landed", None, None), 102: ("refused", None, None), 103: ("landed", None, None),
    }  # fmt: skip
    assert train.leftovers() == []


# check, commit: prepare-merge's steps run dry while 101's candidate is built
# (nothing written yet); queue-candidate: 101's candidate recorded and its ref
# made; land: 101 merged by the dead run with the candidates of 101 and 103 held;
# queue-prepared: prepare-merge returned, the queue had not recorded it.
@pytest.mark.parametrize("point", ["check", "commit", "queue-candidate", "land", "queue-prepared"])
def test_kill_mid_speculation_then_rerun_converges(
    make_repo: Callable[..., Repo], gov_exe: str, point: str
) -> None:
    reference = example_train(make_repo, f"reference-{point}")
    assert reference.run().exit_code == 1

    train = example_train(make_repo, f"killed-{point}")
    command = [gov_exe, "queue", "run", "--no-sweep", "--ahead", "2"]
    killed = run_process(command, cwd=train.path, env={"GOV_TEST_CRASH_AFTER": point})
    assert killed.exit_code == -signal.SIGKILL, killed.stdout + killed.stderr
    # Invariant 4: every ref the dead run left under refs/gov/queue is one the
    # database records, at the value it records.
    held = {c.ref: c.sha for c in train.store().candidates(held=True)}
    refs = train.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/gov/queue")
    assert dict(line.split() for line in refs.splitlines()) == held
    assert bool(held) is (point != "check" and point != "commit")

    rerun = run_gov("queue", "run", "--no-sweep", "--ahead", "2", cwd=train.path)
    assert rerun.exit_code == 1, rerun.stdout + rerun.stderr  # PR 102 refused again
    states = {car.pr: car.state for car in train.store().cars()}
    assert states == {101: "landed", 102: "refused", 103: "landed"}
    assert train.changelog() == reference.changelog() == train.expected(101, 103)
    assert train.tree("main") == reference.tree("main")
    assert len(train.landed()) == 2  # merged once each, never twice
    assert train.store().candidates(held=True) == []
    assert train.leftovers() == []
    assert train.git("status", "--porcelain") == ""
    assert train.git("symbolic-ref", "--short", "HEAD") == "main"
