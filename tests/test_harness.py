"""The harness itself: the in-process runner behaves like the console script
and leaves this process as it found it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from governance.cli.common import state
from tests.harness import Repo, run_gov, run_process


def test_in_process_and_console_script_agree(example_repo: Repo, gov_exe: str) -> None:
    for args in (["check", "--base-ref", "HEAD"], ["check", "--pr", "abc"]):
        inside = run_gov(*args, cwd=example_repo.path)
        outside = run_process([gov_exe, *args], cwd=example_repo.path)
        assert inside == outside, args


def test_leaked_git_variables_are_stripped_and_restored(
    example_repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    monkeypatch.setenv("GIT_DIR", str(decoy / ".git"))
    monkeypatch.setenv("GOV_CHANGELOG", "missing.yaml")
    before = (os.getcwd(), dict(os.environ))
    done = run_gov("check", "--base-ref", "HEAD", cwd=example_repo.path)
    assert done.exit_code == 0, done.stderr
    assert (os.getcwd(), dict(os.environ)) == before


def test_env_overrides_apply_and_streams_are_separate(example_repo: Repo) -> None:
    done = run_gov("check", "--base-ref", "HEAD", cwd=example_repo.path,
                   env={"GOV_CHANGELOG": "missing.yaml"})  # fmt: skip
    assert done.exit_code == 2
    assert done.stdout == "" and "missing.yaml does not exist" in done.stderr


def test_global_options_do_not_leak_into_the_next_call(example_repo: Repo, tmp_path: Path) -> None:
    assert run_gov("-C", str(example_repo.path), "--debug", "version").exit_code == 0
    assert (state.repo_path, state.debug) == (Path("."), False)
    outside = run_gov("pr", "list", cwd=tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert outside.exit_code == 2 and "not a git repository" in outside.stderr


def test_the_crash_hook_is_refused_in_process(example_repo: Repo) -> None:
    with pytest.raises(AssertionError, match="use run_process"):
        run_gov("version", cwd=example_repo.path, env={"GOV_TEST_CRASH_AFTER": "merge"})
