"""`gov queue add --all-green`: the PR heads' check runs on the local forge
decide which open PRs are enqueued, and the skipped ones say why.
`gov queue run --watch`: pass after pass under one lock, ended by a signal.
`gov queue report`: from the queue's cars and the run ledger."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable

import pytest

from governance.core import locks
from governance.core.diagnostics import UsageError
from governance.core.state import StateLayout
from governance.git.repo import GitRepo
from governance.merge.queue import CarOptions, prepare_car, queue_lock, watch_queue
from governance.merge.queue_ahead import Ahead
from governance.merge.queue_report import GpuHours, RowCost, build_report, parse_since
from governance.merge.queue_store import Car, CarState
from governance.sweeps.ledger import CommitRow, Ledger, NewRun
from tests.harness import Repo, gov_environment, run_gov, start_process
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


# -- gov queue run --watch ------------------------------------------------------------


@pytest.mark.parametrize("ahead", [0, 2])
def test_watch_runs_pass_after_pass_holding_the_lock_between_them(
    example_repo: Repo, ahead: int
) -> None:
    train = build_train(example_repo)
    store = train.store()
    store.add(101, "normal", "2026-08-15T10:00:00")
    repo = GitRepo(train.path)
    slept: list[float] = []
    held: list[str] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        try:  # a second runner is refused while the watch sleeps
            with locks.hold(queue_lock(repo), "a second runner"):
                held.append("free")
        except UsageError as exc:
            held.append(str(exc))
        if len(slept) == 1:  # cars added between passes land in the next pass
            store.add(102, "normal", "2026-08-15T11:00:00")
            store.add(103, "normal", "2026-08-15T11:00:01")

    options = CarOptions("main", poll_interval=0.01, check_timeout=1.0)
    forge = train.forge()
    passes = watch_queue(
        repo, store, forge, prepare_car(repo, options), main_branch="main",
        interval=7.5, sleep=sleep, max_passes=3,
        speculate=Ahead(repo, store, forge, options, ahead) if ahead else None,
    )  # fmt: skip
    assert [[(c.pr, c.outcome) for c in p.cars] for p in passes] == [
        [(101, "landed")], [(102, "refused"), (103, "landed")], [],
    ]  # fmt: skip
    assert slept == [7.5, 7.5]  # between passes, not after the last
    assert all(f"pid {os.getpid()}" in message for message in held), held
    assert train.changelog() == train.expected(101, 103)
    # The lock is released once the watch ends.
    with locks.hold(queue_lock(repo), "after the watch"):
        pass


def test_watch_stops_when_told_after_a_pass(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    repo = GitRepo(train.path)
    store = train.store()
    store.add(101, "normal", "2026-08-15T10:00:00")

    def never(seconds: float) -> None:
        raise AssertionError("a stopped watch does not sleep")

    options = CarOptions("main", poll_interval=0.01, check_timeout=1.0)
    passes = watch_queue(
        repo, store, train.forge(), prepare_car(repo, options), main_branch="main",
        interval=1.0, sleep=never, stop=lambda: True,
    )  # fmt: skip
    assert [[c.outcome for c in p.cars] for p in passes] == [["landed"]]


class Output:
    """A child's stdout, read by a thread, so the test can wait for a line
    (a generous bound only against a hang: the result never depends on timing)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.lines: list[str] = []
        assert proc.stdout is not None
        stream = proc.stdout
        self.thread = threading.Thread(target=lambda: self.lines.extend(stream), daemon=True)
        self.thread.start()

    def wait_for(self, text: str) -> None:
        self.wait_until(lambda line: text in line)

    def wait_until(self, seen: Callable[[str], bool]) -> None:
        deadline = time.monotonic() + 120
        while not any(seen(line) for line in list(self.lines)):
            assert self.proc.poll() is None, f"ended early: {''.join(self.lines)}"
            assert time.monotonic() < deadline, f"not within 120 s: {''.join(self.lines)}"
            time.sleep(0.01)

    def rest(self) -> str:
        self.thread.join(timeout=60)
        return "".join(self.lines)


def _landed(line: str, pr: int, output: str) -> bool:
    """Does this line of the watch's stdout say PR `pr` landed?"""
    if output == "text":
        return f"PR #{pr} landed" in line
    data = json.loads(line)  # JSON Lines: one object per pass
    return any(car["pr"] == pr and car["outcome"] == "landed" for car in data["cars"])


@pytest.mark.parametrize(("stop", "output"), [(signal.SIGINT, "text"), (signal.SIGTERM, "json")])
def test_watch_cli_is_the_one_runner_until_a_signal_ends_it(
    example_repo: Repo, gov_exe: str, stop: signal.Signals, output: str
) -> None:
    train = build_train(example_repo, (101, 103))
    assert run_gov("queue", "add", "--pr", "101", cwd=train.path).exit_code == 0
    argv = [gov_exe, "queue", "run", "--watch", "0.01", "--no-sweep", "--format", output]
    proc = start_process(argv, cwd=train.path)
    out = Output(proc)
    first = "(pass 1; next in 0.01 s)" if output == "text" else '{"pass": 1,'
    try:
        out.wait_for(first)
        assert any(_landed(line, 101, output) for line in list(out.lines)), out.lines
        second = run_gov("queue", "run", cwd=train.path)
        assert second.exit_code == 2, second.stdout + second.stderr
        assert f"another run holds the lock (pid {proc.pid})" in second.stderr
        # A car added while the watch runs lands in a later pass.
        assert run_gov("queue", "add", "--pr", "103", cwd=train.path).exit_code == 0
        out.wait_until(lambda line: _landed(line, 103, output))
        proc.send_signal(stop)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = proc.stderr.read() if proc.stderr is not None else ""
    assert code == 130, out.rest() + stderr
    assert "gov: interrupted" in stderr
    stdout = out.rest()
    assert "gov queue run --watch: stopped after" in (stdout if output == "text" else stderr)
    if output == "json":  # JSON Lines, nothing else
        assert all(json.loads(line)["pass"] >= 1 for line in stdout.splitlines()), stdout
    assert train.changelog() == train.expected(101, 103)
    assert train.leftovers() == []
    after = run_gov("queue", "run", cwd=train.path)  # the lock died with the watch
    assert after.exit_code == 0 and "nothing to do" in after.stdout, after.stdout + after.stderr


def test_watch_refuses_what_it_cannot_combine(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    for args, message in (
        (("--watch", "0"), "--watch needs a finite number of seconds above 0"),
        (("--watch", "inf"), "--watch needs a finite number of seconds above 0"),
        (("--watch", "5", "--once"), "--watch and --once cannot be combined"),
        (("--watch", "5", "--dry-run"), "--watch and --dry-run cannot be combined"),
    ):
        done = run_gov("queue", "run", *args, cwd=train.path)
        assert done.exit_code == 2 and message in done.stderr, (args, done.stderr)
        assert "hint:" in done.stderr


# -- gov queue report -----------------------------------------------------------------


def _car(pr: int, state: CarState, enqueued: str, finished: str, **extra: str) -> Car:
    return Car(pr, "normal", f"2026-08-15T{enqueued}", state, 1, f"2026-08-15T{finished}", **extra)


def test_report_counts_waits_costs_and_what_stop_on_first_failure_leaves_behind() -> None:
    cars = [
        _car(105, "landed", "10:00:00", "10:50:00", landed_commit="c105"),
        _car(101, "landed", "10:00:00", "10:10:00", landed_commit="c101"),
        _car(104, "refused", "10:00:00", "10:40:00", refused_step="merge", refused_reason="GOV611"),
        _car(102, "refused", "10:00:00", "10:20:00", refused_step="check", refused_reason="GOV503"),
        _car(103, "landed", "10:00:05", "10:30:00", landed_commit="c103"),
        _car(106, "queued", "10:00:00", "10:00:00"),
        _car(107, "removed", "10:00:00", "10:05:00"),
    ]
    costs = {
        "c101": [
            RowCost("measured", 1, "2026-08-15T09:00:00+00:00", "2026-08-15T10:00:00+00:00", 8),
            RowCost("reused", 2, "2026-08-14T09:00:00+00:00", "2026-08-14T09:30:00+00:00", 4),
        ],
        "c103": [RowCost("measured", 3, "2026-08-15T09:00:00Z", "2026-08-15T09:06:00Z", None)],
    }
    report = build_report(cars, costs)
    assert report.order == (101, 102, 103, 104, 105)  # the order cars finished in
    assert [c.pr for c in report.landed] == [101, 103, 105]
    assert [(f.step, f.prs) for f in report.failures] == [("check", (102,)), ("merge", (104,))]
    assert [c.wait_seconds for c in report.landed] == [600.0, 1795.0, 3000.0]
    assert (report.median_wait_seconds, report.max_wait_seconds) == (1795.0, 3000.0)
    first = report.landed[0]
    assert (first.measured.total, first.reused.total) == (8.0, 2.0)
    assert report.landed[1].measured.total is None  # a run without a GPU count: unknown
    assert report.landed[2].measured == GpuHours(0, 0, 0.0)  # nothing recorded for c105
    assert (report.measured.rows, report.measured.unknown, report.measured.total) == (2, 1, None)
    assert report.reused.total == 2.0
    assert report.first_refused == 102 and report.left_behind == (103, 105)

    later = build_report(cars, costs, parse_since("2026-08-15T10:25Z"))
    assert later.order == (103, 104, 105) and later.left_behind == (105,)
    assert build_report(cars[:2], {}).left_behind == ()


def test_report_since_must_be_a_date(example_repo: Repo) -> None:
    train = build_train(example_repo, (101,))
    bad = run_gov("queue", "report", "--since", "last tuesday", cwd=train.path)
    assert bad.exit_code == 2 and "--since 'last tuesday' is not a date" in bad.stderr
    assert "hint: give a date" in bad.stderr


def test_report_on_a_real_train_and_its_ledger(example_repo: Repo) -> None:
    train = build_train(example_repo)
    store = train.store()
    for pr in (101, 102, 103):
        store.add(pr, "normal", f"2026-08-15T10:00:0{pr - 100}")
    train.run()
    landed_101 = store.get(101)
    assert landed_101 is not None
    # The ledger as a sweep leaves it: one measured run on 4 GPUs (tp 2 x pp 2) for
    # 30 minutes, with its plan row beside its results; one reused run whose folder is gone.
    folder = train.path / "results-101"
    folder.mkdir()
    (folder / "gov-row.json").write_text(json.dumps({"tp": 2, "pp": 2}))
    runs = [
        NewRun("f" * 64, "k1-conc4", "4", landed_101.prepared, 101, "local",
               "2026-08-15T09:00:00+00:00", "2026-08-15T09:30:00+00:00", "succeeded", 0, "",
               str(folder)),
        NewRun("e" * 64, "k2-conc8", "8", "pr-head", 101, "local",
               "2026-08-14T09:00:00+00:00", "2026-08-14T10:00:00+00:00", "succeeded", 0, "",
               str(train.path / "gone")),
    ]  # fmt: skip
    with Ledger(StateLayout(GitRepo(train.path).git_dir).runs_db) as ledger:
        measured, reused = ledger.add(runs)
        ledger.attribute(landed_101.landed_commit, 101, [
            CommitRow("k1-conc4", measured, "measured"), CommitRow("k2-conc8", reused, "reused"),
        ])  # fmt: skip

    done = run_gov("queue", "report", "--format", "json", cwd=train.path)
    assert done.exit_code == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert [c["pr"] for c in data["landed"]] == [101, 103]
    assert data["landed"][0]["commit"] == train.landed()[0]
    assert data["landed"][0]["measured"] == {"rows": 1, "unknown": 0, "known": 2.0, "total": 2.0}
    assert data["landed"][0]["reused"]["total"] is None  # its GPU count is not recorded
    assert data["landed"][1]["measured"]["rows"] == 0  # landed without a sweep
    assert [(f["step"], f["prs"]) for f in data["failures"]] == [("check", [102])]
    assert data["first_refused"] == 102 and data["left_behind"] == [103]

    text = run_gov("queue", "report", cwd=train.path).stdout
    assert "2 landed, 1 refused" in text
    assert "GPU-hours measured: 2.00 (1 rows)" in text
    assert "GPU-hours reused (not run again): unknown (1 of 1 rows" in text
    assert "it stops at #102; left behind 1 PR(s) the queue landed after it: #103" in text
    markdown = run_gov("queue", "report", "--format", "markdown", cwd=train.path).stdout
    assert markdown.startswith("## gov queue report\n") and "- check: 1 (`#102`)" in markdown
    future = run_gov("queue", "report", "--since", "2999-01-01", "--format", "json", cwd=train.path)
    assert json.loads(future.stdout)["order"] == []


@pytest.mark.parametrize(("answer", "queued"), [("n", []), ("y", [101])])
def test_all_green_asks_on_a_terminal(
    example_repo: Repo, gov_exe: str, answer: str, queued: list[int]
) -> None:
    train = build_train(example_repo, (101,))
    _checks(train, 101, check_changelog="success")
    controller, terminal = os.openpty()  # stdin is a terminal: gov asks there
    try:
        os.write(controller, f"{answer}\n".encode())
        done = subprocess.run(
            [gov_exe, "queue", "add", "--all-green"], cwd=train.path, env=gov_environment(),
            stdin=terminal, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(terminal)
        os.close(controller)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "enqueue 1 PR(s)? [y/N]" in done.stdout
    assert ("nothing added" in done.stdout) == (answer == "n"), done.stdout
    assert [c.pr for c in train.store().cars()] == queued


HOSTILE = "perf-changelog.yaml:9:7: GOV501 Config key '@maintainers ![x](https://evil.example/p.png) [ok](https://evil.example)' not found"


def test_a_refusal_quoting_a_prs_text_renders_nothing_it_holds() -> None:
    """A refusal's reason quotes what the PR wrote (here a config key made of
    an @mention, an image and a link): the markdown report and the status
    comment on GitHub show it in a code span, where none of it renders."""
    from governance.core.safe_text import markdown_code
    from governance.merge.queue_github_run import status_body
    from governance.merge.queue_report_render import render_markdown, render_text

    car = _car(102, "refused", "10:00:00", "10:20:00", refused_step="check", refused_reason=HOSTILE)
    report = build_report([car], {})
    assert f"- `#102` at check: {markdown_code(HOSTILE)}" in render_markdown(report)
    assert f"#102 at check: {HOSTILE}" in render_text(report)  # a terminal shows it as written
    body = status_body(car, None, "")
    assert f"refused at `check`: {markdown_code(HOSTILE)}" in body
    removed = status_body(_car(103, "removed", "10:00:00", "10:20:00"), None, "@someone")
    assert "taken out of the queue: `@someone`" in removed
