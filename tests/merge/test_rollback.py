"""Every failure exit of prepare-merge: the failed step is named, findings are
located, and every ref, HEAD and the working tree are as they were before the
run (pushes already done stay: they are facts on the forge)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from governance.core.settings import Settings
from governance.merge.sweep_seam import SweepOutcome, SweepRequest
from tests.merge.conftest import CHANGELOG, LINK, PR, Setup, append

pytestmark = pytest.mark.usefixtures("pr_setup")


def refused(setup: Setup, step: str, **run: object):
    before = setup.snapshot()
    report = setup.run(**run)  # type: ignore[arg-type]
    assert not report.ok and report.exit_code == 1, report.status
    assert report.failed_step == step, report.status
    assert setup.snapshot() == before
    assert not setup.journal().exists()
    assert setup.git("status", "--porcelain") == ""
    return report


def findings(report) -> list:
    failed = next(s for s in report.steps if s.name == report.failed_step)
    return failed.violations


def on_pr_branch(setup: Setup, edit, message: str) -> None:
    setup.git("checkout", "-q", "bringup")
    path = setup.path / CHANGELOG
    path.write_bytes(edit(path.read_bytes()))
    setup.repo.commit(message)
    setup.git("checkout", "-q", "main")


def test_dirty_worktree_refused_before_anything_is_written(pr_setup: Setup) -> None:
    (pr_setup.path / "scratch.txt").write_text("wip\n")
    pr_setup.git("add", "scratch.txt")  # staged, not committed
    before = pr_setup.snapshot()
    report = pr_setup.run()
    assert report.failed_step == "preflight" and report.exit_code == 1
    (finding,) = findings(report)
    assert finding.code == "GOV612" and finding.path == "scratch.txt" and finding.hint
    assert pr_setup.snapshot() == before and not pr_setup.journal().exists()
    assert [s.name for s in report.steps] == ["preflight"]  # no rollback needed: nothing written


def test_closed_pr_refused(pr_setup: Setup) -> None:
    pr_setup.forge().close_pull(PR)
    report = refused(pr_setup, "preflight")
    assert [v.code for v in findings(report)] == ["GOV613"]


def test_sweep_label_required_when_configured(pr_setup: Setup) -> None:
    settings = replace(Settings(), sweep_labels=("sweep-enabled", "full-sweep-enabled"))
    report = refused(pr_setup, "preflight", settings=settings)
    assert [v.code for v in findings(report)] == ["GOV615"]
    pr_setup.forge().add_label(PR, "full-sweep-enabled")
    assert pr_setup.run(settings=settings, push=False).ok
    pr_setup.forge().add_label(PR, "sweep-enabled")  # two are as bad as none
    assert pr_setup.run(settings=settings, push=False).failed_step == "preflight"


def test_pr_that_rewrote_history_is_refused_with_location(pr_setup: Setup) -> None:
    on_pr_branch(
        pr_setup,
        lambda data: data.replace(b"Add DeepSeek-R1 FP8 MI300X", b"Add DeepSeek-R1 FP8 MI300X!", 1),
        "Touch an old entry",
    )
    report = refused(pr_setup, "validate")
    (finding, *_) = findings(report)
    assert finding.path == CHANGELOG and finding.line > 0 and finding.hint
    assert finding.code.startswith("GOV3")


def test_pr_that_deleted_entries_is_refused(pr_setup: Setup) -> None:
    def drop_first(data: bytes) -> bytes:
        _first, _, rest = data.partition(b"\n\n")
        return rest

    on_pr_branch(pr_setup, drop_first, "Drop an entry")
    report = refused(pr_setup, "validate")
    assert findings(report) and all(v.path == CHANGELOG for v in findings(report))


def test_config_conflict_aborts_naming_the_file(pr_setup: Setup) -> None:
    pr_setup.git("checkout", "-q", "bringup")
    pr_setup.repo.commit("PR tunes", **{"configs__runners.yaml": "pr side\n"})
    pr_setup.git("checkout", "-q", "main")
    pr_setup.repo.commit("main tunes", **{"configs__runners.yaml": "main side\n"})
    report = refused(pr_setup, "merge")
    (finding,) = findings(report)
    assert finding.code == "GOV611" and finding.path == "configs/runners.yaml"
    assert finding.line == 1 and "configs/runners.yaml" in report.status


def test_nothing_remaining_refused_at_resolve(pr_setup: Setup) -> None:
    # main gained the PR's very entry (say, cherry-picked with its final link).
    entry = pr_setup.changelog("bringup")[len(pr_setup.changelog(pr_setup.pr_head + "~1")) :]
    append(pr_setup.repo, entry.decode().replace("XXX", f"{LINK}{PR}"), "Cherry-pick")
    report = refused(pr_setup, "resolve")
    assert [v.code for v in findings(report)] == ["GOV602"]


def test_unknown_config_key_refused_at_check(pr_setup: Setup) -> None:
    on_pr_branch(
        pr_setup,
        lambda data: data.replace(b"    - dsv4-fp8-mi300x-vllm\n  description:\n    - \"Raise",
                                  b"    - no-such-config\n  description:\n    - \"Raise"),
        "Typo in the key",
    )  # fmt: skip
    report = refused(pr_setup, "check")
    (finding,) = findings(report)
    assert finding.code == "GOV501" and finding.line > 0


def test_head_moved_before_push_is_never_overwritten(pr_setup: Setup) -> None:
    def author_pushes(request: SweepRequest) -> SweepOutcome:
        pr_setup.git("checkout", "-q", "bringup")
        pr_setup.repo.commit("Author pushes meanwhile", **{"notes.txt": "x\n"})
        pr_setup.git("checkout", "-q", "--detach")
        return SweepOutcome("", {})

    report = pr_setup.run(sweep=author_pushes)
    assert report.failed_step == "push" and report.exit_code == 1
    moved = pr_setup.ref("bringup")
    assert moved != pr_setup.pr_head and moved != report.prepared
    assert pr_setup.ref("main") == pr_setup.main_tip
    assert pr_setup.scratch() is None
    assert not pr_setup.journal().exists()
    assert pr_setup.git("symbolic-ref", "--short", "HEAD") == "main"


def test_failed_required_check_stops_before_merging(pr_setup: Setup) -> None:
    def ci_fails(request: SweepRequest) -> SweepOutcome:
        pr_setup.forge().record_check(request.prepared, "benchmarks", conclusion="failure")
        return SweepOutcome("", {})

    report = pr_setup.run(sweep=ci_fails, required_checks=("check-changelog", "benchmarks"))
    assert report.failed_step == "checks" and report.exit_code == 1
    assert "benchmarks=failure" in report.status
    # The push happened (a fact on the forge); the merge did not.
    assert pr_setup.ref("bringup") == report.prepared
    assert pr_setup.forge().get_pull(PR).state == "open"
    assert pr_setup.ref("main") == pr_setup.main_tip
    assert pr_setup.scratch() is None and not pr_setup.journal().exists()


def test_main_moving_after_preparation_is_never_merged(pr_setup: Setup) -> None:
    def main_moves(request: SweepRequest) -> SweepOutcome:
        later = pr_setup.git("commit-tree", "main^{tree}", "-p", "main", "-m", "later")
        pr_setup.git("update-ref", "refs/heads/main", later)
        return SweepOutcome("", {})

    report = pr_setup.run(sweep=main_moves)
    assert report.failed_step == "land" and report.exit_code == 1
    assert pr_setup.forge().get_pull(PR).state == "open"
    assert pr_setup.git("log", "-1", "--format=%s", "main") == "later"
    assert pr_setup.git("status", "--porcelain") == ""
    # A rerun merges the new main in and lands.
    again = pr_setup.run()
    assert again.ok, again.status


def test_unbuildable_plan_refused_before_push(pr_setup: Setup) -> None:
    # The PR's config edit leaves an invalid search space in an entry it does
    # not name: main's CI could not build the post-merge plan. `gov check`
    # (run on the prepared head) already validates every master entry.
    pr_setup.git("checkout", "-q", "bringup")
    path = pr_setup.path / "configs" / "amd-master.yaml"
    path.write_text(path.read_text().replace("conc-start: 4, conc-end: 32", "conc-start: 4", 1))
    pr_setup.repo.commit("Break a search space")
    pr_setup.git("checkout", "-q", "main")
    report = refused(pr_setup, "check")
    assert findings(report) and all(v.path.startswith("configs/") for v in findings(report))
    assert all(v.line > 0 for v in findings(report))


def test_crash_inside_a_step_rolls_back_and_reraises(pr_setup: Setup) -> None:
    def broken(request: SweepRequest) -> SweepOutcome:
        raise RuntimeError("sweep backend exploded")

    before = pr_setup.snapshot()
    with pytest.raises(RuntimeError, match="exploded"):
        pr_setup.run(sweep=broken)
    assert pr_setup.snapshot() == before and not pr_setup.journal().exists()


def test_required_check_that_never_reports_times_out(pr_setup: Setup) -> None:
    report = pr_setup.run(required_checks=("check-changelog", "benchmarks"), check_timeout=0.05)
    assert report.failed_step == "checks" and report.exit_code == 1
    assert "no verdict within" in report.status and "benchmarks" in report.status
    assert pr_setup.forge().get_pull(PR).state == "open"
    assert pr_setup.ref("main") == pr_setup.main_tip


def test_interrupt_rolls_back_before_exiting(pr_setup: Setup) -> None:
    def ctrl_c(request: SweepRequest) -> SweepOutcome:
        raise KeyboardInterrupt

    before = pr_setup.snapshot()
    with pytest.raises(KeyboardInterrupt):
        pr_setup.run(sweep=ctrl_c)
    assert pr_setup.snapshot() == before and not pr_setup.journal().exists()
