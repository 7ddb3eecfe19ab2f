"""`gov queue add --all-green`: the PR heads' check runs on the local forge
decide which open PRs are enqueued, and the skipped ones say why."""

from __future__ import annotations

from tests.harness import Repo, run_gov
from tests.merge.queue_train import Train, build_train


def _open_extra(train: Train, number: int, branch: str) -> str:
    """One more open PR, its head a commit on main (never landed by these tests)."""
    train.git("branch", branch, "main")
    head = train.repo.commit_on(branch, {f"extra-{number}.txt": f"{number}\n"}, f"PR {number}")
    train.forge().open_pull(number, branch, title=f"PR {number}")
    return head


def _checks(train: Train, pr: int, **conclusions: str) -> None:
    """Record check runs on PR `pr`'s head: name=conclusion, or name="in_progress"."""
    forge = train.forge()
    head = forge.get_pull(pr).head_sha
    for name, conclusion in conclusions.items():
        name = name.replace("_", "-")
        if conclusion == "in_progress":
            forge.record_check(head, name, status="in_progress")
        else:
            forge.record_check(head, name, conclusion=conclusion)


def test_all_green_lists_asks_and_enqueues_only_green_heads(example_repo: Repo) -> None:
    train = build_train(example_repo)
    for number in (104, 105, 106):
        _open_extra(train, number, f"pr-{number}")
    _open_extra(train, 107, "feature/107")
    _checks(train, 101, check_changelog="success", docs="skipped")  # green
    _checks(train, 102, check_changelog="failure")
    _checks(train, 103, check_changelog="success", bench="in_progress")
    _checks(train, 105, check_changelog="success", bench="cancelled")
    _checks(train, 106, check_changelog="success")
    _checks(train, 107, check_changelog="success", docs="success")
    # 104 has no check at all. 106 waits in the queue already.
    assert run_gov("queue", "add", "--pr", "106", cwd=train.path).exit_code == 0
    queued_106 = train.store().get(106)

    asked = run_gov("queue", "add", "--all-green", "--head-prefix", "pr-", cwd=train.path)
    # stdin is not a terminal: the list is shown, nothing is added, the hint says --yes.
    assert asked.exit_code == 2, asked.stdout + asked.stderr
    assert "--yes" in asked.stderr
    lines = asked.stdout.splitlines()
    assert lines[0].startswith("gov queue add --all-green: 1 to add, 1 already waiting, 4 skipped")
    by_pr = {int(line.split("#")[1].split()[0]): line.split() for line in lines[1:]}
    assert sorted(by_pr) == [101, 102, 103, 104, 105, 106]  # feature/107: not the prefix
    assert {pr: words[0] for pr, words in by_pr.items()} == {
        101: "add", 102: "skip", 103: "skip", 104: "skip", 105: "skip", 106: "waiting",
    }  # fmt: skip
    text = asked.stdout
    assert "failed: check-changelog=failure" in text
    assert "pending: bench" in text
    assert "required check not reported: check-changelog" in text
    assert "failed: bench=cancelled" in text
    assert [c.pr for c in train.store().cars()] == [106]

    added = run_gov("queue", "add", "--all-green", "--head-prefix", "pr-", "--yes", cwd=train.path)
    assert added.exit_code == 0, added.stdout + added.stderr
    assert "queued PR #101 (normal), position 2 of 2" in added.stdout
    assert [(c.pr, c.state) for c in train.store().cars()] == [(106, "queued"), (101, "queued")]
    assert train.store().get(106) == queued_106  # listed as waiting, not added twice

    # Another required check: 107 has it, 105 and 103 still are not green, 101 waits now.
    strict = run_gov(
        "queue", "add", "--all-green", "--require-check", "check-changelog",
        "--require-check", "docs", "--priority", "high", "--yes", cwd=train.path,
    )  # fmt: skip
    assert strict.exit_code == 0, strict.stdout + strict.stderr
    assert "required: check-changelog, docs" in strict.stdout
    assert "required check not reported: docs" in strict.stdout  # 106 is waiting, 102..105 not
    assert "queued PR #107 (high), position 1 of 3" in strict.stdout
    assert [c.pr for c in train.store().cars(("queued",))] == [107, 106, 101]


def test_all_green_with_nothing_green_adds_nothing_and_exits_0(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    _checks(train, 101, check_changelog="success")
    _checks(train, 101, check_changelog="failure")  # a re-run: the newest run counts
    done = run_gov("queue", "add", "--all-green", cwd=train.path)
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "0 to add" in done.stdout and "nothing to add" in done.stdout
    assert train.store().cars() == []


def test_add_needs_exactly_one_way_to_name_prs(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    neither = run_gov("queue", "add", cwd=train.path)
    assert neither.exit_code == 2 and "exactly one of --pr N and --all-green" in neither.stderr
    both = run_gov("queue", "add", "--pr", "101", "--all-green", cwd=train.path)
    assert both.exit_code == 2 and "exactly one" in both.stderr
    stray = run_gov("queue", "add", "--pr", "101", "--yes", cwd=train.path)
    assert stray.exit_code == 2 and "go with --all-green" in stray.stderr
    assert "hint:" in stray.stderr
    assert train.store().cars() == []
