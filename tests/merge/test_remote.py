"""The git side of `--forge github`: main fetched from the remote, the PR
branch pushed with a lease. The PR records live on a local forge over a bare
`origin` (the stand-in for GitHub; its REST side is tested in tests/forge)."""

from __future__ import annotations

from pathlib import Path

from governance.core.settings import Settings
from governance.forge.local import LocalForge
from governance.git.repo import GitRepo
from governance.merge.prepare import PrepareOptions, prepare_merge
from governance.merge.sweep_seam import SweepOutcome, SweepRequest
from tests.harness import git
from tests.merge.conftest import PR, Setup


def make_origin(setup: Setup, tmp_path: Path) -> tuple[Path, LocalForge]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(setup.path), str(origin))
    for key, value in (("user.name", "gov tests"), ("user.email", "tests@gov.invalid")):
        git(origin, "config", key, value)
    setup.git("remote", "add", "origin", str(origin))
    setup.git("fetch", "-q", "origin")
    forge = LocalForge(GitRepo(origin), repository_slug="SemiAnalysisAI/InferenceX")
    forge.open_pull(PR, "bringup", title="Raise MI300X DSv4 FP8 concurrency")
    return origin, forge


def run(setup: Setup, forge: LocalForge, sweep=None, **options: object):
    opts = PrepareOptions(PR, remote="origin", poll_interval=0.01, check_timeout=1.0, **options)  # type: ignore[arg-type]
    return prepare_merge(GitRepo(setup.path), Settings(), forge, opts, sweep=sweep)


def test_fetches_main_pushes_with_lease_and_lands(pr_setup: Setup, tmp_path: Path) -> None:
    origin, forge = make_origin(pr_setup, tmp_path)
    # main moves on the remote only: the local main is stale, the fetch must see it.
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    (other / "notes.txt").write_text("remote-only change\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "Remote change")
    git(other, "push", "-q", "origin", "main")
    remote_main = git(origin, "rev-parse", "main")
    report = run(pr_setup, forge)
    assert report.ok, report.status
    assert report.main_tip == remote_main
    assert git(origin, "rev-parse", "bringup") == report.prepared
    assert git(origin, "rev-parse", "main") == report.merge_commit
    assert git(origin, "show", "main:notes.txt") == "remote-only change"
    assert pr_setup.ref("bringup") == pr_setup.pr_head  # local branches untouched
    assert pr_setup.scratch() is None


def test_lease_refuses_when_the_remote_branch_moved(pr_setup: Setup, tmp_path: Path) -> None:
    origin, forge = make_origin(pr_setup, tmp_path)
    pr_setup.repo.configure_identity()

    def author_pushes(request: SweepRequest) -> SweepOutcome:
        other = tmp_path / "author"
        git(tmp_path, "clone", "-q", "-b", "bringup", str(origin), str(other))
        (other / "notes.txt").write_text("late push\n")
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", "Late push")
        git(other, "push", "-q", "origin", "bringup")
        return SweepOutcome("", {})

    report = run(pr_setup, forge, sweep=author_pushes)
    assert report.failed_step == "push" and report.exit_code == 1
    assert git(origin, "log", "-1", "--format=%s", "bringup") == "Late push"
    assert git(origin, "rev-parse", "main") == pr_setup.main_tip
    assert forge.get_pull(PR).state == "open"
