"""`/reuse-sweep-run [RUN_ID]` comments decide what prepare-merge may reuse, read through
the GitHub forge from a real HTTP server on 127.0.0.1 (`GITHUB_API_URL`): the newest
comment by an allowed author wins, a bare command unpins, a contributor without the
association is not heard, and `reuse-requires-authorization` makes reuse need one."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from governance.git.repo import GitRepo
from governance.sweeps.ledger import Ledger
from tests.harness import Repo, git, run_gov, run_process
from tests.results.test_import import head_plan, write_artifacts

SLUG = "bench/inferencex"
PR = 9
TOKEN = "ghp_" + "Authz" * 8


class GitHub:
    """The PR and its comments, served like GitHub's REST API."""

    def __init__(self, origin: Path) -> None:
        self.origin = origin
        self.comments: list[dict[str, Any]] = []

    def comment(self, body: str, association: str, author: str = "maint") -> None:
        k = len(self.comments)
        self.comments.append({
            "id": 500 + k, "body": body, "user": {"login": author},
            "author_association": association, "created_at": f"2026-08-2{k}T10:00:00Z",
        })  # fmt: skip

    def answer(self, path: str) -> tuple[int, Any]:
        prefix = f"/repos/{SLUG}/"
        if path == f"{prefix}pulls/{PR}":
            head = git(self.origin, "rev-parse", "refs/heads/pr")
            repo = {"full_name": SLUG}
            return 200, {
                "number": PR, "title": "Append an entry", "state": "open", "merged_at": None,
                "merge_commit_sha": None, "labels": [], "draft": False,
                "html_url": f"https://github.com/{SLUG}/pull/{PR}",
                "head": {"ref": "pr", "sha": head, "repo": repo},
                "base": {"ref": "main", "sha": "0" * 40, "repo": repo},
            }  # fmt: skip
        if path == f"{prefix}issues/{PR}/comments":
            return 200, self.comments
        return 404, {"message": "Not Found"}


@pytest.fixture
def github(pr_repo: Repo, tmp_path: Path) -> Iterator[tuple[GitHub, str]]:
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(pr_repo.path), str(origin))
    pr_repo.git("remote", "add", "origin", str(origin))
    pr_repo.git("fetch", "-q", "origin")
    state = GitHub(origin)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, data = state.answer(self.path.split("?", 1)[0])
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def import_twice(repo: Repo, tmp_path: Path) -> dict[str, set[int]]:
    """The same measurements imported as two CI runs: run id -> its ledger run ids."""
    write_artifacts(tmp_path / "download", head_plan(repo))
    for run in ("111", "222"):
        done = run_gov("runs", "import", "--artifacts", str(tmp_path / "download"), "--commit",
                       "pr", "--pr", str(PR), "--ci-run", run, cwd=repo.path)  # fmt: skip
        assert done.exit_code == 0, done.stdout + done.stderr
    with Ledger(GitRepo(repo.path).git_dir / "gov" / "runs.sqlite3") as ledger:
        runs = ledger.runs()
    return {run: {r.id for r in runs if f"CI run {run}:" in r.detail} for run in ("111", "222")}


def merge_dry_run(repo: Repo, url: str, **settings: str) -> dict[str, Any]:
    gov = shutil.which("gov", path=str(Path(sys.executable).parent))
    assert gov, "gov is not installed (pip install -e .)"
    env = {"GITHUB_API_URL": url, "GH_TOKEN": TOKEN, "GOV_REPOSITORY": SLUG, **settings}
    repo.git("checkout", "-q", "main")
    done = run_process(
        [gov, "prepare-merge", "--pr", str(PR), "--forge", "github", "--sweep", "--dry-run",
         "--format", "json"],
        cwd=repo.path, env=env,
    )  # fmt: skip
    assert done.exit_code == 0, done.stdout + done.stderr
    assert TOKEN not in done.stdout + done.stderr
    return json.loads(done.stdout)["sweep"]


def reused_runs(sweep: dict[str, Any]) -> set[int]:
    return {row["run_id"] for row in sweep["rows"] if row["action"] == "reused"}


def test_the_newest_allowed_comment_pins_and_a_contributor_is_not_heard(
    pr_repo: Repo, github: tuple[GitHub, str], tmp_path: Path
) -> None:
    state, url = github
    runs = import_twice(pr_repo, tmp_path)
    state.comment("LGTM\n/reuse-sweep-run 111", "MEMBER")
    state.comment("/reuse-sweep-run 222", "CONTRIBUTOR", author="drive-by")
    state.comment("please use /reuse-sweep-run 222 instead", "OWNER")  # inline: not a command
    sweep = merge_dry_run(pr_repo, url)
    assert sweep["rerun"] == 0 and reused_runs(sweep) <= runs["111"] and reused_runs(sweep)
    assert sweep["authorization"].startswith("reuse pinned to CI run 111 by @maint (MEMBER)")
    assert "comment 500" in sweep["authorization"]
    assert len(sweep["ignored_commands"]) == 1 and "drive-by" in sweep["ignored_commands"][0]

    state.comment("/reuse-sweep-run 222", "OWNER", author="lead")  # newer, allowed: it wins
    sweep = merge_dry_run(pr_repo, url)
    assert (
        reused_runs(sweep) <= runs["222"]
        and "pinned to CI run 222 by @lead" in sweep["authorization"]
    )


def test_a_bare_command_unpins_and_a_pin_without_runs_reruns(
    pr_repo: Repo, github: tuple[GitHub, str], tmp_path: Path
) -> None:
    state, url = github
    runs = import_twice(pr_repo, tmp_path)
    state.comment("/reuse-sweep-run 333", "MEMBER")  # a run never imported here
    pinned = merge_dry_run(pr_repo, url)
    assert pinned["reused"] == 0 and pinned["rerun"] > 0
    assert (
        "pinned to CI run 333" in pinned["authorization"] and "0 run(s)" in pinned["authorization"]
    )
    state.comment("/reuse-sweep-run", "COLLABORATOR")
    unpinned = merge_dry_run(pr_repo, url)
    assert unpinned["rerun"] == 0 and reused_runs(unpinned) <= runs["111"] | runs["222"]
    assert "authorised (any source)" in unpinned["authorization"]


def test_reuse_that_requires_authorization_reruns_without_it(
    pr_repo: Repo, github: tuple[GitHub, str], tmp_path: Path
) -> None:
    state, url = github
    import_twice(pr_repo, tmp_path)
    required = {"GOV_REUSE_REQUIRES_AUTHORIZATION": "true"}
    state.comment("/reuse-sweep-run", "CONTRIBUTOR", author="drive-by")
    refused = merge_dry_run(pr_repo, url, **required)
    assert refused["reused"] == 0 and refused["rerun"] > 0
    assert refused["authorization"].startswith("reuse not authorised")
    state.comment("/reuse-sweep-run", "OWNER")
    allowed = merge_dry_run(pr_repo, url, **required)
    assert allowed["rerun"] == 0 and allowed["reused"] == refused["rerun"]
