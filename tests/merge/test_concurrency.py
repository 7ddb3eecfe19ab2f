"""prepare-merge's own refs and locks: a user branch named like gov's scratch
ref survives, two runs on one PR never both pass the guard (a kernel lock,
taken before the first read), and two PRs at once leave the checkout clean."""

from __future__ import annotations

import fcntl
import os
import subprocess

import pytest

from governance.merge import journal as jr
from tests.harness import Repo, run_gov, start_process
from tests.merge.conftest import LINK, OTHER, PR, Setup

OTHER_PR = 2196
ENTRY_2196 = (
    "\n- config-keys:\n    - dsr1-fp4-b200-sglang\n  description:\n"
    '    - "MI355X DSv4"\n  pr-link: XXX\n'
)


def _open_2196(pr_setup: Setup, branch: str) -> str:
    """PR #2196 on a branch forked from main before #2195 (its own entry)."""
    repo: Repo = pr_setup.repo
    base = repo.sha("main~1")
    repo.git("branch", branch, base)
    text = pr_setup.changelog(base).decode() + ENTRY_2196
    head = repo.commit_on(branch, {"perf-changelog.yaml": text}, "MI355X")
    pr_setup.forge().open_pull(OTHER_PR, branch, title="MI355X DSv4")
    return head


def test_a_user_branch_named_like_the_scratch_ref_survives(pr_setup: Setup) -> None:
    name = f"gov/prepare-merge/pr-{PR}"
    head = _open_2196(pr_setup, name)
    first = run_gov("prepare-merge", "--pr", str(PR), cwd=pr_setup.path)
    assert first.exit_code == 0, first.stdout + first.stderr
    assert pr_setup.ref(name) == head  # #2196's head branch, untouched
    assert pr_setup.forge().get_pull(OTHER_PR).head_sha == head
    second = run_gov("prepare-merge", "--pr", str(OTHER_PR), "--no-merge", cwd=pr_setup.path)
    assert second.exit_code == 0, second.stdout + second.stderr
    moved = pr_setup.ref(name)  # moved by the push (compare-and-swap), not deleted
    assert moved is not None and pr_setup.git("merge-base", "--is-ancestor", head, moved) == ""
    assert pr_setup.scratch(PR) is None and pr_setup.scratch(OTHER_PR) is None


def test_a_scratch_ref_no_journal_records_is_refused_not_reused(pr_setup: Setup) -> None:
    ref = f"refs/gov/prepare-merge/pr-{PR}"
    pr_setup.git("update-ref", ref, pr_setup.main_tip)
    result = run_gov("prepare-merge", "--pr", str(PR), cwd=pr_setup.path)
    assert result.exit_code == 1 and "no journal records it" in result.stdout
    assert pr_setup.scratch() == pr_setup.main_tip  # not gov's to delete
    assert pr_setup.ref("bringup") == pr_setup.pr_head


def test_a_held_lock_is_a_clear_usage_error(pr_setup: Setup) -> None:
    path = jr.lock_path(pr_setup.path / ".git", PR)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"4242\n")
        result = run_gov("prepare-merge", "--pr", str(PR), cwd=pr_setup.path)
    finally:
        os.close(fd)
    assert result.exit_code == 2
    assert "another run holds the lock (pid 4242)" in result.stderr
    assert pr_setup.ref("bringup") == pr_setup.pr_head and not pr_setup.journal().exists()
    # The lock died with its holder: the next run proceeds.
    assert run_gov("prepare-merge", "--pr", str(PR), cwd=pr_setup.path).exit_code == 0


def _race(pr_setup: Setup, gov_exe: str, prs: list[int]) -> list[tuple[int, str]]:
    procs = [
        start_process([gov_exe, "prepare-merge", "--pr", str(n)], cwd=pr_setup.path) for n in prs
    ]
    out = []
    for proc in procs:
        try:
            stdout, stderr = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # pragma: no cover - reported as a failure
            proc.kill()
            stdout, stderr = proc.communicate()
        out.append((proc.returncode, stdout + stderr))
    return out


def _clean(pr_setup: Setup) -> None:
    assert pr_setup.git("status", "--porcelain") == ""
    assert pr_setup.git("symbolic-ref", "--short", "HEAD") == "main"
    assert pr_setup.git("for-each-ref", "--format=%(refname)", "refs/gov") == ""
    assert not list((pr_setup.path / ".git" / "gov" / "merge").glob("*.json"))


TRIALS = int(os.environ.get("GOV_RACE_TRIALS", "2"))


@pytest.mark.parametrize("trial", range(TRIALS))
def test_two_runs_on_one_pr_exactly_one_wins(pr_setup: Setup, gov_exe: str, trial: int) -> None:
    results = _race(pr_setup, gov_exe, [PR, PR])
    codes = sorted(code for code, _ in results)
    assert 3 not in codes, results
    merged = [text for code, text in results if code == 0 and "squash-merged as" in text]
    assert len(merged) == 1, results
    for code, text in results:
        if "squash-merged as" not in text:  # the loser: refused by the lock, or found it merged
            assert (code == 2 and "another run holds the lock (pid " in text) or (
                code == 0 and "already merged" in text
            ), results
    assert pr_setup.git("rev-list", "--count", f"{pr_setup.main_tip}..main") == "1"
    _clean(pr_setup)


@pytest.mark.parametrize("trial", range(TRIALS))
def test_two_prs_at_once_each_lands_or_refuses_cleanly(
    pr_setup: Setup, gov_exe: str, trial: int
) -> None:
    _open_2196(pr_setup, "mi355x")
    results = _race(pr_setup, gov_exe, [PR, OTHER_PR])
    assert all(code in (0, 1) for code, _ in results), results
    _clean(pr_setup)
    for n, (code, _text) in zip((PR, OTHER_PR), results, strict=True):
        if code != 0:  # lost the race for main (main moved): a rerun lands it
            again = run_gov("prepare-merge", "--pr", str(n), cwd=pr_setup.path)
            assert again.exit_code == 0, again.stdout + again.stderr
    assert pr_setup.forge().get_pull(PR).state == "merged"
    assert pr_setup.forge().get_pull(OTHER_PR).state == "merged"
    log = pr_setup.changelog("main").decode()
    assert f"{LINK}{PR}\n" in log and f"{LINK}{OTHER_PR}\n" in log and OTHER.strip() in log
    _clean(pr_setup)
