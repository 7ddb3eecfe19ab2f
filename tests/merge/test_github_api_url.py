"""`GITHUB_API_URL`: the GitHub forge's API root, as Actions sets it (and as a
GitHub Enterprise Server user needs it). `gov prepare-merge --forge github`
runs as a real process against a real HTTP server on 127.0.0.1 that answers
like GitHub, its branches a bare `origin` repository."""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from governance.forge.base import ForgeError
from governance.forge.github import DEFAULT_BASE_URL, api_root
from tests.harness import git, run_process
from tests.merge.conftest import PR, Setup
from tests.merge.test_github_flow import FakeGitHub

TOKEN = "ghp_" + "ApiUrl" * 7


def test_the_api_root_defaults_to_github_and_takes_an_enterprise_root() -> None:
    assert api_root({}) == DEFAULT_BASE_URL
    assert api_root({"GITHUB_API_URL": "https://ghe.example.com/api/v3/"}) == (
        "https://ghe.example.com/api/v3"
    )
    assert api_root({"GITHUB_API_URL": "http://127.0.0.1:8123"}) == "http://127.0.0.1:8123"


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("http://ghe.example.com/api/v3", "plain http would send the token unencrypted"),
        ("https://user:pw@ghe.example.com/api/v3", "carries credentials"),
        ("https://ghe.example.com/api/v3?x=1", "a query"),
        ("ghe.example.com/api/v3", "not an absolute http(s) URL"),
        ("file:///etc/passwd", "not an absolute http(s) URL"),
    ],
)
def test_an_api_root_that_would_leak_the_token_is_refused(value: str, why: str) -> None:
    with pytest.raises(ForgeError) as caught:
        api_root({"GITHUB_API_URL": value})
    assert why in str(caught.value) and "GITHUB_API_URL" in str(caught.value)


class Serving:
    """`FakeGitHub.handle` behind a real HTTP server; records what it was sent."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake
        self.authorizations: list[str] = []
        serving = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                serving.authorizations.append(self.headers.get("Authorization", ""))
                request = httpx.Request(self.command, f"http://127.0.0.1{self.path}", content=body)
                reply = serving.fake.handle(request)
                self.send_response(reply.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.content)))
                self.end_headers()
                self.wfile.write(reply.content)

            do_GET = do_PUT = do_POST = do_PATCH = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def served(pr_setup: Setup, tmp_path: Path) -> Iterator[Serving]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(pr_setup.path), str(origin))
    for key, value in (("user.name", "gov tests"), ("user.email", "tests@gov.invalid")):
        git(origin, "config", key, value)
    pr_setup.git("remote", "add", "origin", str(origin))
    pr_setup.git("fetch", "-q", "origin")
    fake = FakeGitHub(origin)
    pushed = fake.head

    def head_with_ci() -> str:  # CI (the fake) passes check-changelog on what was pushed
        sha = pushed()
        if sha != pr_setup.pr_head:
            fake.checks.setdefault(sha, "success")
        return sha

    fake.head = head_with_ci  # type: ignore[method-assign]
    serving = Serving(fake)
    yield serving
    serving.server.shutdown()


def test_prepare_merge_on_github_talks_to_the_api_url_it_is_given(
    pr_setup: Setup, served: Serving
) -> None:
    gov = shutil.which("gov", path=str(Path(sys.executable).parent))
    assert gov, "gov is not installed (pip install -e .)"
    done = run_process(
        [gov, "prepare-merge", "--pr", str(PR), "--forge", "github", "--check-timeout", "60"],
        cwd=pr_setup.path,
        env={"GITHUB_API_URL": served.url, "GH_TOKEN": TOKEN},
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    origin = served.fake.origin
    assert served.fake.merged == git(origin, "rev-parse", "refs/heads/main")
    assert served.authorizations and set(served.authorizations) == {f"Bearer {TOKEN}"}
    assert TOKEN not in done.stdout + done.stderr
    landed = git(origin, "show", "main:perf-changelog.yaml")
    assert landed.endswith(f"/pull/{PR}")  # the PR's link, canonical, on main


def test_a_refused_api_url_stops_before_anything_moves(pr_setup: Setup, served: Serving) -> None:
    gov = shutil.which("gov", path=str(Path(sys.executable).parent))
    assert gov
    before = pr_setup.git("for-each-ref")
    done = run_process(
        [gov, "prepare-merge", "--pr", str(PR), "--forge", "github"],
        cwd=pr_setup.path,
        env={"GITHUB_API_URL": "http://ghe.example.com/api/v3", "GH_TOKEN": TOKEN},
    )
    assert done.exit_code == 2 and "GITHUB_API_URL" in done.stderr, done.stderr
    assert served.authorizations == [] and pr_setup.git("for-each-ref") == before
    assert TOKEN not in done.stdout + done.stderr
