"""Hostile changelogs through the real `gov` process: exit 1 with located
findings, never a crash (exit 139) or an internal error (exit 3)."""

from __future__ import annotations

import json

import pytest

from tests.harness import Repo, run_gov

ENTRY = "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n    - d\n"


@pytest.mark.parametrize(
    ("tail", "code", "line"),
    [
        pytest.param(
            "  pr-link: XXX\n  extra: " + "[" * 20_000 + "]" * 20_000 + "\n",
            "GOV115",
            32,
            id="deep-flow",
        ),
        pytest.param("  pr-link: !!int XXX\n", "GOV117", 31, id="int-tag"),
        pytest.param("  pr-link: XXX\n  evals-only: !!bool maybe\n", "GOV117", 32, id="bool-maybe"),
        pytest.param(
            "  pr-link: XXX\n  eval-min-prefill-ep: " + "9" * 5000 + "\n", "GOV106", 32, id="bigint"
        ),
        pytest.param(
            "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/" + "9" * 5000 + "\n",
            "GOV401",
            31,
            id="bigint-link",
        ),
        pytest.param("  pr-link: XXX\u2028  evals-only: true\n", "GOV114", 31, id="u2028"),
        pytest.param("  <<: {pr-link: XXX}\n", "GOV117", 31, id="merge-key"),
    ],
)
def test_hostile_entry_exits_1_located(
    example_repo: Repo, gov_exe: str, tail: str, code: str, line: int
) -> None:
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + (ENTRY + tail).encode())
    result = run_gov(
        "check", "--worktree", "--pr", "2194", "--format", "json", cwd=example_repo.path
    )
    assert result.exit_code == 1, result.stderr
    first = json.loads(result.stdout)["violations"][0]
    assert (first["code"], first["line"]) == (code, line), first
    assert first["column"] >= 1
    text = run_gov("check", "--worktree", "--pr", "2194", cwd=example_repo.path)
    assert text.exit_code == 1 and f":{line}:" in text.stdout.splitlines()[0]


def test_plan_refuses_a_unicode_line_separator_with_a_location(
    example_repo: Repo, gov_exe: str
) -> None:
    """plan used to split the line on U+2028 and plan a full sweep."""
    base = example_repo.git("rev-parse", "HEAD")
    changelog = example_repo.path / "perf-changelog.yaml"
    tail = ENTRY + "  pr-link: XXX\u2028  evals-only: true\n"
    changelog.write_bytes(changelog.read_bytes() + tail.encode())
    example_repo.commit("hostile")
    result = run_gov("plan", "--base-ref", base, "--format", "json", cwd=example_repo.path)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "GOV114" in result.stdout + result.stderr
    assert "perf-changelog.yaml:31:" in result.stdout + result.stderr
