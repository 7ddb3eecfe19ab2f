"""The three merge commands through the command line: flags, formats, exit codes."""

from __future__ import annotations

import json

from tests.harness import Result, run_gov
from tests.merge.conftest import BRINGUP, CHANGELOG, LINK, PR, Setup


def gov(setup: Setup, *args: str) -> Result:
    return run_gov(*args, cwd=setup.path)


def test_prepare_merge_json_report(pr_setup: Setup) -> None:
    done = gov(pr_setup, "prepare-merge", "--pr", str(PR),
               "--format", "json")  # fmt: skip
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["failed_step"] is None and report["exit_code"] == 0
    assert [s["name"] for s in report["steps"]][-1] == "land"
    assert report["merge_commit"] == pr_setup.ref("main")
    assert report["rewrites"][0]["old"] == "XXX"
    assert report["commits"][0]["sha"] == report["prepared"]


def test_prepare_merge_refusal_exits_1_naming_the_step(pr_setup: Setup) -> None:
    (pr_setup.path / "wip.txt").write_text("x\n")
    pr_setup.git("add", "wip.txt")  # staged: an uncommitted change
    done = gov(pr_setup, "prepare-merge", "--pr", str(PR))
    assert done.exit_code == 1
    assert "[NO] preflight" in done.stdout
    assert "wip.txt: GOV612" in done.stdout and "hint: commit, stash" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("refused at preflight")


def test_untracked_files_do_not_block_prepare_merge(pr_setup: Setup) -> None:
    """The merge happens in memory: an untracked file is neither read nor written."""
    (pr_setup.path / "notes.txt").write_text("mine\n")
    done = gov(pr_setup, "prepare-merge", "--pr", str(PR), "--no-push")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "[ok] preflight" in done.stdout and "GOV612" not in done.stdout
    assert (pr_setup.path / "notes.txt").read_text() == "mine\n"


def test_prepare_merge_dry_run_and_no_push_flags(pr_setup: Setup) -> None:
    dry = gov(pr_setup, "prepare-merge", "--pr", str(PR), "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "dry run: nothing was changed" in dry.stdout and "[..] land" in dry.stdout
    assert pr_setup.ref("bringup") == pr_setup.pr_head
    kept = gov(pr_setup, "prepare-merge", "--pr", str(PR), "--no-push")
    assert kept.exit_code == 0, kept.stderr
    assert pr_setup.ref("bringup") == pr_setup.pr_head
    assert pr_setup.scratch() is not None


def test_prepare_merge_usage_errors_exit_2(pr_setup: Setup) -> None:
    assert gov(pr_setup, "prepare-merge").exit_code == 2
    missing = gov(pr_setup, "prepare-merge", "--pr", "77")
    # An unknown PR is a usage error (2), reported as the failed preflight.
    assert missing.exit_code == 2 and "no local pull request #77" in missing.stdout
    assert "failed at preflight" in missing.stdout


def test_canonicalize_rewrites_only_this_prs_entries(pr_setup: Setup) -> None:
    pr_setup.git("checkout", "-q", "bringup")
    path = pr_setup.path / CHANGELOG
    before = path.read_bytes()
    done = gov(pr_setup, "canonicalize", "--pr", str(PR))  # merge-base default
    assert done.exit_code == 0, done.stderr
    assert f"pr-link XXX -> {LINK}{PR}" in done.stdout
    assert path.read_bytes() == before.replace(b"pr-link: XXX", f"pr-link: {LINK}{PR}".encode())
    again = gov(pr_setup, "canonicalize", "--pr", str(PR), "--base-ref", "main~1")
    assert again.exit_code == 0 and "nothing changed" in again.stdout
    assert path.read_bytes().endswith(BRINGUP.replace("XXX", f"{LINK}{PR}").encode())


def test_canonicalize_refusal_is_located_and_writes_nothing(pr_setup: Setup) -> None:
    pr_setup.git("checkout", "-q", "bringup")
    path = pr_setup.path / CHANGELOG
    bad = path.read_bytes().replace(b"pr-link: XXX", b"pr-link: PLACEHOLDER")
    path.write_bytes(bad)
    done = gov(pr_setup, "canonicalize", "--pr", str(PR),
               "--base-ref", "main~1")  # fmt: skip
    assert done.exit_code == 1
    assert f"{CHANGELOG}:" in done.stderr and "GOV4" in done.stderr and "hint:" in done.stderr
    assert path.read_bytes() == bad


def test_resolve_conflict_during_a_real_merge(pr_setup: Setup) -> None:
    pr_setup.git("checkout", "-q", "bringup")
    assert gov(pr_setup, "resolve-conflict", "--pr", str(PR)).exit_code == 2
    pr_setup.git("merge", "--no-edit", "main", check=False)
    assert pr_setup.git("diff", "--name-only", "--diff-filter=U") == CHANGELOG
    done = gov(pr_setup, "resolve-conflict", "--pr", str(PR))
    assert done.exit_code == 0, done.stderr
    assert "resolved, staged and checked" in done.stdout
    assert pr_setup.git("diff", "--name-only", "--diff-filter=U") == ""
    staged = pr_setup.git("show", f":{CHANGELOG}")
    assert staged.endswith(f"pr-link: {LINK}{PR}")
    assert staged.startswith(pr_setup.changelog("main").decode().rstrip("\n"))
    pr_setup.git("commit", "-q", "--no-edit")
    ok = gov(pr_setup, "check", "--pr", str(PR), "--base-ref", "main")
    assert ok.exit_code == 0, ok.stdout + ok.stderr
