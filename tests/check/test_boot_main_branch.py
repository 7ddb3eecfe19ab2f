"""Which branch is main before any trusted settings are read (`check.sides.boot_main_branch`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from governance.check.sides import boot_main_branch
from governance.git.repo import GitRepo
from tests.harness import Repo, git


@pytest.fixture
def trunk_repo(make_repo: Callable[..., Repo]) -> Repo:
    """main is called `trunk`, and trunk's own settings say so."""
    repo = make_repo("trunk")
    repo.configure_identity()
    repo.commit("Settings", **{".gov.toml": 'main-branch = "trunk"\n'})
    repo.git("branch", "-m", "trunk")
    return repo


def test_a_named_branch_wins_and_main_is_main_when_it_exists(trunk_repo: Repo) -> None:
    assert boot_main_branch(GitRepo(trunk_repo.path), "release") == "release"
    trunk_repo.git("branch", "main")
    assert boot_main_branch(GitRepo(trunk_repo.path), None) == "main"


def test_the_checkout_names_main_when_that_branch_agrees(trunk_repo: Repo) -> None:
    trunk_repo.git("checkout", "-q", "-b", "pr")
    assert boot_main_branch(GitRepo(trunk_repo.path), None) == "trunk"


def test_a_pr_branch_in_ci_cannot_name_itself_main(trunk_repo: Repo, tmp_path: Path) -> None:
    """In CI every branch is remote-tracking: a PR whose settings name its own
    branch main is not believed (the default stays, and finding it fails)."""
    trunk_repo.git("checkout", "-q", "-b", "evil")
    trunk_repo.commit("I am main now", **{".gov.toml": 'main-branch = "evil"\n'})
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "--no-checkout", str(trunk_repo.path), str(clone))
    git(clone, "remote", "set-head", "origin", "--delete")
    git(clone, "checkout", "-q", "--detach", "origin/evil")
    for branch in git(clone, "for-each-ref", "--format=%(refname:short)", "refs/heads").split():
        git(clone, "branch", "-D", branch)  # like actions/checkout: no local branches
    assert boot_main_branch(GitRepo(clone), None) == "main"


def test_a_claim_that_branch_does_not_confirm_is_ignored(trunk_repo: Repo) -> None:
    trunk_repo.git("checkout", "-q", "-b", "pr")
    trunk_repo.commit("Claims another main", **{".gov.toml": 'main-branch = "stable"\n'})
    trunk_repo.git("branch", "stable", "trunk")  # stable's own tip says trunk
    assert boot_main_branch(GitRepo(trunk_repo.path), None) == "main"


def test_the_forge_default_branch_of_a_clone(trunk_repo: Repo, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(trunk_repo.path), str(clone))
    git(clone, "checkout", "-q", "-b", "pr")
    (clone / ".gov.toml").write_text('main-branch = "pr"\n')  # the checkout's claim: ignored
    assert boot_main_branch(GitRepo(clone), None) == "trunk"
