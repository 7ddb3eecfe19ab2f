"""Shared fixtures: temporary git repositories and the shared corpus."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = PROJECT.parent / "shared" / "corpus"
GOLDENS = CORPUS / "goldens"

# A fixed identity and no signing, so tests behave the same on every machine.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "gov tests",
    "GIT_AUTHOR_EMAIL": "tests@gov.invalid",
    "GIT_COMMITTER_NAME": "gov tests",
    "GIT_COMMITTER_EMAIL": "tests@gov.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, check: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV)
    env["HOME"] = str(cwd)  # no user config leaks in
    result = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout.strip()


class Repo:
    """A throwaway repository with helpers to write files and commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        git(path, "init", "-q")

    def write(self, name: str, data: bytes | str) -> Path:
        file = self.path / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data.encode() if isinstance(data, str) else data)
        return file

    def commit(self, message: str, **files: bytes | str) -> str:
        for name, data in files.items():
            self.write(name.replace("__", "/"), data)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")

    def git(self, *args: str, check: bool = True) -> str:
        return git(self.path, *args, check=check)


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
    repo = make_repo("example")
    for name in (
        "perf-changelog.yaml",
        "configs/amd-master.yaml",
        "configs/nvidia-master.yaml",
        "configs/runners.yaml",
    ):
        repo.write(name, (PROJECT / name).read_bytes())
    repo.commit("Example benchmark repository")
    return repo


@pytest.fixture
def sweep_repo(example_repo: Repo) -> Repo:
    """The example repository with its launch scripts and `scripts` setting."""
    shutil.copytree(
        PROJECT / "launch" / "benchmarks",
        example_repo.path / "launch" / "benchmarks",
        symlinks=True,
    )
    example_repo.write("pyproject.toml", '[tool.gov]\nscripts = "launch/benchmarks"\n')
    example_repo.commit("Launch scripts")
    return example_repo


def require_corpus() -> Path:
    if not (CORPUS / "inferencex.bundle").is_file():
        pytest.skip(f"shared corpus not found at {CORPUS} (it lives beside the project)")
    return CORPUS


def clone_corpus(tmp_path_factory: pytest.TempPathFactory, name: str = "corpus") -> Path:
    """A fresh clone of the InferenceX corpus with every PR branch local."""
    corpus = require_corpus()
    target = tmp_path_factory.mktemp(name) / "inferencex"
    git(target.parent, "clone", "-q", str(corpus / "inferencex.bundle"), str(target))
    git(target, "fetch", "-q", "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*")
    return target


def writable_corpus_clone(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A private clone for tests that write (prepare-merge leaves scratch refs,
    its journal and forge records), with an identity and HEAD detached, so
    prepare-merge has no branch to step off and back on."""
    target = clone_corpus(tmp_path_factory, name)
    for key, value in (("user.name", "gov tests"), ("user.email", "tests@gov.invalid")):
        git(target, "config", key, value)
    git(target, "checkout", "-q", "--detach")
    return target


@pytest.fixture(scope="session")
def corpus_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the InferenceX corpus with every PR branch local (read only)."""
    return clone_corpus(tmp_path_factory)


@pytest.fixture(scope="session")
def goldens() -> Path:
    return require_corpus() / "goldens"


@pytest.fixture
def gov_exe() -> str:
    exe = shutil.which("gov", path=str(Path(os.sys.executable).parent)) or shutil.which("gov")
    if exe is None:
        pytest.skip("the gov console script is not installed (pip install -e .)")
    return exe
