"""`gov pr ...` on the embedded local forge, through the real `gov` script."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, Repo


def gov(repo: Repo, exe: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GOV_"))}
    env.update(GIT_ENV, HOME=str(repo.path))
    return subprocess.run(
        [exe, *args], cwd=repo.path, env=env, capture_output=True, text=True, check=False
    )


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


def test_open_list_show_and_check(repo: Repo, gov_exe: str) -> None:
    head = repo.git("rev-parse", "feature")
    opened = gov(repo, gov_exe, "pr", "open", "--number", "42", "--branch", "feature",
                 "--label", "full-sweep-enabled", "--label", "gpu")  # fmt: skip
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.startswith("#42 Add entry b\n")  # title defaults to the tip's subject
    assert f"  head:   {head}\n" in opened.stdout
    assert "  labels: full-sweep-enabled, gpu\n" in opened.stdout
    assert (repo.path / ".git" / "gov" / "forge.sqlite3").is_file()

    listed = gov(repo, gov_exe, "pr", "list")
    assert listed.returncode == 0
    assert listed.stdout.startswith("#42") and "feature" in listed.stdout
    assert head[:12] in listed.stdout and "[full-sweep-enabled, gpu]" in listed.stdout
    assert gov(repo, gov_exe, "pr", "list", "--state", "merged").stdout == "no pull requests\n"

    pulls = json.loads(
        gov(repo, gov_exe, "pr", "list", "--state", "all", "--format", "json").stdout
    )
    assert [(p["number"], p["state"], p["head_sha"], p["labels"]) for p in pulls] == [
        (42, "open", head, ["full-sweep-enabled", "gpu"])
    ]

    for conclusion in ("failure", "success"):  # a re-run appends; both are kept
        done = gov(repo, gov_exe, "pr", "check", "42", "--name", "check-changelog",
                   "--conclusion", conclusion)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"recorded check-changelog: {conclusion} on {head[:12]} (PR #42)\n"

    shown = gov(repo, gov_exe, "pr", "show", "42")
    assert shown.returncode == 0
    assert "  checks:\n    check-changelog: failure\n    check-changelog: success\n" in shown.stdout

    data = json.loads(gov(repo, gov_exe, "pr", "show", "42", "--format", "json").stdout)
    assert data["number"] == 42 and data["base_branch"] == "main"
    assert [(c["name"], c["conclusion"], c["head_sha"]) for c in data["checks"]] == [
        ("check-changelog", "failure", head),
        ("check-changelog", "success", head),
    ]
    assert data["comments"] == []


def test_checks_follow_the_head(repo: Repo, gov_exe: str) -> None:
    """A check is recorded on the head at that moment; a new push starts clean."""
    assert gov(repo, gov_exe, "pr", "open", "--number", "7", "--branch", "feature").returncode == 0
    gov(repo, gov_exe, "pr", "check", "7", "--name", "ci", "--conclusion", "success")
    repo.git("checkout", "-q", "feature")
    repo.commit("more", **{"other.txt": "x\n"})
    data = json.loads(gov(repo, gov_exe, "pr", "show", "7", "--format", "json").stdout)
    assert data["head_sha"] == repo.git("rev-parse", "HEAD")
    assert data["checks"] == []


def test_open_with_title_and_base(repo: Repo, gov_exe: str) -> None:
    repo.git("branch", "release", "main")
    done = gov(repo, gov_exe, "pr", "open", "--number", "3", "--branch", "feature",
               "--title", "Backport b", "--base", "release")  # fmt: skip
    assert done.returncode == 0, done.stderr
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
    repo: Repo, gov_exe: str, args: tuple[str, ...], code: int, message: str, hint: str
) -> None:
    done = gov(repo, gov_exe, *args)
    assert done.returncode == code
    assert f"gov: error: {message}" in done.stderr
    assert "  hint: " in done.stderr and hint in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_duplicate_number_and_missing_head(repo: Repo, gov_exe: str) -> None:
    assert gov(repo, gov_exe, "pr", "open", "--number", "4", "--branch", "feature").returncode == 0
    again = gov(repo, gov_exe, "pr", "open", "--number", "4", "--branch", "feature")
    assert again.returncode == 2
    assert "local pull request #4 already exists" in again.stderr
    assert "hint: pick another --number" in again.stderr

    repo.git("branch", "-D", "feature")
    gone = gov(repo, gov_exe, "pr", "check", "4", "--name", "ci", "--conclusion", "success")
    assert gone.returncode == 2
    assert "PR #4 has no head: branch 'feature' is missing" in gone.stderr
    assert "git branch feature" in gone.stderr
    assert "(branch missing)" in gov(repo, gov_exe, "pr", "show", "4").stdout


def test_usage_errors_exit_2(repo: Repo, gov_exe: str) -> None:
    gov(repo, gov_exe, "pr", "open", "--number", "4", "--branch", "feature")
    bad = gov(repo, gov_exe, "pr", "check", "4", "--name", "ci", "--conclusion", "maybe")
    assert bad.returncode == 2 and "maybe" in bad.stderr
    assert gov(repo, gov_exe, "pr", "list", "--state", "draft").returncode == 2
    assert gov(repo, gov_exe, "pr", "open", "--number", "0", "--branch", "feature").returncode == 2


def test_outside_a_repository(tmp_path: Path, gov_exe: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GOV_"))}
    env["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    done = subprocess.run(
        [gov_exe, "pr", "list"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "not a git repository" in done.stderr and "Traceback" not in done.stderr
