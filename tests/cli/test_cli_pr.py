"""`gov pr ...` on the embedded local forge, through the command line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.harness import Repo, Result, clone_corpus, git, run_gov


def gov(repo: Repo, *args: str) -> Result:
    return run_gov(*args, cwd=repo.path)


@pytest.fixture
def repo(make_repo: Callable[..., Repo]) -> Repo:
    """main with one commit, and a `feature` branch one commit ahead."""
    repo = make_repo("forge")
    repo.commit("initial", **{"perf-changelog.yaml": "- config-keys: [a]\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit(
        "Add entry b", **{"perf-changelog.yaml": "- config-keys: [a]\n- config-keys: [b]\n"}
    )
    repo.git("checkout", "-q", "main")
    return repo


def test_open_list_show_and_check(repo: Repo) -> None:
    head = repo.git("rev-parse", "feature")
    opened = gov(repo, "pr", "open", "--number", "42", "--branch", "feature",
                 "--label", "full-sweep-enabled", "--label", "gpu")  # fmt: skip
    assert opened.exit_code == 0, opened.stderr
    assert opened.stdout.startswith("#42 Add entry b\n")  # the first commit subject
    assert f"  head:   {head}\n" in opened.stdout
    assert "  labels: full-sweep-enabled, gpu\n" in opened.stdout
    assert (repo.path / ".git" / "gov" / "forge.sqlite3").is_file()

    listed = gov(repo, "pr", "list")
    assert listed.exit_code == 0
    assert listed.stdout.startswith("#42") and "feature" in listed.stdout
    assert head[:12] in listed.stdout and "[full-sweep-enabled, gpu]" in listed.stdout
    assert gov(repo, "pr", "list", "--state", "merged").stdout == "no pull requests\n"

    pulls = json.loads(gov(repo, "pr", "list", "--state", "all", "--format", "json").stdout)
    assert [(p["number"], p["state"], p["head_sha"], p["labels"]) for p in pulls] == [
        (42, "open", head, ["full-sweep-enabled", "gpu"])
    ]

    for conclusion in ("failure", "success"):  # a re-run appends; both are kept
        done = gov(repo, "pr", "check", "42", "--name", "check-changelog",
                   "--conclusion", conclusion)  # fmt: skip
        assert done.exit_code == 0, done.stderr
        assert done.stdout == f"recorded check-changelog: {conclusion} on {head[:12]} (PR #42)\n"

    shown = gov(repo, "pr", "show", "42")
    assert shown.exit_code == 0
    assert "  checks:\n    check-changelog: failure\n    check-changelog: success\n" in shown.stdout

    data = json.loads(gov(repo, "pr", "show", "42", "--format", "json").stdout)
    assert data["number"] == 42 and data["base_branch"] == "main"
    assert [(c["name"], c["conclusion"], c["head_sha"]) for c in data["checks"]] == [
        ("check-changelog", "failure", head),
        ("check-changelog", "success", head),
    ]
    assert data["comments"] == []


def test_checks_follow_the_head(repo: Repo) -> None:
    """A check is recorded on the head at that moment; a new push starts clean."""
    assert gov(repo, "pr", "open", "--number", "7", "--branch", "feature").exit_code == 0
    gov(repo, "pr", "check", "7", "--name", "ci", "--conclusion", "success")
    repo.git("checkout", "-q", "feature")
    repo.commit("more", **{"other.txt": "x\n"})
    data = json.loads(gov(repo, "pr", "show", "7", "--format", "json").stdout)
    assert data["head_sha"] == repo.git("rev-parse", "HEAD")
    assert data["checks"] == []


def test_open_with_title_and_base(repo: Repo) -> None:
    repo.git("branch", "release", "main")
    done = gov(repo, "pr", "open", "--number", "3", "--branch", "feature",
               "--title", "Backport b", "--base", "release")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("#3 Backport b\n")
    assert "  branch: feature -> release\n" in done.stdout


@pytest.mark.parametrize(
    ("args", "code", "message", "hint"),
    [
        (("pr", "show", "9"), 2, "no local pull request #9", "gov pr open --number N"),
        (("pr", "check", "9", "--name", "ci", "--conclusion", "success"), 2,
         "no local pull request #9", "gov pr list"),
        (("pr", "open", "--number", "5", "--branch", "nope"), 2, "no local branch 'nope'",
         "git branch NAME"),
        (("pr", "open", "--number", "5", "--branch", "main"), 2, "branch 'main' is the base branch",
         "topic branch"),
        (("pr", "open", "--number", "5", "--branch", "feature", "--base", "gone"), 2,
         "no local base branch 'gone'", "main branch name"),
    ],
)  # fmt: skip
def test_errors_are_clean_messages_with_hints(
    repo: Repo, args: tuple[str, ...], code: int, message: str, hint: str
) -> None:
    done = gov(repo, *args)
    assert done.exit_code == code
    assert f"gov: error: {message}" in done.stderr
    assert "  hint: " in done.stderr and hint in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_duplicate_number_and_missing_head(repo: Repo) -> None:
    assert gov(repo, "pr", "open", "--number", "4", "--branch", "feature").exit_code == 0
    again = gov(repo, "pr", "open", "--number", "4", "--branch", "feature")
    assert again.exit_code == 2
    assert "local pull request #4 already exists" in again.stderr
    assert "hint: pick another --number" in again.stderr

    repo.git("branch", "-D", "feature")
    gone = gov(repo, "pr", "check", "4", "--name", "ci", "--conclusion", "success")
    assert gone.exit_code == 2
    assert "PR #4 has no head: branch 'feature' is missing" in gone.stderr
    assert "git branch feature" in gone.stderr
    assert "(branch missing)" in gov(repo, "pr", "show", "4").stdout


def test_usage_errors_exit_2(repo: Repo) -> None:
    gov(repo, "pr", "open", "--number", "4", "--branch", "feature")
    bad = gov(repo, "pr", "check", "4", "--name", "ci", "--conclusion", "maybe")
    assert bad.exit_code == 2 and "maybe" in bad.stderr
    assert gov(repo, "pr", "list", "--state", "draft").exit_code == 2
    assert gov(repo, "pr", "open", "--number", "0", "--branch", "feature").exit_code == 2


def test_outside_a_repository(tmp_path: Path) -> None:
    done = run_gov("pr", "list", cwd=tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert done.exit_code == 2
    assert "not a git repository" in done.stderr and "Traceback" not in done.stderr


def test_title_is_the_first_commit_subject_not_the_tips(repo: Repo) -> None:
    repo.git("checkout", "-q", "feature")
    repo.commit("fix typo")
    repo.git("checkout", "-q", "main")
    opened = gov(repo, "pr", "open", "--number", "43", "--branch", "feature")
    assert opened.exit_code == 0, opened.stderr
    assert opened.stdout.startswith("#43 Add entry b\n"), opened.stdout


@pytest.mark.corpus
def test_title_on_a_corpus_branch(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A real PR branch whose tip is `chore: fill pr-link for #1499`."""
    clone = clone_corpus(tmp_path_factory, "pr-title")
    branch = "pr/add-dsr1-fp8-mi300x-sglang-mtp"
    assert git(clone, "log", "-1", "--format=%s", branch) == "chore: fill pr-link for #1499"
    opened = run_gov("pr", "open", "--number", "1499", "--branch", branch, cwd=clone)
    assert opened.exit_code == 0, opened.stderr
    assert opened.stdout.startswith("#1499 Add dsr1-fp8-mi300x-sglang-mtp recipe\n")
    titled = run_gov(
        "pr", "open", "--number", "1500", "--branch", branch, "--title", "Mine", cwd=clone
    )
    assert titled.stdout.startswith("#1500 Mine\n"), titled.stdout
