"""`gov runs import --github-run RUN_ID` against a real HTTP server on 127.0.0.1 serving
GitHub's routes for a run, its artifacts and their zips (redirected to another
path, fetched there without the token), as `GITHUB_API_URL` points gov at it."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Repo, run_gov
from tests.results.test_import import PR, head_plan, imported_runs, write_artifacts

SLUG = "bench/inferencex"
TOKEN = "ghp_not_a_real_token_but_secret"
RUN = 4711


@dataclass
class Actions:
    """What the server knows: one run, its artifacts (name -> zip bytes), who asked what."""

    run: dict[str, Any] = field(default_factory=dict)
    zips: dict[str, bytes] = field(default_factory=dict)
    expired: set[str] = field(default_factory=set)
    seen: list[tuple[str, bool]] = field(default_factory=list)  # path, Authorization sent
    base: str = ""

    def answer(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        names = sorted(self.zips)
        if path == f"/repos/{SLUG}/actions/runs/{RUN}":
            return 200, json.dumps(self.run).encode(), {}
        if path == f"/repos/{SLUG}/actions/runs/{RUN}/artifacts":
            items = [
                {
                    "id": k + 1,
                    "name": name,
                    "size_in_bytes": len(self.zips[name]),
                    "expired": name in self.expired,
                }
                for k, name in enumerate(names)
            ]
            return 200, json.dumps({"total_count": len(items), "artifacts": items}).encode(), {}
        if path.startswith(f"/repos/{SLUG}/actions/artifacts/") and path.endswith("/zip"):
            number = int(path.split("/")[-2])
            return 302, b"", {"Location": f"{self.base}/blob/{number}?sig=signed"}
        if path.startswith("/blob/"):
            return 200, self.zips[names[int(path.split("/")[2]) - 1]], {}
        return 404, b'{"message": "Not Found"}', {}


@pytest.fixture
def actions() -> Iterator[Actions]:
    state = Actions()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            state.seen.append((path, "authorization" in {k.lower() for k in self.headers}))
            status, body, headers = state.answer(path)
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


def zipped(folder: Path) -> dict[str, bytes]:
    """Each top-level folder of a download as the artifact zip GitHub serves."""
    out = {}
    for artifact in sorted(p for p in folder.iterdir() if p.is_dir()):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for file in sorted(artifact.rglob("*")):
                if file.is_file():
                    archive.write(file, file.relative_to(artifact).as_posix())
        out[artifact.name] = buffer.getvalue()
    return out


def serve_run(repo: Repo, actions: Actions, tmp_path: Path, **run: Any) -> None:
    write_artifacts(tmp_path / "run", head_plan(repo))
    actions.zips = zipped(tmp_path / "run")
    actions.run = {
        "id": RUN,
        "head_sha": repo.sha("pr"),
        "head_branch": "pr",
        "event": "pull_request",
        "status": "completed",
        "conclusion": "success",
        "pull_requests": [{"number": PR}],
        **run,
    }


def github_import(repo: Repo, actions: Actions, *extra: str) -> Any:
    env = {"GITHUB_API_URL": actions.base, "GH_TOKEN": TOKEN, "GOV_REPOSITORY": SLUG}
    return run_gov(
        "runs", "import", "--github-run", str(RUN), "--format", "json", *extra,
        cwd=repo.path, env=env,
    )  # fmt: skip


def test_a_github_run_is_downloaded_and_recorded_with_its_provenance(
    pr_repo: Repo, actions: Actions, tmp_path: Path
) -> None:
    serve_run(pr_repo, actions, tmp_path)
    done = github_import(pr_repo, actions)
    assert done.exit_code == 0, done.stdout + done.stderr
    assert TOKEN not in done.stdout + done.stderr
    runs = imported_runs(pr_repo)
    assert (
        runs
        and {r.pr for r in runs} == {PR}
        and {r.commit_sha for r in runs} == {pr_repo.sha("pr")}
    )
    assert all(r.detail.startswith(f"imported from CI run {RUN}: ") for r in runs)
    api = [auth for path, auth in actions.seen if path.startswith("/repos/")]
    blobs = [auth for path, auth in actions.seen if path.startswith("/blob/")]
    assert api and all(api)  # the API is asked with the token
    assert len(blobs) == len(actions.zips) and not any(blobs)  # the storage never sees it


def test_an_unsuccessful_run_needs_a_maintainers_choice(
    pr_repo: Repo, actions: Actions, tmp_path: Path
) -> None:
    serve_run(pr_repo, actions, tmp_path, conclusion="failure")
    refused = github_import(pr_repo, actions)
    assert refused.exit_code == 2 and "ended failure" in refused.stderr
    assert "--include-unsuccessful" in refused.stderr and imported_runs(pr_repo) == []
    chosen = github_import(pr_repo, actions, "--include-unsuccessful")
    assert chosen.exit_code == 0, chosen.stdout + chosen.stderr
    assert imported_runs(pr_repo)


def test_a_run_whose_artifacts_expired_is_no_source(
    pr_repo: Repo, actions: Actions, tmp_path: Path
) -> None:
    serve_run(pr_repo, actions, tmp_path)
    actions.expired = {"results_bmk"}
    done = github_import(pr_repo, actions)
    assert done.exit_code == 2 and "artifacts expired (results_bmk)" in done.stderr
    assert imported_runs(pr_repo) == []


def test_a_zip_member_leaving_its_artifact_is_refused(
    pr_repo: Repo, actions: Actions, tmp_path: Path
) -> None:
    serve_run(pr_repo, actions, tmp_path)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../../escaped.json", "{}")
    actions.zips["results_bmk"] = buffer.getvalue()
    done = github_import(pr_repo, actions)
    assert done.exit_code == 2 and "not a plain relative path" in done.stderr
    assert imported_runs(pr_repo) == [] and not list(tmp_path.parent.rglob("escaped.json"))
