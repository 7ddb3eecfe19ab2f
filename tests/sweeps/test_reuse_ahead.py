"""reuse.decide with `ahead`: a row the PR's runs cannot vouch for is reused
from a run main's newer commits stand on (a car landed ahead of it), on the
same identity only; the PR's own run comes first, and drift, failure or
another concurrency never qualify."""

from __future__ import annotations

from governance.sweeps.reuse import Reason, ReuseMode, decide
from tests.sweeps.test_reuse import COMMITS, HARNESS, IMAGES, LIB, row, run

PR_COMMIT, AHEAD_COMMIT = COMMITS[0], COMMITS[1]


def test_a_row_measured_by_a_car_ahead_is_reused_on_its_identity() -> None:
    target = row(IMAGES[1], 4)
    ahead = run(7, target, AHEAD_COMMIT)
    decision = decide([target], [ahead], {PR_COMMIT}, ahead={7})
    (d,) = decision.rows
    assert d.reused and d.ahead and d.reused_from is not None and d.reused_from.run_id == 7
    # The same run, not among the runs main's newer commits stand on: it is nobody's.
    (plain,) = decide([target], [ahead], {PR_COMMIT}).rows
    assert not plain.reused and plain.reason is Reason.NO_RUN


def test_the_prs_own_run_comes_first() -> None:
    target = row(IMAGES[0], 4)
    runs = [run(1, target, PR_COMMIT), run(7, target, AHEAD_COMMIT)]
    (d,) = decide([target], runs, {PR_COMMIT}, ahead={7}).rows
    assert d.reused and not d.ahead and d.reused_from is not None and d.reused_from.run_id == 1


def test_only_the_exact_identity_of_a_succeeded_verified_run_qualifies() -> None:
    target = row(IMAGES[1], 4)
    drifted = run(7, target, AHEAD_COMMIT, harness={**HARNESS, LIB: "c" * 40})
    failed = run(8, target, AHEAD_COMMIT, "failed")
    unverified = run(9, target, AHEAD_COMMIT, evidence="result files missing: r.json")
    other_conc = run(10, row(IMAGES[1], 8), AHEAD_COMMIT)
    runs = [drifted, failed, unverified, other_conc]
    (d,) = decide([target], runs, {PR_COMMIT}, ahead={7, 8, 9, 10}).rows
    assert not d.reused and not d.ahead


def test_a_pr_run_refused_for_drift_falls_back_to_an_exact_run_ahead() -> None:
    """The PR's sweep ran a helper it changed later (its run cannot vouch), but a
    car ahead measured exactly what lands."""
    target = row(IMAGES[0], 4)
    mine = run(1, target, PR_COMMIT, harness={**HARNESS, LIB: "c" * 40})
    ahead = run(7, target, AHEAD_COMMIT)
    only_mine = decide([target], [mine], {PR_COMMIT}, pr_touched={LIB}).rows[0]
    assert only_mine.reason is Reason.HARNESS_BY_PR
    (d,) = decide([target], [mine, ahead], {PR_COMMIT}, pr_touched={LIB}, ahead={7}).rows
    assert d.reused and d.ahead


def test_rerun_all_reuses_nothing_from_ahead_either() -> None:
    target = row(IMAGES[1], 4)
    mode = ReuseMode.RERUN_ALL
    (d,) = decide([target], [run(7, target, AHEAD_COMMIT)], {PR_COMMIT}, ahead={7}, mode=mode).rows
    assert not d.reused and d.reason is Reason.RERUN_ALL
