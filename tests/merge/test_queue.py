"""`gov queue`: three PRs forked from the same main land one car at a time
through prepare-merge; a refused car never stops the train; priorities,
pause, the commands' refusals and the status JSON."""

from __future__ import annotations

import json

import pytest

from governance.core import locks
from governance.core.diagnostics import GovError
from governance.git.repo import GitRepo
from governance.merge.journal import lock_path
from governance.merge.queue import _tested_is_landed, queue_lock, run_queue
from governance.merge.report import MergeReport
from tests.harness import Repo, run_gov
from tests.merge.queue_train import LINK, build_train


def test_a_refused_car_never_stops_the_train(example_repo: Repo) -> None:
    train = build_train(example_repo)
    store = train.store()
    for pr in (101, 102, 103):
        store.add(pr, "normal", f"2026-08-15T10:00:0{pr - 100}")
    result = train.run()

    assert [(c.pr, c.outcome) for c in result.cars] == [
        (101, "landed"), (102, "refused"), (103, "landed"),
    ]  # fmt: skip
    assert result.exit_code == 1
    refused = store.get(102)
    assert refused is not None and refused.state == "refused"
    assert refused.refused_step == "check"
    # The reason is prepare-merge's located finding: the file, the line, the code.
    assert "perf-changelog.yaml:" in refused.refused_reason
    assert "GOV5" in refused.refused_reason and "dsr1-fp8-zz999-sglang" in refused.refused_reason

    # Changelog by construction: main's bytes, then PR 101's and PR 103's entries, canonical.
    assert train.changelog() == train.expected(101, 103)
    assert train.changelog().startswith(train.original)  # history bytes unchanged
    # One PR = one commit on main, in landing order.
    landed = train.landed()
    cars = [store.get(101), store.get(103)]
    assert [c.landed_commit for c in cars if c is not None] == landed
    assert train.git("rev-parse", f"{landed[0]}^") == train.base
    assert train.git("rev-list", "--count", f"{train.base}..main") == "2"
    # Tested = landed: each landed tree is the tree prepare-merge checked.
    for car in cars:
        assert car is not None and car.state == "landed" and car.attempts == 1
        assert train.tree(car.landed_commit) == train.tree(car.prepared)
    assert train.forge().get_pull(101).state == "merged"
    assert train.forge().get_pull(102).state == "open"  # refused, left as it was
    assert train.leftovers() == []
    assert train.git("status", "--porcelain") == ""
    assert train.git("symbolic-ref", "--short", "HEAD") == "main"

    # Nothing left to do: a second pass lands nothing, exit 0.
    again = train.run()
    assert again.cars == [] and again.exit_code == 0


def test_priority_first_then_enqueue_time(example_repo: Repo) -> None:
    train = build_train(example_repo, (101, 103))
    store = train.store()
    store.add(101, "low", "2026-08-15T10:00:00")
    store.add(103, "high", "2026-08-15T11:00:00")
    assert [c.pr for c in store.cars(("queued",))] == [103, 101]
    result = train.run()
    assert [(c.pr, c.outcome) for c in result.cars] == [(103, "landed"), (101, "landed")]
    assert train.changelog() == train.expected(103, 101)
    assert len(train.landed()) == 2


def test_pause_blocks_run_and_resume_lets_it_land(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    assert run_gov("queue", "add", "--pr", "101", cwd=train.path).exit_code == 0
    assert run_gov("queue", "pause", cwd=train.path).exit_code == 0
    paused = run_gov("queue", "run", "--once", cwd=train.path)
    assert paused.exit_code == 0, paused.stdout + paused.stderr
    assert "paused" in paused.stdout
    assert train.landed() == []
    car = train.store().get(101)
    assert car is not None and car.state == "queued" and car.attempts == 0

    assert run_gov("queue", "resume", cwd=train.path).exit_code == 0
    ran = run_gov("queue", "run", "--no-sweep", cwd=train.path)
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert "PR #101 landed" in ran.stdout
    assert train.changelog() == train.expected(101)


def test_add_and_remove_refuse_what_they_cannot_do(example_repo: Repo) -> None:
    train = build_train(example_repo, (101, 103))
    unknown = run_gov("queue", "add", "--pr", "999", cwd=train.path)
    assert unknown.exit_code == 2 and "999" in unknown.stderr
    train.forge().close_pull(103)
    closed = run_gov("queue", "add", "--pr", "103", cwd=train.path)
    assert closed.exit_code == 2 and "PR #103 is closed" in closed.stderr
    assert run_gov("queue", "add", "--pr", "101", cwd=train.path).exit_code == 0
    twice = run_gov("queue", "add", "--pr", "101", cwd=train.path)
    assert twice.exit_code == 2 and "already in the queue" in twice.stderr
    assert "hint:" in twice.stderr
    bad = run_gov("queue", "add", "--pr", "101", "--priority", "urgent", cwd=train.path)
    assert bad.exit_code == 2
    absent = run_gov("queue", "remove", "--pr", "103", cwd=train.path)
    assert absent.exit_code == 2 and "not in the queue" in absent.stderr
    removed = run_gov("queue", "remove", "--pr", "101", cwd=train.path)
    assert removed.exit_code == 0, removed.stderr
    ran = run_gov("queue", "run", cwd=train.path)
    assert ran.exit_code == 0 and "nothing to do" in ran.stdout, ran.stdout
    assert train.landed() == []
    # A removed car can be queued again.
    again = run_gov("queue", "add", "--pr", "101", "--priority", "high", cwd=train.path)
    assert again.exit_code == 0 and "position 1 of 1" in again.stdout, again.stdout


def test_status_json_shape(example_repo: Repo) -> None:
    train = build_train(example_repo)
    for pr, priority in ((101, "normal"), (102, "normal"), (103, "high")):
        done = run_gov("queue", "add", "--pr", str(pr), "--priority", priority, cwd=train.path)
        assert done.exit_code == 0, done.stderr
    before = json.loads(run_gov("queue", "status", "--format", "json", cwd=train.path).stdout)
    assert before["paused"] is False and before["waiting"] == 3
    assert [(c["position"], c["pr"], c["priority"]) for c in before["cars"]] == [
        (1, 103, "high"), (2, 101, "normal"), (3, 102, "normal"),
    ]  # fmt: skip
    assert set(before["cars"][0]) == {
        "position", "pr", "priority", "enqueued_at", "state", "attempts", "updated_at",
        "landed_commit", "prepared", "refusal", "rows", "blocked_by", "candidate",
    }  # fmt: skip
    assert before["cars"][0]["blocked_by"] is None and before["cars"][0]["candidate"] is None

    ran = run_gov("queue", "run", "--format", "json", cwd=train.path)
    assert ran.exit_code == 1, ran.stdout + ran.stderr
    run = json.loads(ran.stdout)
    assert [(c["pr"], c["outcome"], c["step"]) for c in run["cars"]] == [
        (103, "landed", ""), (101, "landed", ""), (102, "refused", "check"),
    ]  # fmt: skip
    assert run["cars"][2]["report"]["failed_step"] == "check"

    after = json.loads(run_gov("queue", "status", "--format", "json", cwd=train.path).stdout)
    assert after["waiting"] == 0
    by_pr = {c["pr"]: c for c in after["cars"]}
    assert by_pr[103]["state"] == "landed" and by_pr[103]["refusal"] is None
    assert by_pr[103]["rows"] is None  # not swept: no rows decided
    assert by_pr[103]["landed_commit"] == train.landed()[0]
    assert by_pr[102]["state"] == "refused" and by_pr[102]["refusal"]["step"] == "check"
    assert by_pr[102]["position"] is None
    text = run_gov("queue", "status", cwd=train.path).stdout
    assert "0 car(s) waiting" in text and "refused  at check" in text, text
    assert train.changelog() == train.expected(103, 101)


def test_dry_run_changes_nothing(example_repo: Repo) -> None:
    train = build_train(example_repo, (101, 102))
    store = train.store()
    store.add(101, "normal", "2026-08-15T10:00:00")
    store.add(102, "normal", "2026-08-15T10:00:01")
    before = train.git("for-each-ref")
    result = train.run(dry_run=True)
    assert [(c.pr, c.outcome) for c in result.cars] == [(101, "would"), (102, "refused")]
    assert train.git("for-each-ref") == before
    assert [c.state for c in store.cars()] == ["queued", "queued"]
    assert f"{LINK}101" not in train.changelog().decode()


def test_one_runner_per_repository(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    train.store().add(101, "normal", "2026-08-15T10:00:00")
    with locks.hold(queue_lock(GitRepo(train.path)), "a test holding the queue"):
        second = run_gov("queue", "run", cwd=train.path)
    assert second.exit_code == 2 and "another run holds the lock" in second.stderr, second.stderr
    car = train.store().get(101)
    assert car is not None and car.state == "queued" and car.attempts == 0


def test_a_car_whose_pr_another_run_holds_waits_and_the_train_goes_on(
    example_repo: Repo,
) -> None:
    train = build_train(example_repo, (101, 103))
    store = train.store()
    store.add(101, "normal", "2026-08-15T10:00:00")
    store.add(103, "normal", "2026-08-15T10:00:01")
    with locks.hold(lock_path(GitRepo(train.path).git_dir, 101), "prepare-merge --pr 101"):
        result = train.run()
    assert [(c.pr, c.outcome) for c in result.cars] == [(101, "busy"), (103, "landed")]
    assert result.exit_code == 2
    car = store.get(101)
    assert car is not None and car.state == "queued"
    assert train.changelog() == train.expected(103)
    assert [(c.pr, c.outcome) for c in train.run().cars] == [(101, "landed")]
    assert train.changelog() == train.expected(103, 101)


def test_broken_settings_on_main_stop_the_run_and_the_car_waits(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    train.store().add(101, "normal", "2026-08-15T10:00:00")
    train.repo.commit("Break the settings", **{".gov.toml": "sweep-on-merge = 'maybe'\n"})
    ran = run_gov("queue", "run", cwd=train.path)
    assert ran.exit_code == 2, ran.stdout + ran.stderr
    assert ".gov.toml" in ran.stderr and "sweep-on-merge" in ran.stderr, ran.stderr
    car = train.store().get(101)
    assert car is not None and car.state == "queued" and car.attempts == 0


def test_a_landed_tree_that_is_not_the_tested_tree_is_caught(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    repo = GitRepo(train.path)
    tested = train.git("rev-parse", "pr-101")
    assert _tested_is_landed(repo, tested, tested, train.base) == ""
    problem = _tested_is_landed(repo, train.base, tested, train.base)
    assert "differs from the tested tree" in problem
    other = train.repo.commit_on("elsewhere", {"x": "1\n"}, "another parent")
    assert "is not one commit on" in _tested_is_landed(repo, tested, tested, other)


def test_a_setup_failure_mid_run_puts_the_car_back_and_stops(example_repo: Repo) -> None:
    train = build_train(example_repo, (101, 103))
    store = train.store()
    store.add(101, "normal", "2026-08-15T10:00:00")
    store.add(103, "normal", "2026-08-15T10:00:01")

    def land_car(pr: int) -> MergeReport:
        raise GovError("main's settings cannot be read", "fix them on main")

    repo = GitRepo(train.path)
    with pytest.raises(GovError, match="settings"):
        run_queue(repo, store, train.forge(), land_car, main_branch="main")
    assert [(c.pr, c.state, c.attempts) for c in store.cars()] == [
        (101, "queued", 1), (103, "queued", 0),
    ]  # fmt: skip
    assert train.landed() == []


def test_a_pr_merged_outside_the_queue_is_marked_landed_not_merged_again(
    example_repo: Repo,
) -> None:
    train = build_train(example_repo, (101, 103))
    store = train.store()
    store.add(101, "normal", "2026-08-15T10:00:00")
    store.add(103, "normal", "2026-08-15T10:00:01")
    by_hand = run_gov("prepare-merge", "--pr", "103", cwd=train.path)
    assert by_hand.exit_code == 0, by_hand.stdout + by_hand.stderr
    result = train.run()
    assert [(c.pr, c.outcome) for c in result.cars] == [(101, "landed"), (103, "landed")]
    assert "already merged" in result.cars[1].detail
    assert train.changelog() == train.expected(103, 101)
    assert len(train.landed()) == 2
    car = store.get(103)
    assert car is not None and car.landed_commit == train.landed()[0] and car.prepared == ""


def test_a_pr_closed_while_queued_is_refused_and_the_train_goes_on(example_repo: Repo) -> None:
    train = build_train(example_repo, (101, 103))
    store = train.store()
    store.add(101, "high", "2026-08-15T10:00:00")
    store.add(103, "normal", "2026-08-15T10:00:01")
    train.forge().close_pull(101)
    result = train.run()
    assert [(c.pr, c.outcome, c.step) for c in result.cars] == [
        (101, "refused", "preflight"), (103, "landed", ""),
    ]  # fmt: skip
    car = store.get(101)
    assert car is not None and "closed" in car.refused_reason, car
    assert train.changelog() == train.expected(103)
