"""The embedded forge against real temporary repositories and a real SQLite file."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta

import pytest

from governance.forge import open_forge
from governance.forge.base import (
    ChecksFailedError,
    ChecksTimeoutError,
    ForgeError,
    HeadMovedError,
    MergeRefusedError,
)
from governance.forge.local import LocalForge, pr_list, pr_open, pr_show
from governance.forge.render import render_pull, render_pull_list
from governance.git.objects import Objects
from governance.git.repo import GitRepo
from tests.harness import Repo


def ticking_clock(start: datetime | None = None):
    """A deterministic `now` that advances one second per call."""
    moment = [start or datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)]

    def now() -> datetime:
        moment[0] += timedelta(seconds=1)
        return moment[0]

    return now


def topic(sandbox: Repo, name: str = "feature", text: str = "- config-keys: [b]\n") -> str:
    sandbox.branch(name)
    return sandbox.commit_on(name, {"perf-changelog.yaml": text, "new.txt": "x\n"}, "add entry b")


@pytest.fixture
def forge(sandbox: Repo) -> LocalForge:
    return LocalForge(sandbox.gitrepo(), repository_slug="acme/bench", now=ticking_clock())


# -- opening, listing, showing ---------------------------------------------------


def test_open_pull_reads_head_live_from_the_branch(sandbox: Repo, forge: LocalForge) -> None:
    head = topic(sandbox)
    pr = pr_open(forge, 42, "feature", labels=["full-sweep-enabled"])
    assert (pr.number, pr.state, pr.head_branch, pr.base_branch) == (42, "open", "feature", "main")
    assert pr.head_sha == head
    assert pr.title == "add entry b"  # the branch's first commit subject
    assert pr.labels == ("full-sweep-enabled",)
    assert not pr.is_fork
    assert pr.url == "local://acme/bench/pull/42"

    moved = sandbox.commit_on("feature", {"more.txt": "y\n"}, "more")
    assert forge.get_pull(42).head_sha == moved


def test_open_pull_refusals(sandbox: Repo, forge: LocalForge) -> None:
    topic(sandbox)
    forge.open_pull(1, "feature", title="T")
    with pytest.raises(ForgeError, match="already exists"):
        forge.open_pull(1, "feature")
    with pytest.raises(ForgeError, match="no local branch 'nope'"):
        forge.open_pull(2, "nope")
    with pytest.raises(ForgeError, match="is the base branch"):
        forge.open_pull(3, "main")
    with pytest.raises(ForgeError, match="invalid PR number"):
        forge.open_pull(0, "feature")
    with pytest.raises(ForgeError, match="no local pull request #9") as info:
        forge.get_pull(9)
    assert "gov pr open" in info.value.hint


def test_list_and_show(sandbox: Repo, forge: LocalForge) -> None:
    head = topic(sandbox)
    sandbox.branch("other")
    sandbox.commit_on("other", {"o.txt": "o\n"}, "other work")
    forge.open_pull(7, "feature", title="Add b")
    forge.open_pull(3, "other", title="Other")
    forge.close_pull(3)
    forge.post_comment(7, "/reuse-sweep-run")
    forge.record_check(head, "check-changelog", conclusion="success")

    assert [p.number for p in pr_list(forge)] == [7]
    assert [p.number for p in pr_list(forge, "closed")] == [3]
    assert [p.number for p in pr_list(forge, "all")] == [3, 7]

    details = pr_show(forge, 7)
    assert details.pull.title == "Add b"
    assert [c.body for c in details.comments] == ["/reuse-sweep-run"]
    assert [(c.name, c.conclusion) for c in details.checks] == [("check-changelog", "success")]

    text = render_pull(details.pull, details.comments, details.checks)
    assert "#7 Add b" in text and head in text and "check-changelog: success" in text
    listing = render_pull_list(pr_list(forge, "all"))
    assert listing.splitlines()[0].startswith("#3") and "closed" in listing
    assert render_pull_list([]) == "no pull requests"


# -- labels, comments, checks ------------------------------------------------------


def test_labels_are_a_set_and_removal_is_idempotent(sandbox: Repo, forge: LocalForge) -> None:
    topic(sandbox)
    forge.open_pull(5, "feature")
    forge.add_label(5, "sweep-enabled")
    forge.add_label(5, "sweep-enabled")
    forge.add_label(5, "evals-only")
    assert forge.get_pull(5).labels == ("evals-only", "sweep-enabled")
    forge.remove_label(5, "sweep-enabled")
    forge.remove_label(5, "sweep-enabled")
    assert forge.get_pull(5).labels == ("evals-only",)
    with pytest.raises(ForgeError):
        forge.add_label(6, "x")


def test_comments_keep_order_and_author(sandbox: Repo, forge: LocalForge) -> None:
    topic(sandbox)
    forge.open_pull(5, "feature")
    first = forge.post_comment(5, "one")
    forge.post_comment(5, "two\nlines")
    comments = forge.list_comments(5)
    assert [c.body for c in comments] == ["one", "two\nlines"]
    assert comments[0] == first
    assert comments[0].created_at < comments[1].created_at
    assert {c.author for c in comments} == {"local"}


def test_record_check_validates_status_and_conclusion(forge: LocalForge) -> None:
    with pytest.raises(ForgeError, match="needs a conclusion"):
        forge.record_check("a" * 40, "check-changelog")
    with pytest.raises(ForgeError, match="no conclusion yet"):
        forge.record_check("a" * 40, "ci", status="queued", conclusion="success")
    forge.record_check("a" * 40, "ci", status="in_progress")
    forge.record_check("b" * 40, "ci", conclusion="failure")
    assert [c.status for c in forge.list_checks("a" * 40)] == ["in_progress"]
    assert forge.list_checks("a" * 40, name="other") == []


class FakeTime:
    """Injected clock + sleep; `on_sleep` lets a test act while the waiter sleeps."""

    def __init__(self, on_sleep=None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.on_sleep = on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep:
            self.on_sleep(len(self.sleeps))


def test_wait_for_checks_polls_until_success(forge: LocalForge) -> None:
    sha = "c" * 40
    forge.record_check(sha, "check-changelog", status="queued")

    def progress(n: int) -> None:
        if n == 2:
            forge.record_check(sha, "check-changelog", conclusion="success")

    t = FakeTime(progress)
    result = forge.wait_for_checks(
        sha, ["check-changelog"], timeout=60, poll_interval=5, clock=t.clock, sleep=t.sleep
    )
    assert result["check-changelog"].conclusion == "success"
    assert t.sleeps == [5, 5]


def test_wait_for_checks_newest_run_wins_and_failure_is_fast(forge: LocalForge) -> None:
    sha = "d" * 40
    forge.record_check(sha, "check-changelog", conclusion="failure")
    forge.record_check(sha, "check-changelog", conclusion="success")  # a re-run
    t = FakeTime()
    assert forge.wait_for_checks(sha, ["check-changelog"], clock=t.clock, sleep=t.sleep)
    forge.record_check(sha, "lint", conclusion="skipped")
    with pytest.raises(ChecksFailedError, match="lint=skipped") as info:
        forge.wait_for_checks(sha, ["check-changelog", "lint"], clock=t.clock, sleep=t.sleep)
    assert info.value.exit_code == 1
    assert t.sleeps == []


def test_wait_for_checks_all_reported_and_timeout(forge: LocalForge) -> None:
    sha = "e" * 40
    forge.record_check(sha, "check-changelog", conclusion="success")
    forge.record_check(sha, "docs", conclusion="skipped")  # fine for a non-required check
    forge.record_check(sha, "bench", status="in_progress")
    t = FakeTime()
    # Without all_reported the unrelated running check does not matter.
    assert forge.wait_for_checks(sha, ["check-changelog"], clock=t.clock, sleep=t.sleep)
    with pytest.raises(ChecksTimeoutError, match="bench") as info:
        forge.wait_for_checks(
            sha,
            ["check-changelog"],
            all_reported=True,
            timeout=12,
            poll_interval=5,
            clock=t.clock,
            sleep=t.sleep,
        )
    assert info.value.waiting == ("bench",)
    assert t.sleeps == [5, 5, 2]  # the last nap is cut to the deadline
    forge.record_check(sha, "bench", conclusion="cancelled")
    with pytest.raises(ChecksFailedError, match="bench=cancelled"):
        forge.wait_for_checks(sha, [], all_reported=True, clock=t.clock, sleep=t.sleep)


# -- merge ---------------------------------------------------------------------------


def test_squash_merge_writes_one_commit_with_the_head_tree(
    sandbox: Repo, forge: LocalForge
) -> None:
    head = topic(sandbox)
    sandbox.commit_on("feature", {"second.txt": "2\n"}, "second commit")
    head = sandbox.sha("feature")
    main_before = sandbox.sha("main")
    forge.open_pull(12, "feature", title="Add entry b")

    result = forge.merge_pull(12, head)

    assert result.merged and result.number == 12
    main_after = sandbox.sha("main")
    assert main_after == result.sha
    assert sandbox.git("rev-parse", f"{main_after}^{{tree}}") == sandbox.git(
        "rev-parse", f"{head}^{{tree}}"
    )
    assert sandbox.git("rev-list", "--parents", "-n", "1", main_after).split() == [
        main_after,
        main_before,
    ]
    assert sandbox.git("log", "-1", "--format=%B", main_after) == "Add entry b (#12)"
    reflog = sandbox.git("reflog", "show", "--format=%gs", "refs/heads/main")
    assert reflog.splitlines()[0] == "gov: squash-merge PR #12"

    pr = forge.get_pull(12)
    assert pr.state == "merged" and pr.merge_commit_sha == main_after
    # The merged head is frozen even if the branch later moves or disappears.
    sandbox.git("branch", "-D", "feature")
    assert forge.get_pull(12).head_sha == head


def test_squash_merge_with_title_and_body(sandbox: Repo, forge: LocalForge) -> None:
    head = topic(sandbox)
    forge.open_pull(3, "feature")
    result = forge.merge_pull(3, head, title="Custom (#3)", message="Body line")
    assert sandbox.git("log", "-1", "--format=%B", result.sha) == "Custom (#3)\n\nBody line"


def test_merge_refuses_a_moved_head(sandbox: Repo, forge: LocalForge) -> None:
    seen = topic(sandbox)
    forge.open_pull(4, "feature")
    moved = sandbox.commit_on("feature", {"late.txt": "late\n"}, "late push")
    main_before = sandbox.sha("main")
    with pytest.raises(HeadMovedError) as info:
        forge.merge_pull(4, seen)
    assert (info.value.expected, info.value.actual) == (seen, moved)
    assert info.value.exit_code == 1
    assert sandbox.sha("main") == main_before
    assert forge.get_pull(4).state == "open"


def test_merge_refuses_closed_merged_and_stale_prs(sandbox: Repo, forge: LocalForge) -> None:
    head = topic(sandbox)
    forge.open_pull(4, "feature")
    forge.close_pull(4)
    with pytest.raises(MergeRefusedError, match="PR #4 is closed"):
        forge.merge_pull(4, head)

    sandbox.branch("again", "feature")
    forge.open_pull(5, "again")
    forge.merge_pull(5, head)
    with pytest.raises(MergeRefusedError, match="PR #5 is merged"):
        forge.merge_pull(5, head)
    with pytest.raises(MergeRefusedError, match="already merged"):
        forge.close_pull(5)

    # A branch cut before main's last commit would revert it: refused, not guessed.
    sandbox.branch("stale", "main~1")
    stale = sandbox.commit_on("stale", {"s.txt": "s\n"}, "stale work")
    forge.open_pull(6, "stale")
    with pytest.raises(MergeRefusedError, match="does not contain the tip") as info:
        forge.merge_pull(6, stale)
    assert "merge main into stale" in info.value.hint
    # After merging main in, the same PR merges and keeps both sides.
    merged = sandbox.merge_into("stale", "main", "Merge main")
    result = forge.merge_pull(6, merged)
    files = set(sandbox.git("ls-tree", "--name-only", result.sha).split())
    assert {"s.txt", "new.txt"} <= files


class RacingObjects(Objects):
    """A real object database where someone pushes to main right after the
    squash commit is written, i.e. between reading main's tip and swapping the ref."""

    def __init__(self, repo: GitRepo, racer: Repo) -> None:
        super().__init__(repo._repo)
        self.racer = racer

    def commit_tree(self, tree_ish: str, parents: list[str], message: str) -> str:
        sha = super().commit_tree(tree_ish, parents, message)
        self.racer.commit_on("main", {"racer.txt": "won\n"}, "concurrent push")
        return sha


def test_merge_never_clobbers_a_main_that_moved(sandbox: Repo) -> None:
    head = topic(sandbox)
    repo = GitRepo(sandbox.path)
    repo.objects = RacingObjects(repo, sandbox)
    forge = LocalForge(repo)
    forge.open_pull(8, "feature")
    with pytest.raises(MergeRefusedError, match="'main' moved while merging"):
        forge.merge_pull(8, head)
    assert sandbox.git("log", "-1", "--format=%s", "main") == "concurrent push"
    pr = forge.get_pull(8)
    assert pr.state == "open" and pr.merge_commit_sha is None  # the row was rolled back


def test_move_branch_is_compare_and_swap(sandbox: Repo, forge: LocalForge) -> None:
    old = topic(sandbox)
    forge.open_pull(9, "feature")
    new = sandbox.git("commit-tree", f"{old}^{{tree}}", "-p", old, "-m", "refresh")
    assert forge.branch_mover is forge
    assert forge.move_branch(9, new, expected_old_sha=old).head_sha == new
    with pytest.raises(HeadMovedError):
        forge.move_branch(9, old, expected_old_sha=old)  # the branch is at `new` now
    assert sandbox.sha("feature") == new
    assert forge.require_head(9, new).number == 9
    with pytest.raises(HeadMovedError):
        forge.require_head(9, old)


# -- persistence and concurrency ----------------------------------------------------------


def test_database_survives_reopen(sandbox: Repo, forge: LocalForge) -> None:
    head = topic(sandbox)
    forge.open_pull(11, "feature", labels=["sweep-enabled"])
    forge.post_comment(11, "hello")
    forge.record_check(head, "check-changelog", conclusion="success")
    db = sandbox.path / ".git" / "gov" / "forge.sqlite3"
    assert forge.db_path == db and db.is_file()
    del forge

    again = open_forge("local", GitRepo(sandbox.path / "sub" / ".."), "acme/bench")
    assert isinstance(again, LocalForge)
    pr = again.get_pull(11)
    assert pr.labels == ("sweep-enabled",) and pr.head_sha == head
    assert [c.body for c in again.list_comments(11)] == ["hello"]
    assert again.list_checks(head)[0].conclusion == "success"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1


def test_newer_schema_is_refused(sandbox: Repo, forge: LocalForge) -> None:
    conn = sqlite3.connect(forge.db_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(ForgeError, match="schema v99"):
        LocalForge(sandbox.gitrepo())


def test_two_forges_on_one_database(sandbox: Repo) -> None:
    head = topic(sandbox)
    a = LocalForge(sandbox.gitrepo())
    b = LocalForge(sandbox.gitrepo())
    a.open_pull(1, "feature")
    b.add_label(1, "from-b")
    assert a.get_pull(1).labels == ("from-b",)

    errors: list[Exception] = []
    barrier = threading.Barrier(8)

    def label(forge: LocalForge, i: int) -> None:
        barrier.wait()
        try:
            for j in range(10):
                forge.add_label(1, f"l{i}-{j}")
                forge.post_comment(1, f"c{i}-{j}")
        except Exception as exc:  # collected: a thread's exception would be lost
            errors.append(exc)

    threads = [threading.Thread(target=label, args=(a if i % 2 else b, i)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(a.get_pull(1).labels) == 81
    assert len(b.list_comments(1)) == 80

    # Two forges racing to merge the same PR: exactly one wins.
    outcomes: list[str] = []
    gate = threading.Barrier(2)

    def merge(forge: LocalForge) -> None:
        gate.wait()
        try:
            forge.merge_pull(1, head)
            outcomes.append("merged")
        except MergeRefusedError:
            outcomes.append("refused")

    racers = [threading.Thread(target=merge, args=(f,)) for f in (a, b)]
    for t in racers:
        t.start()
    for t in racers:
        t.join()
    assert sorted(outcomes) == ["merged", "refused"]
    assert sandbox.git("rev-list", "--count", "main") == "2"


def test_open_forge_rejects_unknown_kind(sandbox: Repo) -> None:
    with pytest.raises(ForgeError, match="unknown forge kind"):
        open_forge("gitlab", sandbox.gitrepo(), "a/b")  # type: ignore[arg-type]
