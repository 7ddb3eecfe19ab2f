"""The pre-commit hook: manifest, leaked GIT_* variables, worktree reads."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.harness import PROJECT, Repo, git, run_process


@pytest.fixture
def hook_exe() -> str:
    exe = shutil.which("gov-pre-commit", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("gov-pre-commit is not installed (pip install -e .)")
    return exe


def manifest() -> dict:
    (hook,) = YAML(typ="safe").load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    return hook


@pytest.mark.parametrize(
    ("path", "runs"),
    [
        ("perf-changelog.yaml", True),
        ("configs/amd-master.yaml", True),
        ("configs/nvidia-master.yaml", True),
        ("configs/runners.yaml", True),
        ("docs/perf-changelog.yaml", False),
        ("configs/ci-priority.yaml", False),
        ("perf-changelog.yaml.bak", False),
    ],
)
def test_manifest_files_pattern(path: str, runs: bool) -> None:
    assert bool(re.search(manifest()["files"], path)) is runs


def test_manifest_entry_is_an_installed_script() -> None:
    hook = manifest()
    assert hook["id"] == "gov-check" and hook["pass_filenames"] is False
    assert f"{hook['entry']} = " in (PROJECT / "pyproject.toml").read_text()


def test_hook_ignores_leaked_git_variables(
    example_repo: Repo, hook_exe: str, tmp_path: Path
) -> None:
    example_repo.git("checkout", "-q", "-b", "feature")
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_bytes(
        changelog.read_bytes() + b"\n- config-keys:\n    - nope\n"
        b'  description:\n    - "x"\n  pr-link: PLACEHOLDER\n'
    )
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    git(tmp_path, "init", "-q", str(decoy))
    # What git exports when it runs a hook from another repository's context.
    env = {
        "GIT_DIR": str(decoy / ".git"),
        "GIT_INDEX_FILE": str(decoy / ".git/index"),
        "GIT_WORK_TREE": str(decoy),
    }
    result = run_process([hook_exe], cwd=example_repo.path, env=env)
    assert result.exit_code == 1, result.stderr
    assert "GOV401" in result.stdout and "GOV501" in result.stdout
