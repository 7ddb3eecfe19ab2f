"""The quickstart's main job runs end to end and leaves nothing behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tests.harness import git, run_gov


def test_demo_end_to_end(tmp_path: Path) -> None:
    temp = Path(tempfile.gettempdir())
    # This process's own (the demo runs in it); another process's sweep may be running now.
    mine = f"gov-sweep-{os.getpid()}-*"
    before = set(temp.glob("gov-demo-*")) | set(temp.glob(mine))
    result = run_gov("demo", cwd=tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout
    # The placeholder word is rejected at its line, with the fix.
    assert (
        "perf-changelog.yaml:32:12: GOV401" in out and "hint: write exactly `pr-link: XXX`" in out
    )
    # `gov prepare-merge --pr 2194` resolves the conflict and canonicalizes
    # the link before the squash-merge, step by step.
    assert "== gov prepare-merge --pr 2194:" in out
    assert "perf-changelog.yaml conflicts" in out
    assert ": pr-link XXX -> https://github.com/SemiAnalysisAI/InferenceX/pull/2194" in out
    # The step that wrote the link says so; canonicalize does not claim "already final".
    assert "re-appended the PR's entries; 1 link(s) rewritten" in out
    assert "links final (1 rewritten while resolving)" in out and "links already final" not in out
    for step in ("resolve", "canonicalize", "check", "plan", "push", "checks", "land"):
        assert f"[ok] {step}" in out, step
    # The PR's sweep is reused where main left the recipe alone, eval rows
    # included (an eval row is its own recipe), and rerun where main's image
    # bump changed it.
    assert "PR #2194's sweep ran 18 row(s)" in out
    assert "sweep after merge (reuse): 13 reused, 5 rerun" in out
    assert out.count("recipe changed by main") == 5
    assert "PR #2194 squash-merged as" in out
    changelog, _, comparison = out.partition("== gov results compare --pr 2194")
    assert changelog.rstrip().endswith(
        "pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2194"
    )
    # It ends with what #2194 measured beside main's newest result: the MTP
    # config main (#2195) measured has a baseline, the other has none yet.
    table = comparison.splitlines()
    assert (
        table[1].startswith("PR #2194 vs main@") and "18 point(s), 5 with a main result" in table[1]
    )
    assert table[2].split()[:3] == ["config", "conc", "tput/GPU"]
    mtp = [line for line in table if line.startswith("dsv4 fp8 mi300x vllm mtp 1k/1k tp8")]
    assert len(mtp) == 5 and all(" vs " in line and "%" in line for line in mtp)
    assert sum("none: new point" in line for line in table) == 11
    assert "results compared with main" in changelog  # the prepare-merge report's section
    left = set(temp.glob("gov-demo-*")) | set(temp.glob(mine))
    assert left - before == set()  # nothing new (other processes may clean their own)


def test_demo_keep_leaves_a_repository_whose_hints_work(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    result = run_gov("demo", "--keep", str(kept), cwd=tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert f"== kept in {kept}: try `gov -C {kept} results compare --pr 2194`" in result.stdout
    compared = run_gov("-C", str(kept), "results", "compare", "--pr", "2194")
    assert compared.exit_code == 0, compared.stdout + compared.stderr
    assert "2194" in compared.stdout
    # Main's run is named by main's commit (#2195's landing), not by the PR
    # commit it was measured at.
    subjects = git(kept, "log", "--format=%H %s", "main")
    landing = next(line.split()[0] for line in subjects.splitlines() if "(#2195)" in line)
    assert f"(main {landing[:10]}, measured at " in compared.stdout, compared.stdout
    nothing = run_gov("-C", str(kept), "results", "compare", "--pr", "4242")
    assert nothing.exit_code == 1 and "nothing to compare" in nothing.stderr, nothing.stderr
    again = run_gov("demo", "--keep", str(kept), cwd=tmp_path)
    assert again.exit_code == 2 and "not an empty folder" in again.stderr
