"""What a killed run left outside git's refs, and who may remove it
(`merge.scratch.clean_litter`): a dead gov's sweep checkout goes, unless a
launch it started may still be adopted from it (open in this repository's
ledger: a Slurm task is no local process gov can see), and never by another
repository's gov."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from governance.core.state import StateLayout
from governance.git.repo import GitRepo
from governance.merge.scratch import clean_litter
from governance.sweeps.launches import Launches, OpenLaunch
from governance.sweeps.ledger import Ledger
from tests.harness import Repo


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has ended."""
    done = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.fixture
def checkouts() -> Iterator[Callable[[Repo, int], Path]]:
    """A dead run's sweep checkout (`gov-sweep-<pid>-*/tree`, a linked worktree)."""
    made: list[Path] = []

    def make(repo: Repo, pid: int) -> Path:
        folder = Path(tempfile.mkdtemp(prefix=f"gov-sweep-{pid}-"))
        repo.git("worktree", "add", "--detach", "--quiet", str(folder / "tree"), "HEAD")
        made.append(folder)
        return folder

    yield make
    for folder in made:
        subprocess.run(["rm", "-rf", str(folder)], check=False)


def _launch(repo: Repo, owner: str) -> OpenLaunch:
    return OpenLaunch(
        str(repo.path / "results" / "row"), "token", "job", "identity", "slurm",
        repo.sha("HEAD"), 7, owner, "2026-12-05T00:00:00",
    )  # fmt: skip


def test_a_dead_runs_checkout_goes_unless_a_launch_of_it_is_still_open(
    make_repo: Callable[..., Repo], checkouts: Callable[[Repo, int], Path], dead_pid: int
) -> None:
    repo = make_repo("a")
    repo.commit("start", **{"file.txt": "x\n"})
    folder = checkouts(repo, dead_pid)
    git = GitRepo(repo.path)
    with Ledger(StateLayout(git.git_dir).runs_db) as ledger:
        launch = _launch(repo, f"{dead_pid}:12345")
        Launches(ledger).open([launch])

    kept = clean_litter(git, repo.path / "results")
    assert folder.exists() and kept == []  # a Slurm task may still run from it

    with Ledger(StateLayout(git.git_dir).runs_db) as ledger:
        Launches(ledger).close_unstarted(launch.result_path)
    done = clean_litter(git, repo.path / "results")
    assert not folder.exists()
    assert done == [
        "removed 1 linked worktree(s) of a dead run",
        "removed 1 temporary folder(s) of a dead run",
    ]
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_another_repositorys_checkout_is_left_to_it(
    make_repo: Callable[..., Repo], checkouts: Callable[[Repo, int], Path], dead_pid: int
) -> None:
    mine, theirs = make_repo("mine"), make_repo("theirs")
    for repo in (mine, theirs):
        repo.commit("start", **{"file.txt": "x\n"})
    folder = checkouts(theirs, dead_pid)

    assert clean_litter(GitRepo(mine.path), mine.path / "results") == []
    assert (folder / "tree" / "file.txt").exists()  # its own repository decides
    clean_litter(GitRepo(theirs.path), theirs.path / "results")
    assert not folder.exists()
