"""SIGKILL prepare-merge right after each step's journal write (the test-only
GOV_TEST_CRASH_AFTER hook), then check what the dead run left and that a
plain rerun recovers, completes, and leaves no branch anywhere it should not.
The killed run is a real process; the rerun runs in process."""

from __future__ import annotations

import json
import signal

import pytest

from tests.harness import run_gov, run_process
from tests.merge.conftest import PR, Setup

STEPS = (
    "preflight", "validate", "merge", "resolve", "canonicalize", "commit",
    "check", "plan", "push", "checks", "land",
)  # fmt: skip


@pytest.mark.parametrize("step", STEPS)
def test_kill_after_each_step_then_rerun(pr_setup: Setup, gov_exe: str, step: str) -> None:
    main_before = pr_setup.changelog("main")
    before = pr_setup.snapshot()
    killed = run_process(
        [gov_exe, "prepare-merge", "--pr", str(PR)],
        cwd=pr_setup.path,
        env={"GOV_TEST_CRASH_AFTER": step},
    )
    assert killed.exit_code == -signal.SIGKILL, killed.stdout + killed.stderr
    assert pr_setup.git("status", "--porcelain") == ""

    writes = STEPS.index(step) >= STEPS.index("commit")
    if not writes:
        # Up to canonicalize the run only reads: a dead run leaves nothing at all.
        assert not pr_setup.journal().exists()
        assert pr_setup.snapshot() == before
    else:
        # What the dead run left: its journal, at this step.
        journal = json.loads(pr_setup.journal().read_text())
        assert journal["step"] == step and journal["original_branch"] == "main"
        pushed = STEPS.index(step) >= STEPS.index("push")
        landed = step == "land"
        # Refs: the PR branch moved only by the push, main only by the merge.
        assert (pr_setup.ref("bringup") == pr_setup.pr_head) is not pushed
        if pushed:
            assert pr_setup.ref("bringup") == journal["prepared"]
        assert (pr_setup.ref("main") == pr_setup.main_tip) is not landed
        assert pr_setup.scratch() == journal["prepared"]

    rerun = run_gov("prepare-merge", "--pr", str(PR), cwd=pr_setup.path)
    assert rerun.exit_code == 0, rerun.stdout + rerun.stderr
    assert ("recover" in rerun.stdout) is writes
    landed = step == "land"
    if landed:
        assert "already merged" in rerun.stdout
    # Final state: merged once, PR entry canonical, nothing of gov left behind.
    assert pr_setup.forge().get_pull(PR).state == "merged"
    assert pr_setup.git("rev-list", "--count", f"{pr_setup.main_tip}..main") == "1"
    merged = pr_setup.changelog("main")
    assert merged.startswith(main_before)
    assert merged.endswith(
        f"pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/{PR}\n".encode()
    )
    assert pr_setup.scratch() is None
    assert not pr_setup.journal().exists()
    assert pr_setup.git("symbolic-ref", "--short", "HEAD") == "main"
    assert pr_setup.git("status", "--porcelain") == ""
    assert pr_setup.git("for-each-ref", "--format=%(refname)", "refs/gov") == ""
