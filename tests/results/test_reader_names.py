"""Which recorded file is a run's result (`results.service.result_name`): never
one of gov's own files in the row's folder, whatever the script's name sorts
after (the launch wrapper's gov-launch.json and gov-exit.json came with
adoption)."""

from __future__ import annotations

import pytest

from governance.results.service import result_name

GOVS = ["gov-row.json", "gov-launch.json", "gov-exit.json", "gov-slurm.json", "gov-job.log"]


@pytest.mark.parametrize("script", ["qwen3.5_fp8_h200.json", "dsv4_fp8_mi300x.json"])
def test_the_scripts_result_whatever_its_name_sorts_after(script: str) -> None:
    assert result_name([*GOVS, script, "meta_env.json"], is_eval=False) == script


def test_a_processed_aggregate_is_preferred_and_evals_read_lm_evals_results() -> None:
    names = [*GOVS, "zeta.json", "agg_zeta.json", "results_2026.json"]
    assert result_name(names, is_eval=False) == "agg_zeta.json"
    assert result_name(names, is_eval=True) == "results_2026.json"
    assert result_name(GOVS, is_eval=False) is None
