"""`gov queue sync|run --forge github` against a real HTTP server on 127.0.0.1
serving GitHub-shaped answers (tests/forge/test_github.py's FakeGitHub, with
the queue's routes) whose branches are a bare `origin` repository: who may
enqueue (writers, by label or a first-line `/gov queue` comment), forks refused,
settings from main's tip only, dequeue-on-push, the squash tree read back, and
one status comment per PR edited in place. The token never reaches the output."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from governance.core.diagnostics import UsageError
from governance.core.settings import file_settings
from governance.merge.queue_github import command_of
from governance.merge.queue_github_run import MARKER
from tests.forge.test_github import FakeGitHub, Reply, Seen, not_found, pull_payload, serve
from tests.harness import Repo, Result, git, run_gov
from tests.merge.queue_train import Train, build_train

SLUG = "SemiAnalysisAI/InferenceX"
TOKEN = "ghp_" + "QueuE" * 8
PREFIX = f"/repos/{SLUG}"
SETTINGS = '[queue]\nrequired-checks = []\npriorities = {queue-high = "high"}\n'


def stamp(hours: float = 0.0) -> str:
    """A GitHub timestamp `hours` from now (asks made after a car changed are newer)."""
    return (datetime.now(UTC) + timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


class QueueGitHub(FakeGitHub):
    """PRs whose heads are `origin`'s branches, their label events and comments,
    collaborator permissions, the squash merge and the git commits route."""

    def __init__(self, origin: Path) -> None:
        super().__init__()
        self.origin = origin
        self.pulls = {}
        self.forks: set[int] = set()
        self.events: dict[int, list[dict[str, Any]]] = {}
        self.notes: dict[int, list[dict[str, Any]]] = {}
        self.permissions = {"maint": "write", "lead": "admin", "drive-by": "read"}
        self.tamper = False  # merge a tree other than the tested one
        self.after_merge: Callable[[], None] = lambda: None  # someone acts meanwhile

    def open(self, pr: int, *labels: str, fork: bool = False) -> None:
        self.pulls[pr] = {"labels": list(labels), "merged": None}
        if fork:
            self.forks.add(pr)

    def label(self, pr: int, name: str, actor: str, hours: float = 0.0) -> None:
        if name not in self.pulls[pr]["labels"]:
            self.pulls[pr]["labels"].append(name)
        self.events.setdefault(pr, []).append({
            "id": len(self.events.get(pr, [])) + 1, "event": "labeled", "label": {"name": name},
            "actor": {"login": actor}, "created_at": stamp(hours),
        })  # fmt: skip

    def comment(self, pr: int, body: str, author: str, hours: float = 0.0) -> None:
        notes = self.notes.setdefault(pr, [])
        notes.append({"id": 700 + 10 * pr + len(notes), "body": body, "user": {"login": author},
                      "author_association": "MEMBER", "created_at": stamp(hours)})  # fmt: skip

    def payload(self, pr: int) -> dict[str, Any]:
        state = self.pulls[pr]
        head = git(self.origin, "rev-parse", f"refs/heads/pr-{pr}")
        base_repo = {"full_name": SLUG}
        head_repo = {"full_name": "drive-by/InferenceX"} if pr in self.forks else base_repo
        return pull_payload(
            pr, title=f"PR {pr}", labels=[{"name": n} for n in state["labels"]],
            state="closed" if state["merged"] else "open",
            merged_at="2026-01-02T00:00:00Z" if state["merged"] else None,
            merge_commit_sha=state["merged"],
            head={"ref": f"pr-{pr}", "sha": head, "repo": head_repo},
            base={"ref": "main", "sha": "0" * 40, "repo": base_repo},
        )  # fmt: skip

    def route(self, seen: Seen) -> Reply:
        m, p = seen.method, seen.path.removeprefix(PREFIX)
        if m == "GET" and p == "/pulls":
            return Reply(200, [self.payload(n) for n in self.pulls if not self.pulls[n]["merged"]])
        if match := re.fullmatch(r"/pulls/(\d+)", p):
            return Reply(200, self.payload(int(match[1])))
        if match := re.fullmatch(r"/issues/(\d+)/events", p):
            return Reply(200, self.events.get(int(match[1]), []))
        if match := re.fullmatch(r"/issues/(\d+)/comments", p):
            notes = self.notes.setdefault(int(match[1]), [])
            if m == "POST":
                self.comment(int(match[1]), seen.body["body"], "gov-bot")
                self.permissions.setdefault("gov-bot", "write")
                return Reply(201, notes[-1])
            return Reply(200, notes)
        if m == "PATCH" and (match := re.fullmatch(r"/issues/comments/(\d+)", p)):
            for note in (n for notes in self.notes.values() for n in notes):
                if note["id"] == int(match[1]):
                    note["body"] = seen.body["body"]
                    return Reply(200, note)
            return not_found()
        if m == "POST" and (match := re.fullmatch(r"/issues/(\d+)/labels", p)):
            self.pulls[int(match[1])]["labels"] += seen.body["labels"]
            return Reply(200, [])
        if m == "DELETE" and (match := re.fullmatch(r"/issues/(\d+)/labels/(.+)", p)):
            self.pulls[int(match[1])]["labels"].remove(unquote(match[2]))
            return Reply(200, [])
        if match := re.fullmatch(r"/collaborators/([^/]+)/permission", p):
            level = self.permissions.get(match[1])
            return Reply(200, {"permission": level, "role_name": level}) if level else not_found()
        if re.fullmatch(r"/commits/[0-9a-f]+/check-runs", p):
            return Reply(200, {"total_count": 0, "check_runs": []})
        if m == "PUT" and (match := re.fullmatch(r"/pulls/(\d+)/merge", p)):
            return self.merge(int(match[1]), seen.body)
        if match := re.fullmatch(r"/git/commits/([0-9a-f]+)", p):
            sha = match[1]
            tree = git(self.origin, "rev-parse", f"{sha}^{{tree}}")
            parents = git(self.origin, "rev-list", "--parents", "-n1", sha).split()[1:]
            return Reply(200, {"sha": sha, "tree": {"sha": tree},
                               "parents": [{"sha": s} for s in parents]})  # fmt: skip
        return not_found()

    def merge(self, pr: int, body: dict[str, Any]) -> Reply:
        if body["sha"] != git(self.origin, "rev-parse", f"refs/heads/pr-{pr}"):
            return Reply(409, {"message": "Head branch was modified"})
        main = git(self.origin, "rev-parse", "refs/heads/main")
        tree = f"{main}^{{tree}}" if self.tamper else f"{body['sha']}^{{tree}}"
        squash = git(self.origin, "commit-tree", tree, "-p", main, "-m", body["commit_title"])
        git(self.origin, "update-ref", "refs/heads/main", squash, main)
        self.pulls[pr]["merged"] = squash
        self.after_merge()
        return Reply(200, {"merged": True, "sha": squash, "message": "merged"})

    def calls(self, method: str, pattern: str) -> list[str]:
        return [s.path for s in self.seen if s.method == method and re.search(pattern, s.path)]


@pytest.fixture
def train(example_repo: Repo) -> Train:
    example_repo.configure_identity()
    example_repo.write(".gov.toml", SETTINGS)
    example_repo.commit("Queue settings")
    return build_train(example_repo)


@pytest.fixture
def github(train: Train, tmp_path: Path) -> Iterator[QueueGitHub]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(train.path), str(origin))
    for key, value in (("user.name", "gov tests"), ("user.email", "tests@gov.invalid")):
        git(origin, "config", key, value)
    train.git("remote", "add", "origin", str(origin))
    with serve(QueueGitHub(origin)) as state:
        yield state


def gov(train: Train, github: QueueGitHub, *args: str) -> Result:
    env = {"GITHUB_API_URL": github.base_url, "GH_TOKEN": TOKEN}
    done = run_gov("queue", *args, cwd=train.path, env=env)
    assert TOKEN not in done.stdout + done.stderr
    return done


def cars(train: Train, github: QueueGitHub) -> dict[int, dict[str, Any]]:
    done = gov(train, github, "status", "--format", "json")
    return {car["pr"]: car for car in json.loads(done.stdout)["cars"]}


def test_only_writers_enqueue_forks_are_refused_and_a_comment_is_edited_in_place(
    train: Train, github: QueueGitHub
) -> None:
    github.open(101)
    github.label(101, "gov-queue", "maint")
    github.open(102)
    github.comment(102, "/gov queue high", "drive-by")  # a command, by a reader
    github.comment(102, "LGTM, I'll /gov queue it later", "maint")  # inline: no command
    github.comment(102, "> /gov queue\nquoted", "lead")  # a quote: no command
    github.open(103, fork=True)
    github.comment(103, "/gov queue", "lead")

    done = gov(train, github, "run", "--forge", "github", "--no-sweep")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "PR #101 queued: asked by @maint (label gov-queue)" in done.stdout
    assert re.search(r"PR #102 not queued: .*@drive-by \(comment \d+\) has read", done.stdout)
    assert "PR #103 not queued: its head is in a fork" in done.stdout
    # Who asked was checked on GitHub; the fork needed no check at all.
    assert github.calls("GET", "/permission$") == [
        f"{PREFIX}/collaborators/maint/permission",
        f"{PREFIX}/collaborators/drive-by/permission",
    ]
    # Only the writer's PR was merged, as the tree prepare-merge tested.
    assert github.calls("PUT", "/merge$") == [f"{PREFIX}/pulls/101/merge"]
    state = cars(train, github)
    assert state[101]["state"] == "landed"
    assert git(github.origin, "rev-parse", "main") == state[101]["landed_commit"]
    landed_tree = git(github.origin, "rev-parse", f"{state[101]['landed_commit']}^{{tree}}")
    assert landed_tree == train.tree(state[101]["prepared"])
    assert state[102]["refusal"]["step"] == state[103]["refusal"]["step"] == "enqueue"
    assert "drive-by" in state[102]["refusal"]["reason"]
    assert "fork" in state[103]["refusal"]["reason"]

    # One status comment per PR, edited in place on the next change.
    for pr in (101, 102, 103):
        ours = [n for n in github.notes[pr] if n["body"].startswith(MARKER)]
        assert len(ours) == 1, github.notes[pr]
    assert "landed as " + state[101]["landed_commit"] in github.notes[101][-1]["body"]
    # And one state label: queued, then running, then landed, each replacing the one before.
    assert github.pulls[101]["labels"] == ["gov-queue", "gov-queue: landed"]
    assert github.pulls[102]["labels"] == ["gov-queue: refused"]
    github.comment(102, "/gov queue", "lead", hours=1)  # a writer asks, after the refusal
    again = gov(train, github, "sync")
    assert "PR #102 queued: asked by @lead" in again.stdout, again.stdout
    ours = [n for n in github.notes[102] if n["body"].startswith(MARKER)]
    assert len(ours) == 1 and "waiting, position 1" in ours[0]["body"]
    assert len(github.calls("POST", "/issues/102/comments$")) == 1
    assert github.calls("PATCH", "/issues/comments/")


def test_a_pr_changing_its_own_queue_settings_does_not_change_how_it_is_queued(
    train: Train, github: QueueGitHub
) -> None:
    # PR 101 renames the queue label and maps its own label to high priority.
    train.git("checkout", "-q", "pr-101")
    train.repo.write(".gov.toml", '[queue]\nlabel = "yolo"\npriorities = {yolo = "high"}\n')
    train.repo.commit("Queue me my way")
    train.git("push", "-q", "origin", "pr-101")  # and stays checked out: its files are here
    github.open(101)
    github.label(101, "yolo", "maint")
    first = gov(train, github, "sync", "--format", "json")
    assert json.loads(first.stdout) == {"enqueued": [], "refused": [], "dequeued": []}
    assert not github.calls("GET", "/issues/101/events")  # main's label is not on it

    github.comment(101, "/gov queue", "maint")
    second = json.loads(gov(train, github, "sync", "--format", "json").stdout)
    assert [row["pr"] for row in second["enqueued"]] == [101]
    assert cars(train, github)[101]["priority"] == "normal"  # not the PR's "high"
    # Main's own mapping does apply: queue-high on PR 103 makes it high.
    github.open(103, "queue-high")
    github.label(103, "gov-queue", "lead")
    gov(train, github, "sync")
    assert cars(train, github)[103]["priority"] == "high"


def test_a_push_after_enqueue_dequeues_the_car(train: Train, github: QueueGitHub) -> None:
    github.open(101)
    github.label(101, "gov-queue", "maint")
    gov(train, github, "sync")
    assert cars(train, github)[101]["state"] == "queued"
    head, pushed = push(github, 101)
    done = gov(train, github, "run", "--forge", "github", "--no-sweep")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert f"PR #101 dequeued: head moved from {head[:12]} to {pushed[:12]}" in done.stdout
    assert cars(train, github)[101]["state"] == "removed"
    assert not github.calls("PUT", "/merge$")
    assert "dequeue-on-push" in github.notes[101][-1]["body"]


def push(github: QueueGitHub, pr: int) -> tuple[str, str]:
    """A new commit on PR `pr`'s branch (as its author pushing): (old head, new head)."""
    head = git(github.origin, "rev-parse", f"pr-{pr}")
    pushed = git(github.origin, "commit-tree", f"{head}^{{tree}}", "-p", head, "-m", "more")
    git(github.origin, "update-ref", f"refs/heads/pr-{pr}", pushed)
    return head, pushed


def test_a_push_during_the_train_takes_the_car_out_before_its_turn(
    train: Train, github: QueueGitHub
) -> None:
    for pr in (101, 103):
        github.open(pr)
        github.label(pr, "gov-queue", "maint")
    moves: list[tuple[str, str]] = []
    github.after_merge = lambda: moves.append(push(github, 103)) if not moves else None
    done = gov(train, github, "run", "--forge", "github", "--no-sweep")
    assert done.exit_code == 0, done.stdout + done.stderr
    ((head, pushed),) = moves
    assert f"PR #103 taken out before its turn: head moved from {head[:12]} to {pushed[:12]}" in (
        done.stdout
    )
    assert github.calls("PUT", "/merge$") == [f"{PREFIX}/pulls/101/merge"]
    assert {pr: car["state"] for pr, car in cars(train, github).items()} == {
        101: "landed", 103: "removed",
    }  # fmt: skip
    assert github.pulls[103]["labels"] == ["gov-queue", "gov-queue: removed"]


def test_a_squash_with_another_tree_is_refused_and_pauses_the_queue(
    train: Train, github: QueueGitHub
) -> None:
    github.tamper = True  # GitHub lands a tree other than the one prepare-merge tested
    for pr in (101, 103):
        github.open(pr)
        github.label(pr, "gov-queue", "maint")
    done = gov(train, github, "run", "--forge", "github", "--no-sweep")
    assert done.exit_code == 1, done.stdout + done.stderr
    state = cars(train, github)
    refusal = state[101]["refusal"]
    assert state[101]["state"] == "refused" and refusal["step"] == "land"
    landed = git(github.origin, "rev-parse", "main")
    landed_tree = git(github.origin, "rev-parse", f"{landed}^{{tree}}")
    # What prepare-merge tested is what it pushed to the PR branch and GitHub merged.
    tested_tree = git(github.origin, "rev-parse", "pr-101^{tree}")
    assert landed_tree != tested_tree
    assert landed_tree in refusal["reason"] and tested_tree in refusal["reason"]
    assert github.calls("GET", f"/git/commits/{landed}$")
    # The queue paused: PR 103 waits, nothing else was merged.
    assert json.loads(gov(train, github, "status", "--format", "json").stdout)["paused"]
    assert state[103]["state"] == "queued"
    assert github.calls("PUT", "/merge$") == [f"{PREFIX}/pulls/101/merge"]


def test_add_refuses_a_fork_and_max_cars_caps_a_pass(train: Train, github: QueueGitHub) -> None:
    github.open(101)
    github.open(102, fork=True)
    github.open(103)
    forked = gov(train, github, "add", "--forge", "github", "--pr", "102")
    assert forked.exit_code == 2 and "fork" in forked.stderr, forked.stderr
    # GitHub refuses gov's comment on PR 103: a warning, the car is queued all the same.
    github.script("POST", f"{PREFIX}/issues/103/comments", Reply(403, {"message": "nope"}))
    added_stderr = {}
    for pr in (101, 103):
        added = gov(train, github, "add", "--forge", "github", "--pr", str(pr))
        assert added.exit_code == 0, added.stdout + added.stderr
        added_stderr[pr] = added.stderr
    env = {"GITHUB_API_URL": github.base_url, "GH_TOKEN": TOKEN,
           "GOV_QUEUE": '{"max-cars": 1, "required-checks": []}'}  # fmt: skip
    done = run_gov("queue", "run", "--forge", "github", "--no-sweep", cwd=train.path, env=env)
    assert done.exit_code == 0 and TOKEN not in done.stdout + done.stderr, done.stderr
    assert github.calls("PUT", "/merge$") == [f"{PREFIX}/pulls/101/merge"]
    state = cars(train, github)
    assert (state[101]["state"], state[103]["state"], 102 in state) == ("landed", "queued", False)
    assert "PR #103: the queue's status was not reported on GitHub" in added_stderr[103]


def test_the_command_is_the_first_line_only() -> None:
    assert command_of("/gov queue") == (True, None, "")
    assert command_of("/gov queue low  \r\nthanks") == (True, "low", "")
    assert command_of("/gov queue urgent")[2].startswith("'urgent' is not a priority")
    for body in (
        "please /gov queue",
        "> /gov queue",
        " /gov queue",
        "/gov queued",
        "x\n/gov queue",
    ):
        assert command_of(body) == (False, None, ""), body


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("labl = 'q'", "unknown setting `queue.labl`"),
        ("priorities = {a = 'urgent'}", "`queue.priorities.a` must be high, normal or low"),
        ("max-cars = -1", "`queue.max-cars` must be a whole number"),
        ("required-checks = 'ci'", "`queue.required-checks` must be a list"),
        ("dequeue-on-push = 'yes'", "`queue.dequeue-on-push` must be true or false"),
    ],
)
def test_bad_queue_settings_are_refused_naming_the_key(table: str, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        file_settings(lambda name: f"[queue]\n{table}\n".encode() if name == ".gov.toml" else None)


def test_queue_settings_default_and_read() -> None:
    text = "[queue]\nlabel = 'ship-it'\nmax-cars = 2\npriorities = {hot = 'high', meh = 'low'}\n"
    queue = file_settings(lambda n: text.encode() if n == ".gov.toml" else None).queue
    assert (queue.label, queue.max_cars, queue.dequeue_on_push) == ("ship-it", 2, True)
    assert queue.priority_of(("meh", "hot")) == "high" and queue.priority_of(()) is None
    default = file_settings(lambda _n: None).queue
    assert default.label == "gov-queue" and default.required_checks == ("check-changelog",)
