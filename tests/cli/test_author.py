"""`gov add` and `gov check --fix` on real repositories: one well-formed entry
appended with history's bytes kept, keys resolved before anything is written,
and only mechanical fixes of appended bytes."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.changelog.author import append_entry, render_entry
from tests.harness import Repo, clone_corpus, git, run_gov

KEY = "dsv4-fp8-mi300x-vllm"


@pytest.fixture
def feature(example_repo: Repo) -> Repo:
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    return example_repo


def changelog(repo: Repo | Path) -> Path:
    return (repo.path if isinstance(repo, Repo) else repo) / "perf-changelog.yaml"


def test_render_entry_quotes_what_yaml_would_misread() -> None:
    entry = render_entry(["dsv4-*", KEY], ['Retune "TP8": 10% faster'], scenario_types=["x"])
    assert entry.decode() == (
        '- config-keys:\n    - "dsv4-*"\n    - dsv4-fp8-mi300x-vllm\n'
        "  scenario-type:\n    - x\n"
        '  description:\n    - "Retune \\"TP8\\": 10% faster"\n  pr-link: XXX\n'
    )
    assert append_entry(b"- a\n", b"- b\n") == b"- a\n\n- b\n"
    assert append_entry(b"- a\n\n", b"- b\n") == b"- a\n\n- b\n"
    assert append_entry(b"", b"- b\n") == b"- b\n"


def test_add_appends_one_entry_and_checks_it(feature: Repo) -> None:
    before = changelog(feature).read_bytes()
    result = run_gov(
        "add",
        "--config-key",
        KEY,
        "--config-key",
        "dsv4-fp8-mi300x-vllm-*",
        "--description",
        "Retune MI300X DSv4 concurrency",
        "--description",
        "Second line",
        "--scenario-type",
        "fixed-seq-len",
        "--pr",
        "2194",
        cwd=feature.path,
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    after = changelog(feature).read_bytes()
    assert after.startswith(before)  # history's bytes, exactly
    assert after[len(before) :] == b"\n" + render_entry(
        [KEY, "dsv4-fp8-mi300x-vllm-*"],
        ["Retune MI300X DSv4 concurrency", "Second line"],
        scenario_types=["fixed-seq-len"],
    )
    assert "perf-changelog.yaml:27: appended an entry" in result.stderr
    assert "1 appended entry" in result.stdout
    # the appended entry plans: its rows come from the two keys
    feature.commit("Retune")
    plan = run_gov("plan", "--format", "text", cwd=feature.path)
    assert plan.exit_code == 0 and "1 entry" in plan.stdout, plan.stderr
    assert "single_node[1k1k]: " in plan.stdout and "mi300x  vllm" in plan.stdout


def test_add_refuses_an_unknown_key_before_writing(feature: Repo) -> None:
    before = changelog(feature).read_bytes()
    result = run_gov(
        "add", "--config-key", "dsv4-fp8-mi300x-vlm", "--description", "x", cwd=feature.path
    )
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "'dsv4-fp8-mi300x-vlm' not found" in result.stderr
    assert "did you mean `dsv4-fp8-mi300x-vllm`" in result.stderr
    assert changelog(feature).read_bytes() == before
    assert feature.git("status", "--porcelain") == ""
    bad_scenario = run_gov(
        "add", "--config-key", KEY, "--description", "x", "--scenario-type", "chat",
        cwd=feature.path,
    )  # fmt: skip
    assert bad_scenario.exit_code == 2 and "fixed-seq-len" in bad_scenario.stderr
    assert changelog(feature).read_bytes() == before


def test_check_fix_repairs_only_mechanical_findings(feature: Repo) -> None:
    before = changelog(feature).read_bytes()
    sloppy = (
        b"\n- config-keys:\n    - dsv4-fp8-mi300x-vllm   \n  description:\n"
        b'    - "Retune"\n  pr-link: PLACEHOLDER  \n\n\n'
    )
    changelog(feature).write_bytes(before + sloppy)
    found = run_gov("check", "--worktree", "--pr", "2194", cwd=feature.path)
    assert found.exit_code == 1
    for code in ("GOV401", "GOV312", "GOV307"):
        assert code in found.stdout, found.stdout
    fixed = run_gov("check", "--fix", "--pr", "2194", cwd=feature.path)
    assert fixed.exit_code == 0, fixed.stdout + fixed.stderr
    assert "fixed: pr-link PLACEHOLDER -> XXX" in fixed.stderr
    assert "fixed: trailing spaces removed" in fixed.stderr
    assert changelog(feature).read_bytes() == before + (
        b"\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
        b'    - "Retune"\n  pr-link: XXX\n'
    )
    again = run_gov("check", "--fix", "--pr", "2194", cwd=feature.path)
    assert again.exit_code == 0 and "nothing to fix" in again.stderr


def test_check_fix_never_touches_history(feature: Repo) -> None:
    before = changelog(feature).read_bytes()
    edited = before.replace(b"TP4 and TP8", b"TP4 and TP8  ", 1) + (
        b"\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
        b'    - "Retune"\n  pr-link: PLACEHOLDER\n'
    )
    changelog(feature).write_bytes(edited)
    result = run_gov("check", "--fix", cwd=feature.path)
    assert result.exit_code == 1 and "GOV302" in result.stdout
    assert changelog(feature).read_bytes() == edited  # not a byte changed
    refused = run_gov("check", "--fix", "--staged", cwd=feature.path)
    assert refused.exit_code == 2


def test_check_fix_moves_an_entry_inserted_mid_history_to_the_end(feature: Repo) -> None:
    before = changelog(feature).read_bytes()
    new = b'- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n    - "Retune"\n  pr-link: XXX\n'
    first_end = before.index(b"\n- config-keys:") + 1  # after the first history entry
    inserted = before[:first_end] + new + b"\n" + before[first_end:]
    changelog(feature).write_bytes(inserted)
    found = run_gov("check", "--worktree", "--pr", "2194", cwd=feature.path)
    assert found.exit_code == 1 and "GOV302" in found.stdout and "gov check --fix" in found.stdout
    fixed = run_gov("check", "--fix", "--pr", "2194", cwd=feature.path)
    assert fixed.exit_code == 0, fixed.stdout + fixed.stderr
    assert "in the middle of history, moved to the end" in fixed.stderr, fixed.stderr
    assert changelog(feature).read_bytes() == before + b"\n" + new


@pytest.mark.corpus
def test_add_on_a_corpus_pr_branch_behind_main(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A fresh clone of InferenceX, a PR branch forked from an older main:
    `gov add` appends after the branch's own entry and the README's CI
    command passes; the history bytes of the branch are untouched."""
    clone = clone_corpus(tmp_path_factory, "add")
    branch = "pr/agent/update-b200-agentx-vllm-mtp-image"
    git(clone, "checkout", "-q", branch)
    before = changelog(clone).read_bytes()
    typo = run_gov("add", "--config-key", "dsv4-fp4-b200-vlm", "--description", "x", cwd=clone)
    assert typo.exit_code == 2 and "did you mean `dsv4-fp4-b200-vllm" in typo.stderr, typo.stderr
    result = run_gov(
        "add",
        "--config-key",
        "dsv4-fp4-b200-vllm",
        "--description",
        "Rerun after the image bump",
        "--pr",
        "2646",
        cwd=clone,
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert changelog(clone).read_bytes().startswith(before)
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "add entry")
    ci = run_gov(
        "check", "--base-ref", "origin/main", "--head-ref", "HEAD", "--pr", "2646", cwd=clone
    )
    assert ci.exit_code == 0, ci.stdout
    assert "2 appended entries" in ci.stdout
