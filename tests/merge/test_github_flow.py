"""`--forge github` end to end: GitHubForge over a GitHub-shaped fake API
(httpx.MockTransport) whose branches are a bare `origin` repository, so the
PR head the API reports is whatever was really pushed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from governance.core.settings import Settings
from governance.forge.github import GitHubForge
from governance.git.repo import GitRepo
from governance.merge.prepare import PrepareOptions, prepare_merge
from tests.harness import git
from tests.merge.conftest import PR, Setup

SLUG = "SemiAnalysisAI/InferenceX"


class FakeGitHub:
    """Just the endpoints prepare-merge uses: the PR, check runs, the merge."""

    def __init__(self, origin: Path) -> None:
        self.origin = origin
        self.merged: str | None = None
        self.checks: dict[str, str] = {}  # sha -> conclusion of check-changelog
        self.merge_bodies: list[dict[str, Any]] = []

    def head(self) -> str:
        return git(self.origin, "rev-parse", "refs/heads/bringup")

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix(f"/repos/{SLUG}/")
        if request.method == "GET" and path == f"pulls/{PR}":
            return httpx.Response(200, json=self.pull())
        if request.method == "GET" and path.startswith("commits/") and path.endswith("check-runs"):
            sha = path.split("/")[1]
            runs = [self.run(sha, c) for s, c in self.checks.items() if s == sha]
            return httpx.Response(200, json={"total_count": len(runs), "check_runs": runs})
        if request.method == "PUT" and path == f"pulls/{PR}/merge":
            body = json.loads(request.content)
            self.merge_bodies.append(body)
            if body["sha"] != self.head():
                return httpx.Response(409, json={"message": "Head branch was modified"})
            main = git(self.origin, "rev-parse", "refs/heads/main")
            squash = git(self.origin, "commit-tree", f"{body['sha']}^{{tree}}", "-p", main,
                         "-m", body["commit_title"])  # fmt: skip
            git(self.origin, "update-ref", "refs/heads/main", squash, main)
            self.merged = squash
            return httpx.Response(200, json={"merged": True, "sha": squash, "message": "ok"})
        return httpx.Response(404, json={"message": f"Not Found: {request.method} {path}"})

    def pull(self) -> dict[str, Any]:
        repo = {"full_name": SLUG}
        return {
            "number": PR, "title": "Raise MI300X DSv4 FP8 concurrency", "state":
            "closed" if self.merged else "open", "merged_at": "2026-01-01T00:00:00Z"
            if self.merged else None, "merge_commit_sha": self.merged, "labels": [],
            "html_url": f"https://github.com/{SLUG}/pull/{PR}", "draft": False,
            "head": {"ref": "bringup", "sha": self.head(), "repo": repo},
            "base": {"ref": "main", "sha": "0" * 40, "repo": repo},
        }  # fmt: skip

    @staticmethod
    def run(sha: str, conclusion: str) -> dict[str, Any]:
        return {"name": "check-changelog", "status": "completed", "conclusion": conclusion,
                "head_sha": sha, "started_at": "2026-01-01T00:00:00Z"}  # fmt: skip


def github_setup(setup: Setup, tmp_path: Path) -> tuple[FakeGitHub, GitHubForge]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(setup.path), str(origin))
    for key, value in (("user.name", "gov tests"), ("user.email", "tests@gov.invalid")):
        git(origin, "config", key, value)
    setup.git("remote", "add", "origin", str(origin))
    fake = FakeGitHub(origin)
    forge = GitHubForge(
        SLUG,
        token="t",
        base_url="https://api.github.test",
        transport=httpx.MockTransport(fake.handle),
    )
    return fake, forge


def run(setup: Setup, forge: GitHubForge, **options: Any):
    opts = PrepareOptions(PR, remote="origin", poll_interval=0.01, check_timeout=2.0, **options)
    return prepare_merge(GitRepo(setup.path), Settings(), forge, opts)


def test_github_flow_pushes_waits_and_merges_with_the_head_sha(
    pr_setup: Setup, tmp_path: Path
) -> None:
    fake, forge = github_setup(pr_setup, tmp_path)
    # CI (played by the fake) passes check-changelog on whatever gets pushed.
    original = fake.head

    def head_with_ci() -> str:
        sha = original()
        fake.checks.setdefault(sha, "success")
        return sha

    fake.head = head_with_ci  # type: ignore[method-assign]
    report = run(pr_setup, forge)
    assert report.ok, report.status
    assert git(fake.origin, "rev-parse", "bringup") == report.prepared
    assert fake.merge_bodies == [
        {"sha": report.prepared, "merge_method": "squash",
         "commit_title": f"Raise MI300X DSv4 FP8 concurrency (#{PR})"}
    ]  # fmt: skip
    assert git(fake.origin, "rev-parse", "main") == report.merge_commit == fake.merged
    again = run(pr_setup, forge)
    assert again.ok and "already merged" in again.status


def test_github_failed_ci_is_never_merged(pr_setup: Setup, tmp_path: Path) -> None:
    fake, forge = github_setup(pr_setup, tmp_path)
    original = fake.head

    def head_with_failing_ci() -> str:
        sha = original()
        if sha != pr_setup.pr_head:
            fake.checks.setdefault(sha, "failure")
        return sha

    fake.head = head_with_failing_ci  # type: ignore[method-assign]
    report = run(pr_setup, forge)
    assert report.failed_step == "checks" and report.exit_code == 1
    assert "check-changelog=failure" in report.status
    assert fake.merge_bodies == [] and fake.merged is None
    assert git(fake.origin, "rev-parse", "main") == pr_setup.main_tip
