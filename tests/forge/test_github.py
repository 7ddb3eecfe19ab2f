"""GitHubForge against a real HTTP server on 127.0.0.1 serving GitHub-shaped payloads."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from governance.forge import open_forge
from governance.forge.base import (
    ChecksFailedError,
    ForgeError,
    HeadMovedError,
    MergeRefusedError,
)
from governance.forge.github import GitHubForge, GitHubHTTPError, token_from_env

TOKEN = "ghp_" + "T0kEn" * 8
SLUG = "acme/bench"
HEAD = "a" * 40
NOW = 1_700_000_000.0


def pull_payload(number: int, **over: Any) -> dict[str, Any]:
    """A trimmed but faithful GET /pulls/{n} body."""
    repo = {"full_name": SLUG, "fork": False}
    data: dict[str, Any] = {
        "url": f"https://api.github.com/repos/{SLUG}/pulls/{number}",
        "html_url": f"https://github.com/{SLUG}/pull/{number}",
        "number": number,
        "state": "open",
        "locked": False,
        "title": f"Bump image for PR {number}",
        "user": {"login": "dev", "type": "User"},
        "labels": [{"id": 1, "name": "full-sweep-enabled", "color": "ededed"}],
        "draft": False,
        "merged_at": None,
        "merge_commit_sha": None,
        "head": {"label": "acme:feature", "ref": f"feature-{number}", "sha": HEAD, "repo": repo},
        "base": {"label": "acme:main", "ref": "main", "sha": "b" * 40, "repo": repo},
    }
    data.update(over)
    return data


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


class FakeGitHub:
    """State plus scripted one-shot replies (`queue`) keyed by (METHOD, path)."""

    page_size = 2  # small pages so pagination is exercised with few records

    def __init__(self) -> None:
        self.pulls = {7: pull_payload(7), 8: pull_payload(8, state="closed")}
        self.pulls[9] = pull_payload(
            9, state="closed", merged_at="2025-01-01T00:00:00Z", merge_commit_sha="c" * 40
        )
        self.comments: list[dict[str, Any]] = []
        self.checks: dict[str, list[dict[str, Any]]] = {}
        self.queue: dict[tuple[str, str], list[Reply]] = {}
        self.seen: list[Seen] = []
        self.base_url = ""
        self.lock = threading.Lock()

    def script(self, method: str, path: str, *replies: Reply) -> None:
        self.queue.setdefault((method, path), []).extend(replies)

    def handle(self, seen: Seen) -> Reply:
        with self.lock:
            self.seen.append(seen)
            scripted = self.queue.get((seen.method, seen.path))
            if scripted:
                return scripted.pop(0)
            return self.route(seen)

    def page(self, seen: Seen, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
        page = int(seen.query.get("page", ["1"])[0])
        chunk = items[(page - 1) * self.page_size : page * self.page_size]
        links = []
        if page * self.page_size < len(items):
            query = {k: v[0] for k, v in seen.query.items() if k != "page"}
            rest = "".join(f"{k}={v}&" for k, v in query.items())
            links.append(f'<{self.base_url}{seen.path}?{rest}page={page + 1}>; rel="next"')
            links.append(f'<{self.base_url}{seen.path}?{rest}page=99>; rel="last"')
        return chunk, ({"Link": ", ".join(links)} if links else {})

    def route(self, seen: Seen) -> Reply:
        m, p = seen.method, seen.path
        prefix = f"/repos/{SLUG}"
        if match := re.fullmatch(prefix + r"/pulls/(\d+)", p):
            pr = self.pulls.get(int(match[1]))
            return Reply(200, pr) if pr else not_found()
        if p == prefix + "/pulls" and m == "GET":
            state = seen.query.get("state", ["open"])[0]
            items = [v for v in self.pulls.values() if state == "all" or v["state"] == state]
            chunk, headers = self.page(seen, items)
            return Reply(200, chunk, headers)
        if match := re.fullmatch(prefix + r"/issues/(\d+)/labels", p):
            pr = self.pulls[int(match[1])]
            for name in seen.body["labels"]:
                pr["labels"].append({"id": 99, "name": name, "color": "ededed"})
            return Reply(200, pr["labels"])
        if match := re.fullmatch(prefix + r"/issues/(\d+)/labels/(.+)", p):
            pr = self.pulls[int(match[1])]
            name = unquote(match[2])
            if not any(label["name"] == name for label in pr["labels"]):
                return Reply(404, {"message": "Label does not exist", "status": "404"})
            pr["labels"] = [label for label in pr["labels"] if label["name"] != name]
            return Reply(200, pr["labels"])
        if match := re.fullmatch(prefix + r"/issues/(\d+)/comments", p):
            if m == "POST":
                comment = {
                    "id": 1000 + len(self.comments),
                    "body": seen.body["body"],
                    "user": {"login": "gov-bot"},
                    "author_association": "MEMBER",
                    "created_at": f"2025-01-01T00:00:{len(self.comments):02d}Z",
                    "issue_url": f"https://api.github.com/repos/{SLUG}/issues/{match[1]}",
                }
                self.comments.append(comment)
                return Reply(201, comment)
            chunk, headers = self.page(seen, self.comments)
            return Reply(200, chunk, headers)
        if match := re.fullmatch(prefix + r"/commits/([0-9a-f]+)/check-runs", p):
            runs = self.checks.get(match[1], [])
            if "check_name" in seen.query:
                runs = [r for r in runs if r["name"] == seen.query["check_name"][0]]
            chunk, headers = self.page(seen, runs)
            return Reply(200, {"total_count": len(runs), "check_runs": chunk}, headers)
        if match := re.fullmatch(prefix + r"/pulls/(\d+)/merge", p):
            pr = self.pulls[int(match[1])]
            if seen.body.get("sha") != pr["head"]["sha"]:
                return Reply(
                    409, {"message": "Head branch was modified. Review and try the merge again."}
                )
            pr.update(state="closed", merged_at="2025-01-02T00:00:00Z", merge_commit_sha="d" * 40)
            return Reply(
                200,
                {"sha": "d" * 40, "merged": True, "message": "Pull Request successfully merged"},
            )
        return not_found()


def not_found() -> Reply:
    return Reply(
        404,
        {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        },
    )


def check_run(name: str, status: str, conclusion: str | None, started: str) -> dict[str, Any]:
    return {
        "id": abs(hash((name, started))) % 10**9,
        "name": name,
        "head_sha": HEAD,
        "status": status,
        "conclusion": conclusion,
        "started_at": started,
        "completed_at": started if status == "completed" else None,
        "details_url": f"https://github.com/{SLUG}/actions/runs/1/job/2",
        "app": {"slug": "github-actions"},
    }


def make_handler(fake: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            seen = Seen(
                self.command,
                parts.path,
                parse_qs(parts.query),
                {k.lower(): v for k, v in self.headers.items()},
                json.loads(raw) if raw else None,
            )
            reply = fake.handle(seen)
            body = b"" if reply.body is None else json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

    return Handler


F = TypeVar("F", bound=FakeGitHub)


@contextmanager
def serve(state: F) -> Iterator[F]:
    """`state` (a FakeGitHub or a subclass with routes of its own) served on
    127.0.0.1; its `base_url` is set to the server's."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as state:
        yield state


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def gh(fake: FakeGitHub, sleeps: Sleeps) -> Iterator[GitHubForge]:
    forge = GitHubForge(
        SLUG,
        token=TOKEN,
        base_url=fake.base_url,
        sleep=sleeps,
        clock=lambda: NOW,
        max_retries=3,
        backoff=1.0,
        max_wait=120,
    )
    yield forge
    forge.close()


def assert_no_token(exc: BaseException) -> None:
    for text in (str(exc), repr(exc), getattr(exc, "hint", ""), str(exc.args)):
        assert TOKEN not in text


# -- reading -----------------------------------------------------------------------


def test_get_pull_maps_fields_and_sends_headers(gh: GitHubForge, fake: FakeGitHub) -> None:
    pr = gh.get_pull(7)
    assert (pr.number, pr.state, pr.head_branch, pr.head_sha, pr.base_branch) == (
        7,
        "open",
        "feature-7",
        HEAD,
        "main",
    )
    assert pr.labels == ("full-sweep-enabled",) and not pr.is_fork and not pr.draft
    assert pr.url == f"https://github.com/{SLUG}/pull/7"
    headers = fake.seen[-1].headers
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert headers["user-agent"].startswith("gov/")
    assert gh.get_pull(9).state == "merged" and gh.get_pull(8).state == "closed"


def test_fork_detection(gh: GitHubForge, fake: FakeGitHub) -> None:
    fork = {"full_name": "stranger/bench", "fork": True}
    fake.pulls[20] = pull_payload(20)
    fake.pulls[20]["head"]["repo"] = fork
    fake.pulls[21] = pull_payload(21)
    fake.pulls[21]["head"]["repo"] = None  # the fork was deleted
    assert gh.get_pull(20).is_fork and gh.get_pull(21).is_fork


def test_list_pulls_follows_link_pagination(gh: GitHubForge, fake: FakeGitHub) -> None:
    for n in range(30, 35):
        fake.pulls[n] = pull_payload(n)
    numbers = [p.number for p in gh.list_pulls()]
    assert numbers == [7, 30, 31, 32, 33, 34]
    pages = [s for s in fake.seen if s.path.endswith("/pulls")]
    assert len(pages) == 3
    assert pages[0].query["per_page"] == ["100"] and "page" not in pages[0].query
    assert pages[2].query["page"] == ["3"]
    assert all(s.headers["authorization"] == f"Bearer {TOKEN}" for s in pages)
    assert [p.number for p in gh.list_pulls("merged")] == [9]
    assert [p.number for p in gh.list_pulls("closed")] == [8]


def test_pagination_never_follows_another_host(gh: GitHubForge, fake: FakeGitHub) -> None:
    fake.script(
        "GET",
        f"/repos/{SLUG}/issues/7/comments",
        Reply(200, [], {"Link": '<https://evil.example/steal?page=2>; rel="next"'}),
    )
    with pytest.raises(ForgeError, match="another host"):
        gh.list_comments(7)


# -- writing -------------------------------------------------------------------------


def test_labels_and_comments(gh: GitHubForge, fake: FakeGitHub) -> None:
    gh.add_label(7, "skip_queue")
    assert fake.seen[-1].body == {"labels": ["skip_queue"]}
    gh.remove_label(7, "full-sweep-enabled")
    gh.remove_label(7, "full-sweep-enabled")  # not there any more: a no-op
    assert gh.get_pull(7).labels == ("skip_queue",)
    gh.add_label(7, "needs review/x")
    gh.remove_label(7, "needs review/x")
    assert fake.seen[-1].path == f"/repos/{SLUG}/issues/7/labels/needs%20review%2Fx"

    posted = [gh.post_comment(7, f"/reuse-sweep-run {i}") for i in range(3)]
    assert posted[0].author == "gov-bot" and posted[0].author_association == "MEMBER"
    comments = gh.list_comments(7)  # two pages of two
    assert [c.body for c in comments] == [f"/reuse-sweep-run {i}" for i in range(3)]
    assert [c.id for c in comments] == [c.id for c in posted]


def test_remove_label_on_a_missing_pr_is_an_error(gh: GitHubForge, fake: FakeGitHub) -> None:
    fake.script("DELETE", f"/repos/{SLUG}/issues/404/labels/x", not_found())
    with pytest.raises(GitHubHTTPError, match="HTTP 404"):
        gh.remove_label(404, "x")


# -- errors, retries, rate limits -------------------------------------------------------


def test_404_names_status_and_endpoint(gh: GitHubForge, sleeps: Sleeps) -> None:
    with pytest.raises(GitHubHTTPError) as info:
        gh.get_pull(999)
    err = info.value
    assert err.status == 404 and err.endpoint == f"/repos/{SLUG}/pulls/999"
    assert str(err) == f"GitHub GET /repos/{SLUG}/pulls/999 failed: HTTP 404 Not Found: Not Found"
    assert "repository slug" in err.hint
    assert sleeps == []  # a 404 is not retried
    assert_no_token(err)


def test_422_carries_the_validation_errors(gh: GitHubForge, fake: FakeGitHub) -> None:
    fake.script(
        "POST",
        f"/repos/{SLUG}/issues/7/labels",
        Reply(
            422,
            {
                "message": "Validation Failed",
                "errors": [
                    {
                        "resource": "Label",
                        "code": "invalid",
                        "field": "name",
                        "message": "name is too long",
                    }
                ],
            },
        ),
    )
    with pytest.raises(GitHubHTTPError, match=r"HTTP 422.*Validation Failed.*name is too long"):
        gh.add_label(7, "x" * 200)


def test_502_is_retried_with_backoff(gh: GitHubForge, fake: FakeGitHub, sleeps: Sleeps) -> None:
    path = f"/repos/{SLUG}/pulls/7"
    fake.script("GET", path, Reply(502, {"message": "Server Error"}), Reply(503, None))
    assert gh.get_pull(7).number == 7
    assert sleeps == [1.0, 2.0]
    assert len([s for s in fake.seen if s.path == path]) == 3


def test_5xx_gives_up_after_max_retries(gh: GitHubForge, fake: FakeGitHub, sleeps: Sleeps) -> None:
    fake.script("GET", f"/repos/{SLUG}/pulls/7", *[Reply(502, {"message": "Bad"})] * 4)
    with pytest.raises(GitHubHTTPError, match="HTTP 502") as info:
        gh.get_pull(7)
    assert sleeps == [1.0, 2.0, 4.0]
    assert "retries" in info.value.hint


def test_primary_rate_limit_waits_until_reset(
    gh: GitHubForge, fake: FakeGitHub, sleeps: Sleeps
) -> None:
    limited = Reply(
        403,
        {"message": "API rate limit exceeded for user ID 1."},
        {
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset": str(int(NOW) + 30),
            "x-ratelimit-resource": "core",
        },
    )
    fake.script("GET", f"/repos/{SLUG}/pulls/7", limited)
    assert gh.get_pull(7).number == 7
    assert sleeps == [31.0]


def test_secondary_rate_limit_honours_retry_after(
    gh: GitHubForge, fake: FakeGitHub, sleeps: Sleeps
) -> None:
    fake.script(
        "POST",
        f"/repos/{SLUG}/issues/7/comments",
        Reply(429, {"message": "You have exceeded a secondary rate limit."}, {"retry-after": "7"}),
    )
    gh.post_comment(7, "hi")
    assert sleeps == [7.0]
    assert len(fake.comments) == 1


def test_rate_limit_too_far_away_fails_without_sleeping(
    gh: GitHubForge, fake: FakeGitHub, sleeps: Sleeps
) -> None:
    fake.script(
        "GET",
        f"/repos/{SLUG}/pulls/7",
        Reply(
            403,
            {"message": "API rate limit exceeded"},
            {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 3600)},
        ),
    )
    with pytest.raises(ForgeError, match=r"rate limit exhausted.*resets in 3601s"):
        gh.get_pull(7)
    assert sleeps == []


def test_plain_403_is_a_permission_error(gh: GitHubForge, fake: FakeGitHub, sleeps: Sleeps) -> None:
    fake.script(
        "POST",
        f"/repos/{SLUG}/issues/7/labels",
        Reply(
            403,
            {"message": "Resource not accessible by integration"},
            {"x-ratelimit-remaining": "4999"},
        ),
    )
    with pytest.raises(GitHubHTTPError, match=r"HTTP 403.*not accessible") as info:
        gh.add_label(7, "x")
    assert "permission" in info.value.hint and sleeps == []


def test_token_is_redacted_even_when_echoed(gh: GitHubForge, fake: FakeGitHub) -> None:
    fake.script(
        "GET",
        f"/repos/{SLUG}/pulls/7",
        Reply(400, {"message": f"bad credentials header: Bearer {TOKEN}"}),
    )
    with pytest.raises(GitHubHTTPError) as info:
        gh.get_pull(7)
    assert "Bearer ***" in str(info.value)
    assert_no_token(info.value)
    assert TOKEN not in repr(gh)


def test_unreachable_server_retries_then_fails_cleanly(sleeps: Sleeps) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    forge = GitHubForge(
        SLUG, token=TOKEN, base_url=f"http://127.0.0.1:{port}", sleep=sleeps, max_retries=2
    )
    with pytest.raises(ForgeError, match=f"GitHub GET /repos/{SLUG}/pulls/1 failed") as info:
        forge.get_pull(1)
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert sleeps == [1.0, 2.0]
    assert_no_token(info.value)


def test_token_from_env_and_factory(fake: FakeGitHub, sandbox_repo) -> None:
    assert token_from_env({"GH_TOKEN": "a", "GITHUB_TOKEN": "b"}) == "a"
    assert token_from_env({"GITHUB_TOKEN": "b"}) == "b"
    assert token_from_env({"GH_TOKEN": ""}) is None
    forge = open_forge(
        "github", sandbox_repo, SLUG, base_url=fake.base_url, env={"GITHUB_TOKEN": TOKEN}
    )
    assert isinstance(forge, GitHubForge)
    forge.get_pull(7)
    assert fake.seen[-1].headers["authorization"] == f"Bearer {TOKEN}"

    anonymous = open_forge("github", sandbox_repo, SLUG, base_url=fake.base_url, env={})
    with pytest.raises(GitHubHTTPError) as info:
        anonymous.get_pull(999)
    assert "authorization" not in fake.seen[-1].headers
    assert "GH_TOKEN" in info.value.hint
    with pytest.raises(ForgeError, match="OWNER/NAME"):
        GitHubForge("just-a-name")


# -- checks and merge -------------------------------------------------------------------------


def test_list_checks_paginates_the_check_runs_object(gh: GitHubForge, fake: FakeGitHub) -> None:
    fake.checks[HEAD] = [
        check_run("check-changelog", "completed", "failure", "2025-01-01T00:00:00Z"),
        check_run("lint", "completed", "success", "2025-01-01T00:00:01Z"),
        check_run("check-changelog", "completed", "success", "2025-01-01T00:05:00Z"),
    ]
    runs = gh.list_checks(HEAD)
    assert [(r.name, r.conclusion) for r in runs] == [
        ("check-changelog", "failure"),
        ("lint", "success"),
        ("check-changelog", "success"),
    ]
    only = gh.list_checks(HEAD, name="lint")
    assert [r.name for r in only] == ["lint"]
    assert fake.seen[-1].query["check_name"] == ["lint"]


def test_wait_for_checks_over_http(gh: GitHubForge, fake: FakeGitHub) -> None:
    fake.checks[HEAD] = [check_run("check-changelog", "in_progress", None, "2025-01-01T00:00:00Z")]
    naps: list[float] = []

    def sleep(seconds: float) -> None:  # the check finishes while we sleep
        naps.append(seconds)
        fake.checks[HEAD] = [
            check_run("check-changelog", "completed", "success", "2025-01-01T00:00:00Z")
        ]

    done = gh.wait_for_checks(
        HEAD, ["check-changelog"], poll_interval=5, sleep=sleep, clock=lambda: 0.0
    )
    assert done["check-changelog"].conclusion == "success" and naps == [5]

    fake.checks[HEAD].append(check_run("bench", "completed", "failure", "2025-01-01T00:01:00Z"))
    with pytest.raises(ChecksFailedError, match="bench=failure"):
        gh.wait_for_checks(HEAD, ["check-changelog"], all_reported=True, sleep=sleep)


def test_merge_sends_expected_sha_and_squash(gh: GitHubForge, fake: FakeGitHub) -> None:
    result = gh.merge_pull(7, HEAD)
    assert result.merged and result.sha == "d" * 40
    put = fake.seen[-1]
    assert (put.method, put.path) == ("PUT", f"/repos/{SLUG}/pulls/7/merge")
    assert put.body == {
        "sha": HEAD,
        "merge_method": "squash",
        "commit_title": "Bump image for PR 7 (#7)",
    }
    assert gh.get_pull(7).state == "merged"
    with pytest.raises(MergeRefusedError, match="is merged"):
        gh.merge_pull(7, HEAD)


def test_merge_refuses_a_moved_head_before_calling_put(gh: GitHubForge, fake: FakeGitHub) -> None:
    with pytest.raises(HeadMovedError):
        gh.merge_pull(7, "f" * 40)
    assert not any(s.method == "PUT" for s in fake.seen)
    with pytest.raises(MergeRefusedError, match="is closed"):
        gh.merge_pull(8, HEAD)


def test_merge_409_when_the_head_moves_during_the_merge(gh: GitHubForge, fake: FakeGitHub) -> None:
    path = f"/repos/{SLUG}/pulls/7"
    # GET (preflight) still shows HEAD; someone pushes; the PUT then sees a new head.
    fake.script("GET", path, Reply(200, pull_payload(7)))
    fake.pulls[7]["head"]["sha"] = "e" * 40
    with pytest.raises(HeadMovedError) as info:
        gh.merge_pull(7, HEAD, title="T", message="body")
    assert info.value.actual == "e" * 40 and info.value.exit_code == 1
    put = next(s for s in fake.seen if s.method == "PUT")
    assert put.body["sha"] == HEAD and put.body["commit_message"] == "body"


def test_merge_405_is_a_clear_refusal(gh: GitHubForge, fake: FakeGitHub) -> None:
    fake.script(
        "PUT",
        f"/repos/{SLUG}/pulls/7/merge",
        Reply(405, {"message": 'Required status check "check-changelog" is expected.'}),
    )
    with pytest.raises(MergeRefusedError, match=r"refused to merge PR #7.*check-changelog") as info:
        gh.merge_pull(7, HEAD)
    assert "branch protection" in info.value.hint
    assert_no_token(info.value)


def test_require_head_verifies_the_pushed_head(gh: GitHubForge) -> None:
    assert gh.branch_mover is None  # its branches move by git push only
    assert gh.require_head(7, HEAD).head_sha == HEAD
    with pytest.raises(HeadMovedError):
        gh.require_head(7, "0" * 40)


# -- tokens: stripped, validated, redacted in every form ---------------------------------------


@pytest.mark.parametrize("raw", [TOKEN + "\r", TOKEN + "\r\n", " " + TOKEN + "\n"])
def test_a_crlf_token_is_stripped_before_use(fake: FakeGitHub, sandbox_repo, raw: str) -> None:
    forge = open_forge("github", sandbox_repo, SLUG, base_url=fake.base_url, env={"GH_TOKEN": raw})
    forge.get_pull(7)
    assert fake.seen[-1].headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("raw", [TOKEN[:8] + "\r" + TOKEN[8:], TOKEN + " x", TOKEN + "\x00"])
def test_a_token_with_inner_junk_is_refused_without_showing_it(raw: str) -> None:
    with pytest.raises(ForgeError, match="characters a GitHub token cannot") as info:
        token_from_env({"GITHUB_TOKEN": raw})
    assert info.value.exit_code == 2
    text = str(info.value) + info.value.hint
    assert TOKEN[:8] not in text and TOKEN[8:] not in text


def test_redaction_covers_escaped_and_encoded_forms() -> None:
    from urllib.parse import quote

    from governance.forge.tokens import redact

    secret = "ghp_a/b+c=d"
    for shown in (secret, repr(secret), repr(secret.encode()), quote(secret, safe="")):
        assert "ghp_a" not in redact(f"Illegal header value b'Bearer {shown}'", secret)
