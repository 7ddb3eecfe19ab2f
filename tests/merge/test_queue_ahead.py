"""`gov queue run --ahead N`: candidates built ahead on their predecessors land
the main the sequential train lands, a car refused in the middle never takes
the cars behind it down, and the candidates' refs are recorded, then gone."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from governance.core.state import StateLayout
from governance.merge.candidate import candidate_ref
from governance.merge.queue import CarResult
from governance.merge.queue_render import render_status, status_data
from governance.merge.queue_store import Candidate, QueueStore
from tests.harness import Repo, commit_example, run_gov, run_process
from tests.merge.queue_train import CHANGELOG, Train, build_train, entry, example_train


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
    bad = run_gov("queue", "run", "--ahead", "1", "--dry-run", cwd=train.path)
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
@pytest.mark.parametrize(
    ("point", "rerun_ahead"),
    [
        ("check", "2"), ("commit", "2"), ("queue-candidate", "2"), ("land", "2"),
        ("queue-prepared", "2"),
        # Rerun one car at a time: it lets the dead run's candidates go too.
        ("queue-candidate", "0"), ("land", "0"),
    ],
)  # fmt: skip
def test_kill_mid_speculation_then_rerun_converges(
    make_repo: Callable[..., Repo], gov_exe: str, point: str, rerun_ahead: str
) -> None:
    reference = example_train(make_repo, f"reference-{point}-{rerun_ahead}")
    assert reference.run().exit_code == 1

    train = example_train(make_repo, f"killed-{point}-{rerun_ahead}")
    command = [gov_exe, "queue", "run", "--no-sweep", "--ahead", "2"]
    killed = run_process(command, cwd=train.path, env={"GOV_TEST_CRASH_AFTER": point})
    assert killed.exit_code == -signal.SIGKILL, killed.stdout + killed.stderr
    # Invariant 4: every ref the dead run left under refs/gov/queue is one the
    # database records, at the value it records.
    held = {c.ref: c.sha for c in train.store().candidates(held=True)}
    refs = train.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/gov/queue")
    assert dict(line.split() for line in refs.splitlines()) == held
    assert bool(held) is (point != "check" and point != "commit")

    rerun = run_gov("queue", "run", "--no-sweep", "--ahead", rerun_ahead, cwd=train.path)
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


NOTES = "notes.txt"


def change_notes(train: Train, branch: str, line: str, *, onto: str | None = None) -> None:
    """Commit `line` as the first line of notes.txt on `branch` (moved to `onto`
    first, with the PR's entry appended to main's changelog: the author
    rebasing the PR and resolving its conflict)."""
    train.git("checkout", "-q", *(("-B", branch, onto) if onto else (branch,)))
    if onto:
        pr = int(branch.removeprefix("pr-"))
        (train.path / CHANGELOG).write_bytes(train.changelog(onto) + entry(pr).encode())
    rest = (train.path / NOTES).read_text().split("\n", 1)[1]
    (train.path / NOTES).write_text(f"{line}\n{rest}")
    train.repo.commit(f"{branch}: {line}")
    train.git("checkout", "-q", "main")


def test_a_conflicting_car_is_parked_behind_the_car_it_conflicts_with_and_lands_after_it(
    make_repo: Callable[..., Repo],
) -> None:
    """104 conflicts (in notes.txt, not the changelog) with 103, not with 101 or
    main: built on 103's candidate it is parked behind 103, not refused; once 103
    has landed its author resolves the conflict, and 104 is retried and lands."""
    repo = commit_example(make_repo("parking"))
    repo.write(NOTES, "first line\nsecond line\n")
    repo.commit("Notes")
    train = build_train(repo, (101, 103, 104))
    change_notes(train, "pr-103", "first line, as 103 has it")
    change_notes(train, "pr-104", "first line, as 104 has it")
    store = train.store()
    for i, pr in enumerate((101, 103, 104)):
        store.add(pr, "normal", f"2026-08-15T10:00:{i:02d}")
    status: dict[int, str] = {}

    parked: dict[int, list[object]] = {}  # `status --format json`: blocked_by per car

    def after(car: CarResult) -> None:
        status[car.pr] = render_status(store.cars(), store.paused)
        cars = status_data(store.cars(), store.paused)["cars"]
        parked[car.pr] = [c["blocked_by"] for c in cars]  # type: ignore[index, union-attr]
        if car.pr == 103:  # 104's author resolves against main as 103 left it
            change_notes(train, "pr-104", "first line, as 103 and 104 agree", onto="main")

    result = train.run(ahead=2, say=after)

    assert [(c.pr, c.outcome) for c in result.cars] == [
        (101, "landed"), (103, "landed"), (104, "landed"),
    ]  # fmt: skip
    # While 101 landed, 104 waited parked behind 103 (found by merging it onto
    # main, then 101's candidate, then 103's), not refused.
    assert "PR #104" in status[101] and "parked behind PR #103" in status[101], status[101]
    assert parked[101] == [None, 103, None]  # 103, 104 waiting; 101 landed
    assert "parked" not in status[103]  # 103 landed: 104 is retried
    assert [(c.base_pr) for c in store.candidates(104)] == [0]  # built once, on main
    assert store.candidates(104)[0].base == store.get(103).landed_commit  # type: ignore[union-attr]
    assert train.changelog() == train.expected(101, 103, 104)
    notes = train.repo.show("main", NOTES).decode()
    assert notes == "first line, as 103 and 104 agree\nsecond line\n"
    landed = train.landed()
    assert [store.get(pr).landed_commit for pr in (101, 103, 104)] == landed  # type: ignore[union-attr]
    assert train.leftovers() == []


def stacked_train(make_repo: Callable[..., Repo], name: str) -> Train:
    """101 and 103, and 104 branched from 101's head (a stacked PR): its candidate,
    built on 103's (itself on 101's), has another merge base than main once 101
    has landed as one squashed commit."""
    train = example_train(make_repo, name, (101, 103))
    train.git("checkout", "-q", "-b", "pr-104", "pr-101")
    (train.path / CHANGELOG).write_bytes(train.changelog("pr-101") + entry(104).encode())
    train.repo.commit("PR 104, on PR 101")
    train.git("checkout", "-q", "main")
    train.forge().open_pull(104, "pr-104", title="PR 104")
    train.store().add(104, "normal", "2026-08-15T10:00:09")
    return train


def test_a_stacked_pr_lands_as_in_the_sequential_train(make_repo: Callable[..., Repo]) -> None:
    sequential = stacked_train(make_repo, "sequential")
    assert sequential.run().exit_code == 0
    train = stacked_train(make_repo, "ahead")
    result = train.run(ahead=2)
    assert [(c.pr, c.outcome) for c in result.cars] == [
        (101, "landed"), (103, "landed"), (104, "landed"),
    ]  # fmt: skip
    assert train.changelog() == sequential.changelog() == train.expected(101, 103, 104)
    assert train.tree("main") == sequential.tree("main")
    assert [bases(train.store(), pr) for pr in (101, 103, 104)] == [[0], [101], [103]]
    assert train.leftovers() == []


def test_a_candidate_whose_base_changed_is_built_again(make_repo: Callable[..., Repo]) -> None:
    """A commit lands on main by hand after 101: 103's candidate, built on 101's,
    no longer has main's tree under it, so it is built again on main and lands
    as that candidate, one commit on the hand-landed one."""
    train = example_train(make_repo, "moved", (101, 103))
    store = train.store()

    def after(car: CarResult) -> None:
        if car.pr == 101:
            train.repo.write(NOTES, "landed by hand\n")
            train.repo.commit("By hand")

    result = train.run(ahead=1, say=after)
    assert [(c.pr, c.outcome) for c in result.cars] == [(101, "landed"), (103, "landed")]
    by_hand = train.git("rev-parse", "main^")
    assert train.git("log", "-1", "--format=%s", by_hand) == "By hand"
    assert [(c.base_pr, c.base) for c in store.candidates(103)] == [
        (101, store.candidates(101)[0].sha), (0, by_hand),
    ]  # fmt: skip
    assert train.tree("main") == store.candidates(103)[-1].tree
    assert train.changelog() == train.expected(101, 103)
    assert train.leftovers() == []


def test_a_car_added_again_forgets_its_released_candidates(tmp_path: Path) -> None:
    store = QueueStore(StateLayout(tmp_path / ".git"))
    store.add(7, "normal", "2026-08-15T10:00:00")
    built = Candidate(7, "a" * 40, "b" * 40, "c" * 40, "d" * 40, 0, candidate_ref(7))
    store.add_candidate(built)
    store.release_candidates(7)
    store.add_candidate(replace(built, sha="e" * 40))  # held: a killed run's, its ref recorded
    store.refused(7, "check", "GOV501", "2026-08-15T10:01:00")
    store.add(7, "normal", "2026-08-15T10:02:00")
    assert [c.sha for c in store.candidates(7)] == ["e" * 40]  # the held one stays recorded
