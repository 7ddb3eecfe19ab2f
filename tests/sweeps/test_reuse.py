"""reuse.decide: a row is reused only from a succeeded, verified run of the same
recipe and concurrency on a PR commit, with the same harness or one that only
main changed; every other row says why it reruns."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.sweeps.identity import PlanRow, conc_label
from governance.sweeps.reuse import (
    IdentifiedRow,
    Reason,
    ReuseMode,
    RunRecord,
    decide,
    identified,
)
from tests.sweeps.conftest import make_row

COMMITS = [f"{i:040x}" for i in range(1, 5)]
STATUSES = ["succeeded", "failed", "timed-out", "cancelled"]
SCRIPT = "benchmarks/single_node/x.sh"
LIB = "benchmarks/benchmark_lib.sh"
HARNESS = {SCRIPT: "a" * 40, LIB: "b" * 40}
IMAGES = ["img:1", "img:2", "img:3", "img:4"]


def plan_row(image: str | None, conc: int, index: int = 0, **changes: object) -> PlanRow:
    """A throughput row of `image`, or an eval row (image None): fingerprints
    are computed, as `gov plan` writes them."""
    if image is None:
        data = make_row(conc=conc, **changes)
        data.pop("recipe-fingerprint")
        return PlanRow("evals", "evals", index, data)
    return PlanRow("single_node", "1k1k", index, make_row(conc=conc, image=image, **changes))


def row(
    image: str | None, conc: int, index: int = 0, harness: Mapping[str, str] | None = None
) -> IdentifiedRow:
    return identified(plan_row(image, conc, index), HARNESS if harness is None else harness)


def run(
    run_id: int,
    of: IdentifiedRow,
    commit: str,
    status: str = "succeeded",
    *,
    harness: Mapping[str, str] | None = None,
    evidence: str = "",
    conc: str | None = None,
) -> RunRecord:
    return RunRecord(
        run_id,
        of.row.fingerprint,
        conc or of.conc,
        commit,
        status,
        ended_at=f"2026-01-01T00:00:{run_id:02d}",
        evidence=evidence,
        recipe=of.recipe,
        harness=dict(of.harness or {}) if harness is None else harness,
    )


def test_reused_from_a_successful_run_on_a_pr_commit() -> None:
    rows = [row(IMAGES[0], 4), row(IMAGES[0], 8, 1)]
    runs = [run(1, rows[0], COMMITS[0]), run(2, rows[1], COMMITS[3])]
    decision = decide(rows, runs, {COMMITS[0]})
    assert [d.reused for d in decision.rows] == [True, False]
    assert decision.rows[0].reused_from and decision.rows[0].reused_from.run_id == 1
    assert decision.rows[0].identity == rows[0].identity and decision.rows[0].drift == ()
    assert decision.rows[1].reason is Reason.NO_RUN  # recipe known, but not from this PR


def test_eval_rows_are_reused_like_any_other_row() -> None:
    evals = row(None, 4)
    assert evals.row.fingerprint is None and len(evals.recipe) == 64
    decision = decide([evals], [run(1, evals, COMMITS[0])], {COMMITS[0]})
    assert decision.rows[0].reused


def test_reasons() -> None:
    head = [plan_row(IMAGES[1], 4)]
    rows = [
        row(IMAGES[0], 4),  # failed before on a PR commit
        row(IMAGES[2], 4),  # same slot as the PR head row, other recipe
        identified(plan_row(IMAGES[3], 4, tp=4), HARNESS),  # never seen anywhere (another slot)
        row(None, 4),  # eval, never run
    ]
    runs = [run(1, rows[0], COMMITS[0], "failed"), run(2, identified(head[0], HARNESS), COMMITS[0])]
    decision = decide(rows, runs, {COMMITS[0]}, pr_head_rows=head)
    assert [d.reason for d in decision.rows] == [
        Reason.PREVIOUS_FAILED,
        Reason.CHANGED_BY_MAIN,
        Reason.NEW_RECIPE,
        Reason.NEW_RECIPE,
    ]
    assert "run 1 failed" in decision.rows[0].detail
    assert decision.rows[1].detail == f"PR head ran {head[0].fingerprint[:16]}"  # type: ignore[index]


def test_unverified_files_and_runs_without_identity_are_no_sources() -> None:
    target = row(IMAGES[0], 4)
    missing = run(1, target, COMMITS[0], evidence="result files missing: r.json")
    legacy = RunRecord(2, target.row.fingerprint, "4", COMMITS[0], "succeeded")
    first = decide([target], [missing], {COMMITS[0]}).rows[0]
    assert first.reason is Reason.RESULTS_UNVERIFIABLE
    assert first.detail == "run 1: result files missing: r.json"
    assert decide([target], [legacy], {COMMITS[0]}).rows[0].reason is Reason.NO_IDENTITY


def test_a_harness_file_the_pr_touched_reruns_even_when_restored() -> None:
    """The sweep ran a doctored helper; the PR's last commit restored it, so the
    landing tree equals main's: the PR touched the file, so the row reruns."""
    landing = row(IMAGES[0], 4)
    doctored = run(1, landing, COMMITS[0], harness={**HARNESS, LIB: "d" * 40})
    decision = decide([landing], [doctored], {COMMITS[0]}, pr_touched={LIB, "perf-changelog.yaml"})
    assert decision.rows[0].reason is Reason.HARNESS_BY_PR
    assert decision.rows[0].detail == f"{LIB} changed after run 1"


def test_drift_from_main_only_is_reused_and_listed_or_rerun_on_request() -> None:
    landing = row(IMAGES[0], 4)
    swept = run(1, landing, COMMITS[0], harness={**HARNESS, LIB: "0" * 40})
    reused = decide([landing], [swept], {COMMITS[0]}, pr_touched={"perf-changelog.yaml"}).rows[0]
    assert reused.reused and [d.path for d in reused.drift] == [LIB]
    rerun = decide(
        [landing], [swept], {COMMITS[0]}, pr_touched={"perf-changelog.yaml"}, harness_change="rerun"
    ).rows[0]
    assert rerun.reason is Reason.HARNESS_BY_MAIN and LIB in rerun.detail
    # The sweep ran a dirty working tree: the drift in that file is the PR's.
    dirty = RunRecord(**{**_fields(swept), "uncommitted": frozenset({LIB})})
    ran_dirty = decide([landing], [dirty], {COMMITS[0]}, pr_touched=set()).rows[0]
    assert ran_dirty.reason is Reason.HARNESS_BY_PR
    assert ran_dirty.detail.endswith(f"(which ran {LIB} as no commit holds it)")
    # Unknown touched paths, or a file outside the repository: nobody can say it was main.
    unknown = decide([landing], [swept], {COMMITS[0]}, pr_touched=None).rows[0]
    assert unknown.reason is Reason.HARNESS_UNATTRIBUTED
    outside = {**HARNESS, "/opt/scripts/x.sh": "1" * 40}
    elsewhere = run(2, landing, COMMITS[0], harness=outside)
    moved = decide(
        [row(IMAGES[0], 4, harness={**HARNESS, "/opt/scripts/x.sh": "2" * 40})],
        [elsewhere],
        {COMMITS[0]},
    )
    assert moved.rows[0].reason is Reason.HARNESS_UNATTRIBUTED


def _fields(record: RunRecord) -> dict[str, object]:
    return {name: getattr(record, name) for name in RunRecord.__dataclass_fields__}


def test_an_exact_harness_match_beats_a_newer_drifted_run() -> None:
    landing = row(IMAGES[0], 4)
    runs = [run(1, landing, COMMITS[0]), run(2, landing, COMMITS[1], harness={SCRIPT: "f" * 40})]
    decision = decide([landing], runs, set(COMMITS), pr_touched=set())
    assert decision.rows[0].reused_from and decision.rows[0].reused_from.run_id == 1
    assert decision.rows[0].drift == ()


def test_an_untraced_row_is_never_reused() -> None:
    target = row(IMAGES[0], 4)
    untraced = IdentifiedRow(target.row, target.recipe, target.conc, None)
    decision = decide([untraced], [run(1, target, COMMITS[0])], {COMMITS[0]})
    assert decision.rows[0].reason is Reason.HARNESS_UNKNOWN and untraced.identity is None


def test_newest_success_wins_and_success_beats_failure() -> None:
    target = row(IMAGES[0], 4)
    runs = [
        run(1, target, COMMITS[0]),
        run(2, target, COMMITS[1], "failed"),
        run(3, target, COMMITS[1]),
    ]
    decision = decide([target], runs, set(COMMITS))
    assert decision.rows[0].reused_from and decision.rows[0].reused_from.run_id == 3


def test_modes() -> None:
    rows = [row(IMAGES[0], 4), row(IMAGES[1], 4)]
    runs = [run(1, rows[0], COMMITS[0])]
    all_rerun = decide(rows, runs, {COMMITS[0]}, mode=ReuseMode.RERUN_ALL)
    assert not all_rerun.reused and {d.reason for d in all_rerun.rows} == {Reason.RERUN_ALL}
    only = decide(rows, runs, {COMMITS[0]}, mode=ReuseMode.REUSE_ONLY)
    assert not only.ok and len(only.rerun) == 1
    assert decide(rows[:1], runs, {COMMITS[0]}, mode=ReuseMode.REUSE_ONLY).ok
    with pytest.raises(ValueError, match="harness_change"):
        decide(rows, runs, {COMMITS[0]}, harness_change="maybe")


def test_commit_case_is_ignored() -> None:
    target = row(IMAGES[0], 4)
    assert decide([target], [run(1, target, COMMITS[0].upper())], {COMMITS[0]}).rows[0].reused


HARNESSES = [HARNESS, {**HARNESS, LIB: "c" * 40}, {SCRIPT: "a" * 40}]
rows_strategy = st.lists(
    st.tuples(
        st.sampled_from([*IMAGES[:3], None]),
        st.sampled_from([4, 8, 16]),
        st.sampled_from(range(len(HARNESSES))),
    ),
    max_size=10,
)
runs_strategy = st.lists(
    st.tuples(
        st.sampled_from(range(10)),  # which row's recipe (modulo the rows)
        st.sampled_from(["4", "8", "16", "4x8"]),
        st.sampled_from(COMMITS),
        st.sampled_from(STATUSES),
        st.sampled_from(range(len(HARNESSES))),
        st.booleans(),  # files verified
        st.booleans(),  # ran the helper as its commit holds it
    ),
    max_size=16,
)


@settings(max_examples=300, deadline=None)
@given(
    rows_strategy,
    runs_strategy,
    st.sets(st.sampled_from(COMMITS)),
    st.sampled_from(list(ReuseMode)),
    st.one_of(st.none(), st.sets(st.sampled_from([LIB, SCRIPT]))),
    st.sampled_from(["reuse", "rerun"]),
)
def test_property_reuse_only_from_a_provable_run(
    row_specs, run_specs, pr_commits, mode, pr_touched, harness_change
) -> None:
    rows = [row(image, conc, i, HARNESSES[h]) for i, (image, conc, h) in enumerate(row_specs)]
    runs = [
        RunRecord(**{
            **_fields(run(i + 1, rows[pick % len(rows)], commit, status, harness=HARNESSES[h],
                          conc=conc, evidence="" if verified else "result files missing: x")),
            "uncommitted": frozenset() if clean else frozenset({LIB}),
        })
        for i, (pick, conc, commit, status, h, verified, clean) in enumerate(run_specs)
        if rows
    ]  # fmt: skip
    decision = decide(
        rows, runs, pr_commits, pr_touched=pr_touched, harness_change=harness_change, mode=mode
    )
    assert [d.row for d in decision.rows] == [r.row for r in rows]
    for item, d in zip(rows, decision.rows, strict=True):
        assert d.identity == item.identity
        exact = [
            r
            for r in runs
            if (r.recipe, r.conc) == (item.recipe, item.conc)
            and r.status == "succeeded"
            and not r.evidence
            and r.commit in pr_commits
            and r.harness == item.harness
        ]
        if d.reused:
            source = d.reused_from
            assert source is not None and d.reason is None and mode is not ReuseMode.RERUN_ALL
            assert (source.recipe, source.conc) == (item.recipe, conc_label(item.row))
            assert source.status == "succeeded" and not source.evidence
            assert source.commit in pr_commits
            drifted = {p for p in (item.harness or {}).keys() | (source.harness or {}).keys()
                       if (item.harness or {}).get(p) != (source.harness or {}).get(p)}  # fmt: skip
            assert {x.path for x in d.drift} == drifted
            if drifted:  # only main's changes are ever reused, and only when allowed
                assert harness_change == "reuse" and pr_touched is not None
                assert not drifted & pr_touched and not drifted & source.uncommitted
        else:
            assert isinstance(d.reason, Reason)
            if mode is not ReuseMode.RERUN_ALL:
                assert not exact  # an identical run is never passed over
    assert decision.ok == (mode is not ReuseMode.REUSE_ONLY or not decision.rerun)
