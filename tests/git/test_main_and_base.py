"""Which base a change is judged against: an explicit --base-ref means the
fork point (merge-base) for check and plan, --exact-base the commit itself;
and "main" is one rule (governance.git.mainref) for every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.git.mainref import main_ref
from governance.git.repo import GitRepo
from tests.cli.test_cli import APPEND
from tests.conftest import Repo, git
from tests.harness import run_gov

MAIN_ENTRY = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
    '    - "Main moved on"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{n}\n'
)


def append(repo: Repo, text: str) -> None:
    changelog = repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + text.encode())


@pytest.fixture
def behind(example_repo: Repo) -> Repo:
    """PR 2194 forked from main, then main gained #2195's entry."""
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    append(example_repo, APPEND.format(link="XXX"))
    example_repo.commit("retune")
    example_repo.git("checkout", "-q", "main")
    append(example_repo, MAIN_ENTRY.format(n=2195))
    example_repo.commit("Main moved (#2195)")
    return example_repo


def test_check_with_explicit_base_compares_with_the_fork_point(behind: Repo) -> None:
    args = ("check", "--base-ref", "main", "--head-ref", "pr-2194", "--pr", "2194")
    result = run_gov(*args, cwd=behind.path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 appended entry" in result.stdout and "merge-base with main@" in result.stdout
    exact = run_gov(*args, "--exact-base", cwd=behind.path)
    assert exact.exit_code == 1
    assert ": GOV30" in exact.stdout and "(exact)" in exact.stdout  # history differs


def test_plan_with_explicit_base_plans_only_the_prs_entry(behind: Repo) -> None:
    args = ("plan", "--base-ref", "main", "--head-ref", "pr-2194", "--format", "json")
    result = run_gov(*args, cwd=behind.path)
    assert result.exit_code == 0, result.stderr
    meta = json.loads(result.stdout)["changelog_metadata"]
    assert [e["description"] for e in meta["entries"]] == [["Retune MI300X DSv4 concurrency"]]
    assert "merge-base with main@" in result.stderr
    exact = run_gov(*args, "--exact-base", cwd=behind.path)
    assert exact.exit_code == 1 and "GOV530" in exact.stderr


def test_exact_base_needs_a_base(behind: Repo) -> None:
    result = run_gov("check", "--exact-base", "--pr", "2194", cwd=behind.path)
    assert result.exit_code == 2 and "--exact-base needs --base-ref" in result.stderr


def _clone_with_origin(example_repo: Repo, tmp_path: Path) -> Repo:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(example_repo.path), str(clone))
    repo = Repo.__new__(Repo)
    repo.path = clone
    return repo


def test_main_rule_prefers_local_main_when_it_contains_origin(
    example_repo: Repo, tmp_path: Path
) -> None:
    clone = _clone_with_origin(example_repo, tmp_path)
    repo = GitRepo(clone.path)
    same = main_ref(repo, "main")
    assert (same.ref, same.why) == ("main", "local main up to date with origin/main")
    landed = clone.commit("landed locally (#2194)", extra="x")
    ahead = main_ref(repo, "main")
    assert (ahead.ref, ahead.sha, ahead.why) == ("main", landed, "local main contains origin/main")
    clone.git("reset", "-q", "--hard", "HEAD~1")
    example_repo.commit("upstream moved", other="y")
    clone.git("fetch", "-q", "origin")
    stale = main_ref(repo, "main")
    assert stale.ref == "origin/main" and "does not contain" in stale.why
    clone.git("checkout", "-q", "--detach")
    clone.git("branch", "-q", "-D", "main")
    assert main_ref(repo, "main").ref == "origin/main"


def test_after_landing_locally_a_new_branch_sees_no_landed_entries(
    example_repo: Repo, tmp_path: Path
) -> None:
    """The local forge lands on local main, ahead of origin/main: a branch
    started after that must not be charged with the landed entry (GOV401)."""
    clone = _clone_with_origin(example_repo, tmp_path)
    append(clone, MAIN_ENTRY.format(n=2194))
    clone.commit("DSv4 retune (#2194)")
    clone.git("checkout", "-q", "-b", "pr-2197")
    append(clone, APPEND.format(link="XXX"))
    clone.commit("next change")
    result = run_gov("check", "--pr", "2197", cwd=clone.path)
    assert result.exit_code == 0, result.stdout
    assert "1 appended entry" in result.stdout
    assert "main: local main contains origin/main" in result.stdout


def test_corpus_pr_behind_main_passes_the_readme_ci_command(corpus_clone: Path) -> None:
    """A real PR branch 13 commits behind main, with the README's CI command."""
    branch = "pr/agent/update-b200-agentx-vllm-mtp-image"
    assert git(corpus_clone, "rev-list", "--count", f"{branch}..origin/main") != "0"
    args = ("check", "--base-ref", "origin/main", "--head-ref", branch, "--pr", "2646")
    result = run_gov(*args, cwd=corpus_clone)
    assert result.exit_code == 0, result.stdout
    assert run_gov(*args, "--exact-base", cwd=corpus_clone).exit_code == 1
