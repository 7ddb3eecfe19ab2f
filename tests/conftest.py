"""Shared fixtures: temporary git repositories and the shared corpus (built
with the harness in `tests/harness.py`)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from tests.harness import (
    CORPUS,
    GIT_ENV,
    GOLDENS,
    PROJECT,
    Repo,
    clone_corpus,
    commit_example,
    commit_launch_scripts,
    git,
    require_corpus,
    writable_corpus_clone,
)

# Import these from tests.harness; the names stay here for tests not yet moved over.
__all__ = [
    "CORPUS",
    "GIT_ENV",
    "GOLDENS",
    "PROJECT",
    "Repo",
    "git",
    "require_corpus",
    "writable_corpus_clone",
]


# The generated tests draw the same examples on every run, so a red build is
# reproducible and never chance; `HYPOTHESIS_PROFILE=explore` draws new ones
# on each run, to hunt for what the fixed draw misses.
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Repo]:
    counter = iter(range(1000))

    def make(name: str | None = None) -> Repo:
        path = tmp_path / (name or f"repo{next(counter)}")
        path.mkdir()
        return Repo(path)

    return make


@pytest.fixture
def example_repo(make_repo: Callable[..., Repo]) -> Repo:
    """A repository holding the shipped example state on `main`."""
    return commit_example(make_repo("example"))


@pytest.fixture
def sweep_repo(example_repo: Repo) -> Repo:
    """The example repository with its launch scripts and `scripts` setting."""
    return commit_launch_scripts(example_repo)


@pytest.fixture(scope="session")
def corpus_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the InferenceX corpus with every PR branch local (read only)."""
    return clone_corpus(tmp_path_factory)


@pytest.fixture(scope="session")
def goldens() -> Path:
    return require_corpus() / "goldens"


@pytest.fixture
def gov_exe() -> str:
    exe = shutil.which("gov", path=str(Path(sys.executable).parent)) or shutil.which("gov")
    if exe is None:
        pytest.skip("the gov console script is not installed (pip install -e .)")
    return exe


@pytest.fixture
def pr_repo(sweep_repo: Repo) -> Repo:
    """Branch `pr` appends one entry on the example repository (not opened, not landed)."""
    sweep_repo.configure_identity()
    sweep_repo.git("checkout", "-q", "-b", "pr")
    from tests.sweeps.test_cli_sweeps import append_entry

    append_entry(sweep_repo, "dsr1-fp8-mi300x-sglang")
    return sweep_repo
