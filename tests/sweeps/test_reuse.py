"""reuse.decide: a row is reused only from a successful run of the same recipe
fingerprint and concurrency on a PR commit; every other row says why it reruns."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.sweeps.identity import PlanRow, conc_label
from governance.sweeps.reuse import Reason, ReuseMode, RunRecord, decide
from tests.sweeps.conftest import fingerprint_of, make_row

FPS = [fingerprint_of(str(i)) for i in range(4)]
COMMITS = [f"{i:040x}" for i in range(1, 5)]
STATUSES = ["succeeded", "failed", "timed-out", "cancelled"]


def row(fp: str | None, conc: int, index: int = 0, **changes: object) -> PlanRow:
    data = make_row(conc=conc, **changes)
    if fp is None:
        data.pop("recipe-fingerprint")
        return PlanRow("evals", "evals", index, data)
    data["recipe-fingerprint"] = fp
    return PlanRow("single_node", "1k1k", index, data)


def run(
    run_id: int, fp: str | None, conc: str, commit: str, status: str = "succeeded"
) -> RunRecord:
    return RunRecord(run_id, fp, conc, commit, status, ended_at=f"2026-01-01T00:00:{run_id:02d}")


def test_reused_from_a_successful_run_on_a_pr_commit() -> None:
    rows = [row(FPS[0], 4), row(FPS[0], 8, 1)]
    runs = [run(1, FPS[0], "4", COMMITS[0]), run(2, FPS[0], "8", COMMITS[3])]
    decision = decide(rows, runs, {COMMITS[0]})
    assert [d.reused for d in decision.rows] == [True, False]
    assert decision.rows[0].reused_from and decision.rows[0].reused_from.run_id == 1
    assert decision.rows[1].reason is Reason.NO_RUN  # fingerprint known, but not from this PR


def test_reasons() -> None:
    head = [row(FPS[1], 4, image="old")]
    rows = [
        row(FPS[0], 4),  # failed before on a PR commit
        row(FPS[2], 4, image="new"),  # same slot as the PR head row, other fingerprint
        row(FPS[3], 4, tp=4),  # never seen anywhere (another slot)
        row(None, 4),  # eval
    ]
    runs = [run(1, FPS[0], "4", COMMITS[0], "failed"), run(2, FPS[1], "4", COMMITS[0])]
    decision = decide(rows, runs, {COMMITS[0]}, pr_head_rows=head)
    assert [d.reason for d in decision.rows] == [
        Reason.PREVIOUS_FAILED,
        Reason.CHANGED_BY_MAIN,
        Reason.NEW_RECIPE,
        Reason.EVAL,
    ]
    assert "run 1 failed" in decision.rows[0].detail
    assert decision.rows[1].detail == f"PR head ran {FPS[1][:16]}"
    assert str(Reason.EVAL) == "eval rows carry no fingerprint"


def test_newest_success_wins_and_success_beats_failure() -> None:
    runs = [
        run(1, FPS[0], "4", COMMITS[0]),
        run(2, FPS[0], "4", COMMITS[1], "failed"),
        run(3, FPS[0], "4", COMMITS[1]),
    ]
    decision = decide([row(FPS[0], 4)], runs, set(COMMITS))
    assert decision.rows[0].reused_from and decision.rows[0].reused_from.run_id == 3


def test_modes() -> None:
    rows = [row(FPS[0], 4), row(FPS[1], 4)]
    runs = [run(1, FPS[0], "4", COMMITS[0])]
    all_rerun = decide(rows, runs, {COMMITS[0]}, mode=ReuseMode.RERUN_ALL)
    assert not all_rerun.reused and {d.reason for d in all_rerun.rows} == {Reason.RERUN_ALL}
    only = decide(rows, runs, {COMMITS[0]}, mode=ReuseMode.REUSE_ONLY)
    assert not only.ok and len(only.rerun) == 1
    assert decide(rows[:1], runs, {COMMITS[0]}, mode=ReuseMode.REUSE_ONLY).ok


def test_commit_case_is_ignored() -> None:
    runs = [run(1, FPS[0], "4", COMMITS[0].upper())]
    assert decide([row(FPS[0], 4)], runs, {COMMITS[0]}).rows[0].reused


rows_strategy = st.lists(
    st.tuples(st.sampled_from([*FPS, None]), st.sampled_from([4, 8, 16])), max_size=12
)
runs_strategy = st.lists(
    st.tuples(
        st.sampled_from([*FPS, None]),
        st.sampled_from(["4", "8", "16", "4x8"]),
        st.sampled_from(COMMITS),
        st.sampled_from(STATUSES),
    ),
    max_size=20,
)


@settings(max_examples=300, deadline=None)
@given(
    rows_strategy,
    runs_strategy,
    st.sets(st.sampled_from(COMMITS)),
    st.sampled_from(list(ReuseMode)),
    st.booleans(),
)
def test_property_reuse_only_with_identical_point(
    row_specs, run_specs, pr_commits, mode, with_head
) -> None:
    rows = [row(fp, conc, i) for i, (fp, conc) in enumerate(row_specs)]
    runs = [run(i + 1, *spec) for i, spec in enumerate(run_specs)]
    head = [row(FPS[0], 4, image="head")] if with_head else None
    decision = decide(rows, runs, pr_commits, pr_head_rows=head, mode=mode)
    assert [d.row for d in decision.rows] == rows
    for d in decision.rows:
        fp, conc = d.row.fingerprint, conc_label(d.row)
        qualifying = [
            r
            for r in runs
            if r.fingerprint == fp
            and fp
            and r.conc == conc
            and r.status == "succeeded"
            and r.commit in pr_commits
        ]
        if d.reused:
            source = d.reused_from
            assert source is not None and d.reason is None
            assert source.fingerprint == fp and source.conc == conc
            assert source.status == "succeeded" and source.commit in pr_commits
            assert mode is not ReuseMode.RERUN_ALL
        else:
            assert isinstance(d.reason, Reason)
            if fp is None:
                assert d.reason is Reason.EVAL
            elif mode is not ReuseMode.RERUN_ALL:
                assert not qualifying  # nothing reusable was passed over
    assert decision.ok == (mode is not ReuseMode.REUSE_ONLY or not decision.rerun)
