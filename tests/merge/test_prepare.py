"""prepare-merge in-process on real temporary repositories: the success
paths, idempotent reruns, dry runs, and the sweep seam."""

from __future__ import annotations

from governance.core.codes import violation
from governance.core.settings import Settings
from governance.merge.prepare import PrepareOptions, prepare_merge
from governance.merge.sweep_seam import SweepOutcome, SweepRequest
from tests.merge.conftest import BRINGUP, LINK, OTHER, PR, Setup

CANONICAL = BRINGUP.replace("pr-link: XXX", f"pr-link: {LINK}{PR}").encode()


def steps(report) -> dict[str, str]:
    return {s.name: s.outcome for s in report.steps}


def test_merges_end_to_end(pr_setup: Setup) -> None:
    main_before = pr_setup.changelog("main")
    report = pr_setup.run()
    assert report.ok and report.exit_code == 0, report.status
    assert steps(report) == {
        "preflight": "ok", "validate": "ok", "merge": "ok", "resolve": "ok",
        "canonicalize": "ok", "commit": "ok", "check": "ok", "plan": "ok",
        "push": "ok", "checks": "ok", "land": "ok",
    }  # fmt: skip
    # main's bytes verbatim, then the PR's entry with its own link.
    assert pr_setup.changelog("main") == main_before + CANONICAL
    assert pr_setup.ref("main") == report.merge_commit
    assert pr_setup.git("log", "-1", "--format=%s", "main").endswith(f"(#{PR})")
    # The PR branch carries the prepared merge commit (main's tip is its 2nd parent).
    assert pr_setup.ref("bringup") == report.prepared
    assert pr_setup.git("rev-parse", f"{report.prepared}^2") == pr_setup.main_tip
    assert [r.old for r in report.rewrites] == ["XXX"]
    assert [c.subject for c in report.commits] == ["Merge branch 'main' into bringup"]
    assert pr_setup.forge().get_pull(PR).state == "merged"
    # Nothing left behind; HEAD back on the branch it was on.
    assert pr_setup.scratch() is None
    assert not pr_setup.journal().exists()
    assert pr_setup.git("symbolic-ref", "--short", "HEAD") == "main"
    assert pr_setup.git("status", "--porcelain") == ""
    assert (pr_setup.path / "perf-changelog.yaml").read_bytes() == main_before + CANONICAL


def test_rerun_after_success_changes_nothing(pr_setup: Setup) -> None:
    first = pr_setup.run()
    assert first.ok
    before = pr_setup.snapshot()
    again = pr_setup.run()
    assert again.ok and again.exit_code == 0
    assert "already merged" in again.status
    assert pr_setup.snapshot() == before


def test_no_push_keeps_every_branch_and_reruns_idempotently(pr_setup: Setup) -> None:
    report = pr_setup.run(push=False)
    assert report.ok, report.status
    assert steps(report)["push"] == "skipped" and steps(report)["land"] == "skipped"
    assert pr_setup.ref("bringup") == pr_setup.pr_head
    assert pr_setup.ref("main") == pr_setup.main_tip
    # The result waits on the scratch branch.
    assert pr_setup.scratch() == report.prepared
    assert pr_setup.changelog(report.prepared).endswith(OTHER.encode() + CANONICAL)
    before = pr_setup.snapshot()
    again = pr_setup.run(push=False)
    assert again.ok and "already prepared" in again.status
    assert again.prepared == report.prepared
    assert pr_setup.snapshot() == before


def test_no_merge_pushes_then_rerun_finds_it_prepared(pr_setup: Setup) -> None:
    report = pr_setup.run(merge=False)
    assert report.ok, report.status
    assert pr_setup.ref("bringup") == report.prepared
    assert pr_setup.forge().get_pull(PR).state == "open"
    assert pr_setup.ref("main") == pr_setup.main_tip
    again = pr_setup.run(merge=False)
    assert again.ok
    assert steps(again)["commit"] == "skipped" and steps(again)["push"] == "skipped"
    assert again.commits == [] and pr_setup.ref("bringup") == report.prepared
    final = pr_setup.run()
    assert final.ok and final.merge_commit == pr_setup.ref("main")


def test_dry_run_changes_nothing(pr_setup: Setup) -> None:
    before = pr_setup.snapshot()
    report = pr_setup.run(dry_run=True)
    assert report.ok and report.dry_run
    assert {steps(report)[s] for s in ("push", "checks", "land")} == {"would"}
    assert [r.old for r in report.rewrites] == ["XXX"]
    assert pr_setup.snapshot() == before
    assert not pr_setup.journal().exists()
    assert pr_setup.forge().get_pull(PR).state == "open"
    assert pr_setup.git("status", "--porcelain") == ""


def test_clean_merge_is_canonicalized_in_the_merge_commit(pr_setup: Setup) -> None:
    # main moves without touching the changelog: git merges cleanly.
    pr_setup.git("reset", "-q", "--hard", "HEAD~1")
    pr_setup.repo.commit("Runner note", **{"configs__notes.txt": "h200 pool grows\n"})
    report = pr_setup.run()
    assert report.ok, report.status
    assert steps(report)["resolve"] == "skipped"
    assert pr_setup.changelog("main").endswith(CANONICAL)
    assert (pr_setup.path / "configs" / "notes.txt").is_file()


def test_up_to_date_pr_gets_a_canonicalization_commit(pr_setup: Setup) -> None:
    pr_setup.git("reset", "-q", "--hard", "HEAD~1")  # main back at the PR's base
    report = pr_setup.run(push=True, merge=False)
    assert report.ok, report.status
    assert steps(report)["merge"] == "skipped"
    assert [c.subject for c in report.commits] == [
        f"fix: canonicalize PR #{PR} changelog link [skip-sweep]"
    ]
    assert pr_setup.git("rev-parse", f"{report.prepared}^") == pr_setup.pr_head
    assert pr_setup.changelog("bringup").endswith(CANONICAL)


def test_sweep_seam_gets_plan_commits_and_prepared_head(pr_setup: Setup) -> None:
    seen: list[SweepRequest] = []

    def sweep(request: SweepRequest) -> SweepOutcome:
        seen.append(request)
        return SweepOutcome("sweep: 0 reused, 3 to launch\n", {"reused": 0})

    report = pr_setup.run(sweep=sweep, push=False)
    assert report.ok, report.status
    (request,) = seen
    assert request.pr == PR and request.prepared == report.prepared
    assert request.pr_commits == (pr_setup.pr_head,) and request.pr_head == pr_setup.pr_head
    assert request.plan.document["changelog_metadata"]["entries"]
    assert report.sweep == "sweep: 0 reused, 3 to launch\n"
    assert report.sweep_data == {"reused": 0}


def test_sweep_problems_refuse_before_push_and_roll_back(pr_setup: Setup) -> None:
    def sweep(request: SweepRequest) -> SweepOutcome:
        failed = violation("GOV705", "single_node.1k1k[0]: failed", "single_node.1k1k[0]")
        return SweepOutcome("sweep: 1 rerun\n", {}, [failed])

    report = pr_setup.run(sweep=sweep)
    assert report.failed_step == "plan" and report.exit_code == 1
    assert [v.code for v in report.steps[-2].violations] == ["GOV705"]
    assert pr_setup.git("rev-parse", "bringup") == pr_setup.pr_head  # nothing was pushed


def test_plan_lists_rows_when_no_sweep_is_configured(pr_setup: Setup) -> None:
    report = pr_setup.run(push=False)
    assert report.plan_rows
    assert all("dsv4" in row and "mi300x" in row for row in report.plan_rows)


def test_second_pr_entry_already_final_link_is_left_alone(pr_setup: Setup) -> None:
    pr_setup.git("checkout", "-q", "bringup")
    path = pr_setup.path / "perf-changelog.yaml"
    path.write_bytes(path.read_bytes().replace(b"pr-link: XXX", f"pr-link: {LINK}{PR}".encode()))
    pr_setup.repo.commit("Final link")
    pr_setup.git("checkout", "-q", "main")
    report = pr_setup.run()
    assert report.ok, report.status
    assert report.rewrites == []
    assert pr_setup.changelog("main").endswith(CANONICAL)


def test_merge_after_no_push_clears_the_kept_result(pr_setup: Setup) -> None:
    kept = pr_setup.run(push=False)
    assert kept.ok and pr_setup.journal().exists()
    # The PR moves on (a new push): the kept result is stale and is redone.
    pr_setup.git("checkout", "-q", "bringup")
    pr_setup.repo.commit("More work", **{"notes.txt": "more\n"})
    pr_setup.git("checkout", "-q", "main")
    merged = pr_setup.run()
    assert merged.ok, merged.status
    assert merged.prepared != kept.prepared
    assert pr_setup.scratch() is None and not pr_setup.journal().exists()


def test_dry_run_leaves_a_kept_result_alone(pr_setup: Setup) -> None:
    kept = pr_setup.run(push=False)
    pr_setup.git("checkout", "-q", "bringup")
    pr_setup.repo.commit("More work", **{"notes.txt": "more\n"})
    pr_setup.git("checkout", "-q", "main")
    before = pr_setup.snapshot()
    journal = pr_setup.journal().read_text()
    assert pr_setup.run(dry_run=True).ok
    assert pr_setup.snapshot() == before and pr_setup.journal().read_text() == journal
    assert pr_setup.scratch() == kept.prepared


def test_pr_without_changelog_entry_merges_with_nothing_to_plan(pr_setup: Setup) -> None:
    pr_setup.git("checkout", "-q", "-b", "docs-only", "main~1")
    pr_setup.repo.commit("Docs", **{"docs__runbook.md": "how to run\n"})
    pr_setup.git("checkout", "-q", "main")
    pr_setup.forge().open_pull(4242, "docs-only")
    report = prepare_merge_for(pr_setup, 4242)
    assert report.ok, report.status
    assert {s.name: s.outcome for s in report.steps}["plan"] == "skipped"
    assert report.plan_rows == [] and report.rewrites == []
    assert pr_setup.git("show", "main:docs/runbook.md") == "how to run"


def prepare_merge_for(setup: Setup, number: int):
    options = PrepareOptions(number, poll_interval=0.01, check_timeout=1.0)
    return prepare_merge(setup.gitrepo(), Settings(), setup.forge(), options)


def _insert_mid_history(setup: Setup, branch: str, start: str) -> bytes:
    """Branch `branch` from `start` with BRINGUP inserted after history's first entry."""
    setup.git("checkout", "-q", "-B", branch, start)
    data = setup.changelog(start)
    cut = data.index(b"\n- config-keys:") + 1
    entry = BRINGUP.lstrip("\n").encode()
    (setup.path / "perf-changelog.yaml").write_bytes(data[:cut] + entry + b"\n" + data[cut:])
    setup.repo.commit("Insert the entry after the first one")
    setup.git("checkout", "-q", "main")
    return entry


def test_an_entry_inserted_mid_history_is_re_appended_and_reported(pr_setup: Setup) -> None:
    """The PR inserted its entry between history's entries (45 of 230 real
    main-mode failures since July are that): resolve moves it to the end,
    its bytes unchanged, says so, and the merge lands instead of GOV302."""
    main_before = pr_setup.changelog("main")
    _insert_mid_history(pr_setup, "bringup", f"{pr_setup.main_tip}~1")  # conflicts with main
    report = pr_setup.run()
    assert report.ok, (report.status, [(s.name, s.detail) for s in report.steps])
    (resolve,) = [s for s in report.steps if s.name == "resolve"]
    assert "repaired: 1 entry(ies) the PR inserted in the middle of history" in resolve.detail
    assert pr_setup.changelog("main") == main_before + CANONICAL


def test_an_inserted_entry_without_a_conflict_is_repaired_too(pr_setup: Setup) -> None:
    main_before = pr_setup.changelog("main")
    _insert_mid_history(pr_setup, "bringup", "main")  # already contains main: no merge
    report = pr_setup.run()
    assert report.ok, (report.status, [(s.name, s.detail) for s in report.steps])
    (resolve,) = [s for s in report.steps if s.name == "resolve"]
    assert resolve.outcome == "ok" and "moved to the end" in resolve.detail
    assert pr_setup.changelog("main") == main_before + CANONICAL
