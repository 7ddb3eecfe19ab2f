"""Two PRs measure the same points (same recipes, same concurrencies) and get
different numbers: each PR's reuse and `gov results compare` read that PR's
own run folders, and once PR 7 lands, PR 8 is compared with PR 7's numbers.
(Before runs had folders of their own, PR 8's launch replaced the shared
point folder and PR 7 "reused" PR 8's numbers.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from governance.core.settings import load_settings
from governance.git.repo import GitRepo
from governance.merge.sweep_service import sweep_after_merge
from governance.sweeps.reuse import ReuseMode
from tests.harness import PROJECT, Repo, run_gov
from tests.results.test_cli_results import ENTRY, SCRIPT

# One script for both PRs (so the recipes and the harness are the same); the
# throughput it reports is read from a file outside the repository, which the
# test sets before each PR's launch.
BENCH = """#!/bin/sh
set -eu
tput=$(cat {knob})
if [ "${{EVAL_ONLY:-false}}" = true ]; then
  printf '{{"results": {{"gsm8k": {{"exact_match,strict-match": 0.9}}}}}}\\n' \\
    > "$RESULT_DIR/results_$RESULT_FILENAME.json"
  exit 0
fi
printf '{{"total_token_throughput": %s, "median_ttft_ms": 100, "median_tpot_ms": 10}}\\n' \\
  "$(( tput * GPU_COUNT * CONC ))" > "$RESULT_DIR/$RESULT_FILENAME.json"
"""
TPUT = {7: 1000, 8: 1500}


def gov(repo: Repo, *args: str) -> dict | list:
    done = run_gov(*args, cwd=repo.path)
    assert done.exit_code == 0, done.stdout + done.stderr
    return json.loads(done.stdout) if "json" in args else {}


def sweep(repo: Repo, knob: Path, pr: int) -> Path:
    """The PR's branch measures the MI300X DSv4 config at its head."""
    repo.git("checkout", "-q", "-b", f"pr{pr}", "main")
    log = repo.path / "perf-changelog.yaml"
    log.write_bytes(log.read_bytes() + ENTRY.format(what=f"Measure MI300X DSv4 ({pr})").encode())
    repo.commit(f"measure {pr}")
    plan = repo.path.parent / f"plan{pr}.json"
    plan.write_text(json.dumps(gov(repo, "plan", "--base-ref", "main", "--format", "json")))
    knob.write_text(f"{TPUT[pr]}\n")
    gov(repo, "launch", "--plan", str(plan), "--pr", str(pr), "--parallel", "2")
    return plan


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, dict[int, Path]]:
    root = tmp_path_factory.mktemp("two-prs")
    knob = root / "tput"
    repo = Repo(root / "repo")
    repo.configure_identity()
    shutil.copyfile(PROJECT / "perf-changelog.yaml", repo.path / "perf-changelog.yaml")
    shutil.copytree(PROJECT / "configs", repo.path / "configs")
    repo.write(SCRIPT, BENCH.format(knob=knob)).chmod(0o755)
    repo.commit("example")
    plans = {pr: sweep(repo, knob, pr) for pr in (7, 8)}
    return repo, plans


def throughput(repo: Repo, pr: int) -> list[dict]:
    out = gov(repo, "results", "compare", "--pr", str(pr), "--format", "json")
    assert isinstance(out, dict) and out["unverifiable"] == [] and out["unreadable"] == []
    return [c for c in out["comparisons"] if c["pr"]["figures"]["kind"] == "throughput"]


def test_the_same_points_in_folders_of_their_own(two: tuple[Repo, dict[int, Path]]) -> None:
    repo, _plans = two
    listed = gov(repo, "runs", "list", "--format", "json")
    assert isinstance(listed, list)
    by_pr = {pr: {r["job_key"]: r for r in listed if r["pr"] == pr} for pr in (7, 8)}
    assert by_pr[7].keys() == by_pr[8].keys() and len(by_pr[7]) >= 5
    for key, run in by_pr[7].items():
        other = by_pr[8][key]
        assert run["result_path"] != other["result_path"]
        assert Path(run["result_path"]).name == key == Path(other["result_path"]).name


def test_each_prs_compare_reads_its_own_numbers(two: tuple[Repo, dict[int, Path]]) -> None:
    repo, _plans = two
    for pr in (7, 8):
        points = throughput(repo, pr)
        assert len(points) >= 5
        for item in points:
            assert item["pr"]["pr"] == pr and item["main"] is None
            assert item["pr"]["figures"]["tput_per_gpu"] == TPUT[pr] * int(item["conc"])


def test_each_prs_reuse_stands_on_its_own_runs(two: tuple[Repo, dict[int, Path]]) -> None:
    repo, plans = two
    git = GitRepo(repo.path)
    settings = load_settings(git.root)
    for pr in (7, 8):
        head = git.resolve(f"pr{pr}")
        section = sweep_after_merge(
            git,
            settings,
            json.loads(plans[pr].read_text()),
            pr,
            [head],
            "local",
            ReuseMode.AUTO,
            dry_run=True,
            progress=False,
        )
        reused = section.decision.reused
        assert len(reused) >= 5 and all(d.reused_from for d in reused)
        for d in reused:
            assert d.reused_from is not None and d.reused_from.pr == pr
            folder = Path(d.reused_from.result_path)
            if d.row.is_eval:  # reused too (its own recipe): lm-eval's file, its own run's
                assert list(folder.glob("results*.json")) and folder.parent.parent.name == "runs"
                continue
            [result] = folder.glob("*_recipe-*.json")
            total = json.loads(result.read_text())["total_token_throughput"]
            assert total == TPUT[pr] * 8 * int(d.row.data["conc"])  # TP8


def test_once_pr7_lands_pr8_is_compared_with_pr7s_numbers(
    two: tuple[Repo, dict[int, Path]],
) -> None:
    repo, _plans = two
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--squash", "pr7")
    repo.git("commit", "-q", "-m", "Measure MI300X DSv4 (#7)")
    points = throughput(repo, 8)
    assert len(points) >= 5
    for item in points:
        assert item["main"]["pr"] == 7
        assert item["main"]["figures"]["tput_per_gpu"] == TPUT[7] * int(item["conc"])
        changes = {c["metric"]: c for c in item["changes"]}
        assert changes["tput_per_gpu"]["relative"] == pytest.approx(0.5)
