"""The result reader and the comparison (pure): the reference's shapes, deltas and flags."""

from __future__ import annotations

import json

import pytest

from governance.results.compare import Point, compare
from governance.results.reader import Figures, ResultError, gpu_count, read_result

ROW = {"tp": 8, "pp": 1, "pcp-size": 1, "conc": 4}


def test_the_serving_benchmark_file_is_divided_by_the_gpus() -> None:
    data = {"total_token_throughput": 8000.0, "median_ttft_ms": 120.0, "median_tpot_ms": 20.0}
    figures = read_result(json.dumps(data).encode(), ROW)
    assert (figures.tput_per_gpu, figures.ttft_ms, figures.tpot_ms) == (1000.0, 120.0, 20.0)
    assert figures.interactivity == 50.0  # tokens/s per user


def test_the_aggregated_and_agentic_shape_is_in_seconds() -> None:
    agg = {"tput_per_gpu": 512.5, "median_ttft": 0.25, "median_tpot": 0.02, "median_intvty": 48.0}
    figures = read_result(json.dumps(agg).encode(), ROW)
    assert (figures.tput_per_gpu, figures.ttft_ms, figures.tpot_ms) == (512.5, 250.0, 20.0)
    assert figures.interactivity == 48.0
    agentic = {"tput_per_gpu": 10.0, "p50_ttft": 1.5, "p50_tpot": 0.04}
    figures = read_result(json.dumps(agentic).encode(), ROW)
    assert (figures.ttft_ms, figures.tpot_ms, figures.interactivity) == (1500.0, 40.0, 25.0)


def test_lm_eval_results_keep_scores_not_stderr() -> None:
    data = {
        "results": {
            "gsm8k": {
                "alias": "gsm8k",
                "exact_match,strict-match": 0.9,
                "exact_match_stderr,strict-match": 0.01,
            }
        }
    }
    figures = read_result(json.dumps(data).encode(), ROW)
    assert figures.kind == "eval" and figures.scores == {"gsm8k exact_match,strict-match": 0.9}


@pytest.mark.parametrize("data", [b"not json", b"[]", b'{"duration": 3}', b'{"results": {}}'])
def test_unreadable_results_say_why(data: bytes) -> None:
    with pytest.raises(ResultError):
        read_result(data, ROW)


def test_gpu_count_single_and_multi_node() -> None:
    assert gpu_count({"tp": 4, "pp": 2}) == 8
    workers = {"prefill": {"tp": 4, "num-worker": 2}, "decode": {"tp": 8, "num-worker": 1}}
    assert gpu_count(workers) == 16


def point(run: int, conc: str, tput: float, tpot: float, key: str = "a") -> Point:
    return Point(key, (key,), conc, Figures("throughput", tput, 100.0, tpot, 1000.0 / tpot), run)


def test_pairs_with_main_s_newest_and_flags_past_the_threshold() -> None:
    main = [point(1, "4", 100.0, 10.0), point(5, "4", 200.0, 10.0), point(2, "8", 300.0, 10.0)]
    pr = [point(9, "4", 210.0, 12.0), point(10, "8", 300.0, 10.0), point(11, "4", 1.0, 1.0, "b")]
    out = compare(pr, main, threshold=5.0)
    by = {(c.pr.config, c.pr.conc): c for c in out}
    first = by[("a", "4")]
    assert first.main is not None and first.main.run_id == 5  # the newest main run
    changes = {c.metric: c for c in first.changes}
    assert (
        changes["tput_per_gpu"].relative == pytest.approx(0.05) and not changes["tput_per_gpu"].flag
    )
    assert changes["tpot_ms"].relative == pytest.approx(0.2) and changes["tpot_ms"].flag == "worse"
    assert changes["interactivity"].flag == "worse"
    assert [c.flag for c in by[("a", "8")].changes] == ["", "", "", ""]
    assert by[("b", "4")].main is None and by[("b", "4")].changes == ()
    assert [(c.pr.config, c.pr.conc) for c in out] == [("a", "4"), ("a", "8"), ("b", "4")]
