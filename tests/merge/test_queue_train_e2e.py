"""`gov queue run --sweep --launcher local` end to end: six PRs of the example
repository (tests/merge/queue_sweep_train.py), real git, the local forge, the
launch scripts run as subprocesses, the run ledger counted before and after
every car.

Four land in order, one commit each, and main passes `gov check --main`; the
PR whose script exits 1 is refused at its sweep, the one that conflicts in
`configs/` at merge, each with a located finding; a row is launched only when
no run of its identity exists yet (measured by the PR itself, or by a car
ahead), so the car behind the failure launches nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from governance.core.state import StateLayout
from governance.forge.local import LocalForge
from governance.merge.car_rows import RowCounts
from governance.merge.queue import CarOptions, CarResult, RunResult, prepare_car, run_queue
from governance.merge.queue_ahead import Ahead
from governance.merge.queue_store import QueueStore
from governance.merge.sweep_step import SweepOptions
from tests.harness import Repo, commit_example, commit_launch_scripts, run_gov, run_process
from tests.merge.queue_sweep_train import AMD, IMAGE, MTP_SCRIPT, SweptTrain, build_swept_train

ORDER = (201, 203, 204, 205, 202, 206)  # the failing 205 runs before 202, the conflicting 206 last
LANDS = (201, 203, 204, 202)


@pytest.fixture
def train(sweep_repo: Repo, tmp_path: Path) -> SweptTrain:
    return build_swept_train(sweep_repo, tmp_path)


def store_of(train: SweptTrain) -> QueueStore:
    return QueueStore(StateLayout(train.gitrepo().git_dir))


def enqueue(train: SweptTrain, prs: tuple[int, ...] = ORDER) -> QueueStore:
    store = store_of(train)
    for i, pr in enumerate(prs):
        store.add(pr, "normal", f"2026-08-15T10:00:{i:02d}")
    return store


@dataclass
class Ledgered:
    """Per car, the identities the ledger held before it and the runs it launched."""

    train: SweptTrain
    before: dict[int, dict[str, int]] = field(default_factory=dict)
    launched: dict[int, int] = field(default_factory=dict)
    _measured: dict[str, int] = field(default_factory=dict)
    _count: int = 0

    def start(self) -> None:
        self._measured, self._count = self.train.measured(), len(self.train.runs())

    def since_start(self) -> int:
        """Runs launched since the last `start`."""
        return len(self.train.runs()) - self._count

    def __call__(self, car: CarResult) -> None:
        self.before[car.pr] = self._measured
        self.launched[car.pr] = self.since_start()
        self.start()


def run_train(
    train: SweptTrain, store: QueueStore, ledgered: Ledgered, ahead: int = 0
) -> RunResult:
    """`gov queue run --sweep --launcher local [--ahead N]` in process."""
    repo = train.gitrepo()
    sweep = SweepOptions(launcher="local", progress=False)
    options = CarOptions("main", sweep=True, sweep_options=sweep, poll_interval=0.01)
    forge = LocalForge(repo, repository_slug="SemiAnalysisAI/InferenceX")
    ledgered.start()
    land = prepare_car(repo, options)
    speculate = Ahead(repo, store, forge, options, ahead) if ahead else None
    return run_queue(
        repo, store, forge, land, main_branch="main", say=ledgered, speculate=speculate
    )


def rows_of(store: QueueStore, pr: int) -> RowCounts | None:
    car = store.get(pr)
    assert car is not None
    return car.rows


def sweep_rows(car: CarResult) -> list[dict[str, Any]]:
    assert car.report is not None and car.report.sweep_data is not None, car
    rows: list[dict[str, Any]] = car.report.sweep_data["rows"]  # type: ignore[assignment]
    return rows


def image_line(train: SweptTrain) -> int:
    """The line of the image both 203 and 206 change, in main's master config."""
    lines = train.repo.show(train.base, AMD).decode().splitlines()
    start = lines.index("dsv4-fp8-mi300x-vllm:")
    return next(i for i, text in enumerate(lines[start:], start + 1) if IMAGE in text)


def assert_main_is_the_four_cars(train: SweptTrain, store: QueueStore) -> None:
    landed = train.landed()
    cars = [store.get(pr) for pr in LANDS]
    assert [c.landed_commit for c in cars if c is not None] == landed  # in order, one each
    assert train.subjects() == [f"PR {pr} (#{pr})" for pr in LANDS]
    parents = [train.base, *landed[:-1]]
    for pr, commit, parent, car in zip(LANDS, landed, parents, cars, strict=True):
        assert train.git("rev-parse", f"{commit}^@") == parent  # one parent: no merge commit
        assert car is not None and train.git("rev-parse", f"{car.prepared}^{{tree}}") == (
            train.git("rev-parse", f"{commit}^{{tree}}")
        )
        each = run_gov(
            "-C", str(train.path), "check", "--main", "--expect-pr", str(pr),
            "--base-ref", parent, "--head-ref", commit, "--exact-base",
        )  # fmt: skip
        assert each.exit_code == 0, each.stdout + each.stderr
    # And the four together: main since the train started, canonical links only.
    whole = run_gov("-C", str(train.path), "check", "--main", "--base-ref", train.base)
    assert whole.exit_code == 0, whole.stdout + whole.stderr
    assert "4 appended entries" in whole.stdout and "main mode" in whole.stdout, whole.stdout
    assert train.git("status", "--porcelain") == ""
    assert train.git("for-each-ref", "refs/gov") == ""
    assert train.git("worktree", "list", "--porcelain").count("worktree ") == 1


def assert_refusals_are_located(train: SweptTrain, store: QueueStore) -> None:
    failing, conflicting = store.get(205), store.get(206)
    assert failing is not None and failing.state == "refused"
    # prepare-merge sweeps inside its `plan` step: the reason says it was the sweep.
    assert failing.refused_step == "plan" and failing.refused_reason.startswith("sweep: ")
    assert f"{MTP_SCRIPT}: GOV705 " in failing.refused_reason
    assert "failed (exit 1)" in failing.refused_reason, failing.refused_reason
    assert conflicting is not None and conflicting.state == "refused"
    assert conflicting.refused_step == "merge"
    assert f"{AMD}:{image_line(train)}:1: GOV611" in conflicting.refused_reason
    forge = LocalForge(train.gitrepo(), repository_slug="SemiAnalysisAI/InferenceX")
    assert [forge.get_pull(pr).state for pr in (205, 206)] == ["open", "open"]


@pytest.mark.parametrize("ahead", [0, 5])
def test_six_prs_four_land_and_only_unmeasured_identities_are_launched(
    train: SweptTrain, ahead: int
) -> None:
    """Sequential, and with every car built ahead (`--ahead 5`): the same cars
    land, the same refusals, the same rows launched per car."""
    store = enqueue(train)
    ledgered = Ledgered(train)
    result = run_train(train, store, ledgered, ahead)

    assert [(c.pr, c.outcome, c.step) for c in result.cars] == [
        (201, "landed", ""), (203, "landed", ""), (204, "landed", ""),
        (205, "refused", "plan"), (202, "landed", ""), (206, "refused", "merge"),
    ]  # fmt: skip
    assert result.exit_code == 1
    assert_main_is_the_four_cars(train, store)
    assert_refusals_are_located(train, store)

    by_pr = {car.pr: car for car in result.cars}
    # Every row a car reuses is an identity the ledger held before the car: the
    # PR's own sweep, or (for 204's 1k/1k rows, whose image 203 bumped) 203's.
    for pr in (201, 203, 204, 202):
        for row in sweep_rows(by_pr[pr]):
            if row["action"] == "reused":
                origin = {"pr": pr, "ahead": 203}[row["origin"]]
                assert ledgered.before[pr].get(row["identity"]) == origin, (pr, row)
    # A car launches exactly the rows no run of their identity exists for yet.
    for pr in (201, 203, 204, 202):
        rows = sweep_rows(by_pr[pr])
        fresh = {r["key"] for r in rows if r["identity"] not in ledgered.before[pr]}
        assert {r["key"] for r in rows if r["action"] == "rerun"} == fresh, pr
        assert ledgered.launched[pr] == len(fresh), pr
        assert all(r.get("status", "succeeded") == "succeeded" for r in rows)
    # The second car on the same recipe: its sglang rows are its own, the 1k/1k
    # rows are what 203 measured; only the 8k/1k rows it retuned (TP 4) run.
    rows = sweep_rows(by_pr[204])
    origins = [r.get("origin", "run") for r in rows]
    assert {o: origins.count(o) for o in origins} == {"pr": 10, "ahead": 6, "run": 7}
    assert ledgered.launched[204] == 7
    # The failing car runs its failing rows again (they never succeeded) ...
    failing = sweep_rows(by_pr[205])
    assert ledgered.launched[205] == len(failing) == 5
    of_205 = [r for r in train.runs() if r.pr == 205]  # its own sweep's, then the car's
    assert len(of_205) == 2 * len(failing)
    assert {(r.status, r.exit_code) for r in of_205} == {("failed", 1)}
    # ... and the cars behind it launch nothing: every row of 202 is its own.
    assert ledgered.launched[202] == 0 and ledgered.launched[206] == 0
    assert {r["origin"] for r in sweep_rows(by_pr[202])} == {"pr"}
    # The queue keeps each car's rows by decision, as its sweep report has them.
    stored = {pr: rows_of(store, pr) for pr in ORDER}
    assert stored == {car.pr: car.rows for car in result.cars}
    assert stored[204] == RowCounts(pr=10, ahead=6, run=7)
    assert stored[205] == RowCounts(run=5, failed=5)
    assert stored[206] is None  # refused at merge, before any sweep


def test_the_same_train_through_the_cli_subprocess(train: SweptTrain, gov_exe: str) -> None:
    for pr in ORDER:
        added = run_gov("-C", str(train.path), "queue", "add", "--pr", str(pr))
        assert added.exit_code == 0, added.stderr
    before = len(train.runs())
    argv = [gov_exe, "queue", "run", "--sweep", "--launcher", "local", "--format", "json"]
    ran = run_process(argv, cwd=train.path, env={"GOV_PUBLISH_ON_MERGE": "true"})
    assert ran.exit_code == 1, ran.stdout + ran.stderr
    cars = json.loads(ran.stdout)["cars"]
    assert [(c["pr"], c["outcome"], c["step"]) for c in cars] == [
        (201, "landed", ""), (203, "landed", ""), (204, "landed", ""),
        (205, "refused", "plan"), (202, "landed", ""), (206, "refused", "merge"),
    ]  # fmt: skip
    store = store_of(train)
    assert_main_is_the_four_cars(train, store)
    assert_refusals_are_located(train, store)
    # 204's seven retuned rows and 205's five failing ones: nothing else ran.
    assert len(train.runs()) - before == 7 + 5
    # `gov queue status` shows each car's rows by decision, in text and JSON.
    status = run_gov("-C", str(train.path), "queue", "status", "--format", "json")
    rows = {c["pr"]: c["rows"] for c in json.loads(status.stdout)["cars"]}
    assert rows == {
        201: {"pr": 12, "ahead": 0, "run": 0, "failed": 0},
        203: {"pr": 13, "ahead": 0, "run": 0, "failed": 0},
        204: {"pr": 10, "ahead": 6, "run": 7, "failed": 0},
        205: {"pr": 0, "ahead": 0, "run": 5, "failed": 5},
        202: {"pr": 5, "ahead": 0, "run": 0, "failed": 0},
        206: None,
    }
    assert {c["pr"]: c["rows"] for c in cars} == rows  # what `run --format json` said per car
    text = run_gov("-C", str(train.path), "queue", "status").stdout
    assert "(rows: 10 by the PR, 6 by a car ahead, 7 run)" in text, text
    # publish-on-merge: each car the queue landed is published once it lands,
    # every row it stands on (measured by the PR, by a car ahead, or run), and
    # nothing of the refused cars.
    with sqlite3.connect(train.path / ".git" / "gov" / "results.sqlite3") as db:
        published = dict(
            db.execute("SELECT commit_sha, COUNT(*) FROM results GROUP BY commit_sha").fetchall()
        )
    stood_on = {
        pr: sum(v for k, v in rows[pr].items() if k in ("pr", "ahead", "run")) for pr in LANDS
    }
    assert published == {
        store.get(pr).landed_commit: stood_on[pr]  # type: ignore[union-attr]
        for pr in LANDS
    }
    assert "at plan (rows: 0 by the PR, 0 by a car ahead, 5 run, 5 of them failed): sweep:" in text


def test_a_pr_landed_by_hand_mid_run_rebases_the_train_and_reruns_nothing_unaffected(
    sweep_repo: Repo, tmp_path: Path
) -> None:
    """After car 204, a maintainer lands PR 207 with `gov prepare-merge --sweep`
    (it raises the H200 ceiling to 128). The queue reads main again: the cars
    behind build on 207's commit, and 202's rows launch nothing: its five
    points are its own, the new conc-128 point is the one 207 measured."""
    train = build_swept_train(sweep_repo, tmp_path, (*ORDER, 207))
    store = enqueue(train)
    ledgered = Ledgered(train)
    by_hand: dict[str, Any] = {}

    def land_207_after_204(car: CarResult) -> None:
        ledgered(car)
        if car.pr != 204:
            return
        done = run_gov(
            "-C", str(train.path), "prepare-merge", "--pr", "207", "--sweep",
            "--launcher", "local", "--format", "json",
        )  # fmt: skip
        assert done.exit_code == 0, done.stdout + done.stderr
        by_hand.update(json.loads(done.stdout), launched=ledgered.since_start())
        ledgered.start()

    repo = train.gitrepo()
    sweep = SweepOptions(launcher="local", progress=False)
    options = CarOptions("main", sweep=True, sweep_options=sweep, poll_interval=0.01)
    forge = LocalForge(repo, repository_slug="SemiAnalysisAI/InferenceX")
    ledgered.start()
    result = run_queue(
        repo, store, forge, prepare_car(repo, options), main_branch="main", say=land_207_after_204
    )

    assert [(c.pr, c.outcome) for c in result.cars] == [
        (201, "landed"), (203, "landed"), (204, "landed"),
        (205, "refused"), (202, "landed"), (206, "refused"),
    ]  # fmt: skip
    hand = by_hand["merge_commit"]
    assert train.subjects() == [f"PR {pr} (#{pr})" for pr in (201, 203, 204, 207, 202)]
    assert train.landed()[3] == hand and by_hand["launched"] == 0  # 207's rows are its own
    # The train re-based: the next car started on 207's commit, 202 landed on it.
    by_pr = {car.pr: car for car in result.cars}
    assert by_pr[205].report is not None and by_pr[205].report.main_tip == hand
    car_202 = store.get(202)
    assert car_202 is not None and train.git("rev-parse", f"{car_202.landed_commit}^@") == hand
    # 202: no launch; the conc-128 row is 207's run, every other row its own.
    assert ledgered.launched[202] == 0
    rows = sweep_rows(by_pr[202])
    assert sorted((r["conc"], r["origin"]) for r in rows) == [
        (4, "pr"), (8, "pr"), (16, "pr"), (32, "pr"), (64, "pr"), (128, "ahead"),
    ]  # fmt: skip
    ahead = next(r for r in rows if r["origin"] == "ahead")
    assert ledgered.before[202][ahead["identity"]] == 207
    # The cars around it launched what they launch without a hand landing.
    assert (ledgered.launched[205], ledgered.launched[206]) == (5, 0)
    whole = run_gov("-C", str(train.path), "check", "--main")
    assert whole.exit_code == 0, whole.stdout + whole.stderr


def test_ahead_rebuilds_behind_a_failure_and_parks_a_conflict(
    train: SweptTrain, make_repo: Callable[..., Repo], tmp_path: Path
) -> None:
    """`--ahead 5`: every car is built on the candidate of the car before it.
    205's sweep fails when it is the front car, so 202 (built on 205's
    candidate) is rebuilt on the surviving predecessor (204, landed: main's
    tip) and launches nothing; 206, which conflicts with 203 in `configs/`
    but not with main, is parked behind 203 until 203 lands, then refused at
    merge as the sequential train refuses it. Main ends byte for byte as the
    sequential train (`--ahead 0`) leaves it."""
    scratch = tmp_path / "sequential-plans"
    scratch.mkdir()
    sequential = build_swept_train(
        commit_launch_scripts(commit_example(make_repo("sequential"))), scratch
    )
    run_train(sequential, enqueue(sequential), Ledgered(sequential))

    store = enqueue(train)
    parked: dict[
        int, dict[int, int]
    ] = {}  # after each car: the waiting cars parked, and behind whom

    class Watching(Ledgered):
        def __call__(self, car: CarResult) -> None:
            super().__call__(car)
            parked[car.pr] = {c.pr: c.blocked_by for c in store.cars(("queued",)) if c.blocked_by}

    ledgered = Watching(train)
    result = run_train(train, store, ledgered, ahead=5)

    assert [(c.pr, c.outcome, c.step) for c in result.cars] == [
        (201, "landed", ""), (203, "landed", ""), (204, "landed", ""),
        (205, "refused", "plan"), (202, "landed", ""), (206, "refused", "merge"),
    ]  # fmt: skip
    assert train.repo.show("main", "perf-changelog.yaml") == sequential.repo.show(
        "main", "perf-changelog.yaml"
    )
    assert train.git("rev-parse", "main^{tree}") == sequential.git("rev-parse", "main^{tree}")
    assert_main_is_the_four_cars(train, store)
    assert_refusals_are_located(train, store)

    def built_on(pr: int) -> list[tuple[int, str]]:
        return [(held.base_pr, held.base) for held in store.candidates(pr)]

    candidate = {pr: store.candidates(pr)[0].sha for pr in (201, 203, 204, 205)}
    assert built_on(201) == [(0, train.base)]
    assert built_on(203) == [(201, candidate[201])]
    assert built_on(204) == [(203, candidate[203])]
    assert built_on(205) == [(204, candidate[204])]
    landed_204 = store.get(204).landed_commit  # type: ignore[union-attr]
    assert built_on(202) == [(205, candidate[205]), (0, landed_204)]  # rebuilt on 204
    assert train.git("rev-parse", f"{landed_204}^{{tree}}") == store.candidates(204)[0].tree
    assert built_on(206) == []  # parked, then refused on main: never a candidate
    assert parked[201] == {206: 203} and parked[203] == {}  # retried once 203 landed
    # The rebuilt car launches nothing: each of its rows is decided by identity.
    assert ledgered.launched == {201: 0, 203: 0, 204: 7, 205: 5, 202: 0, 206: 0}
    assert {r["origin"] for r in sweep_rows(next(c for c in result.cars if c.pr == 202))} == {"pr"}
    assert store.candidates(held=True) == []
