"""A repository on `main` with one commit, for the forge tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.git.repo import GitRepo
from tests.harness import Repo


@pytest.fixture
def sandbox(tmp_path: Path) -> Repo:
    """`main` holds a one-entry changelog; commits made in process use the
    repository's own identity."""
    repo = Repo(tmp_path / "repo")
    repo.configure_identity()
    repo.commit_on("main", {"perf-changelog.yaml": "- config-keys: [a]\n"}, "initial")
    return repo


@pytest.fixture
def sandbox_repo(sandbox: Repo) -> GitRepo:
    return sandbox.gitrepo()
