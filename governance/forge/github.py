"""GitHub through its REST API (httpx): pull requests, their commits, check runs, the squash merge.

The token never leaves this module and `rest` except in the Authorization
header: it is kept out of reprs, and every error message is scrubbed of it in
case a server or a transport exception echoes it back. Transport bounds
(deadline, size, pages) live in `rest`, answer shapes in `github_shapes`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Literal
from urllib.parse import quote, urlsplit

import httpx

from governance import __version__
from governance.forge.base import (
    CheckRun,
    Comment,
    Forge,
    ForgeError,
    HeadMovedError,
    MergeRefusedError,
    MergeResult,
    PullRequest,
    PullState,
)
from governance.forge.github_shapes import Shape, check_from, comment_from, pull_from
from governance.forge.rest import (  # noqa: F401 (GitHubHTTPError re-exported)
    DEADLINE_SECONDS,
    MAX_BYTES,
    MAX_PAGES,
    GitHubHTTPError,
    RestClient,
    json_or_none,
)
from governance.forge.tokens import clean_token, redact, token_from_env  # noqa: F401 (re-exported)

DEFAULT_BASE_URL = "https://api.github.com"
API_URL_VARIABLE = "GITHUB_API_URL"  # what GitHub Actions sets (GitHub Enterprise Server: its own)
_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def api_root(env: Mapping[str, str]) -> str:
    """The REST API root: `GITHUB_API_URL` when set (Actions sets it; a GitHub
    Enterprise Server's is `https://HOST/api/v3`), else api.github.com. The
    token travels with every request, so the root must be https, or plain
    http on this machine's loopback (a local test server); it carries no
    credentials, query or fragment."""
    raw = env.get(API_URL_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_BASE_URL
    parts = urlsplit(raw)
    plain_ok = parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK
    problem = (
        "it is not an absolute http(s) URL"
        if parts.scheme not in ("http", "https") or not parts.hostname
        else "plain http would send the token unencrypted (allowed only to 127.0.0.1/localhost)"
        if parts.scheme == "http" and not plain_ok
        else "it carries credentials, a query or a fragment"
        if parts.username or parts.password or parts.query or parts.fragment
        else ""
    )
    if problem:
        raise ForgeError(
            f"{API_URL_VARIABLE}={raw!r}: {problem}",
            f"set {API_URL_VARIABLE} to the API root, e.g. https://github.example.com/api/v3, "
            "or unset it for api.github.com",
        )
    return raw.rstrip("/")


class GitHubForge(Forge):
    kind = "github"

    def __init__(
        self,
        repository_slug: str,
        *,
        token: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_wait: float = 120.0,
        timeout: float = 30.0,
        deadline: float = DEADLINE_SECONDS,
        max_bytes: int = MAX_BYTES,
        max_pages: int = MAX_PAGES,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if repository_slug.count("/") != 1 or not all(repository_slug.split("/")):
            raise ForgeError(
                f"repository slug must be OWNER/NAME, got {repository_slug!r}",
                "set repository in [tool.gov] or pass --repository OWNER/NAME",
            )
        self.slug = repository_slug
        self.base_url = base_url.rstrip("/")
        token = clean_token(token)
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": f"gov/{__version__}",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._rest = RestClient(
            self.base_url,
            headers,
            token,
            sleep=sleep,
            clock=clock,
            max_retries=max_retries,
            backoff=backoff,
            max_wait=max_wait,
            timeout=timeout,
            deadline=deadline,
            max_bytes=max_bytes,
            max_pages=max_pages,
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"GitHubForge({self.slug!r}, base_url={self.base_url!r})"

    @property
    def rest(self) -> RestClient:
        """The bounded REST client (for the Actions routes, `github_runs`)."""
        return self._rest

    def close(self) -> None:
        self._rest.close()

    def __enter__(self) -> GitHubForge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- HTTP plumbing (governance.forge.rest) -----------------------------------

    def _request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        allow: frozenset[int] = frozenset(),
    ) -> httpx.Response:
        return self._rest.request(method, url, json=json, allow=allow)

    def _json(self, response: httpx.Response, method: str, path: str) -> Any:
        return self._rest.decode(response, method, path)

    def _repo_path(self, rest: str) -> str:
        return f"/repos/{self.slug}/{rest}"

    # -- pull requests -------------------------------------------------------------

    def get_pull(self, number: int) -> PullRequest:
        path = self._repo_path(f"pulls/{number}")
        return pull_from(self._rest.get_json(path), f"GET {path}", self.slug, number)

    def list_pulls(self, state: PullState | Literal["all"] = "open") -> list[PullRequest]:
        # GitHub has no "merged" filter: merged PRs are closed ones with merged_at.
        api_state = {"open": "open", "closed": "closed", "merged": "closed"}.get(state, "all")
        path = self._repo_path("pulls")
        pulls = [
            pull_from(item, f"GET {path}", self.slug)
            for item in self._rest.paginate(path, state=api_state)
        ]
        return pulls if state in ("all", "open") else [p for p in pulls if p.state == state]

    # -- labels and comments ---------------------------------------------------------

    def add_label(self, number: int, label: str) -> None:
        self._request("POST", self._repo_path(f"issues/{number}/labels"), json={"labels": [label]})

    def remove_label(self, number: int, label: str) -> None:
        path = self._repo_path(f"issues/{number}/labels/{quote(label, safe='')}")
        response = self._request("DELETE", path, allow=frozenset({404}))
        if response.status_code == 404:
            message = _json_message(response)
            # 404 also means "no such PR"; only "label not on it" is a no-op.
            if "label does not exist" not in message.lower():
                raise self._rest.http_error(response, "DELETE", path)

    def post_comment(self, number: int, body: str) -> Comment:
        path = self._repo_path(f"issues/{number}/comments")
        response = self._request("POST", path, json={"body": body})
        return comment_from(self._json(response, "POST", path), f"POST {path}")

    def list_comments(self, number: int) -> list[Comment]:
        path = self._repo_path(f"issues/{number}/comments")
        items = self._rest.paginate(path)
        comments = (comment_from(c, f"GET {path}") for c in items)
        return sorted(comments, key=lambda c: (c.created_at, c.id))

    # -- checks ------------------------------------------------------------------------

    def list_checks(self, sha: str, name: str | None = None) -> list[CheckRun]:
        params = {"check_name": name} if name else {}
        path = self._repo_path(f"commits/{sha}/check-runs")
        items = self._rest.paginate(path, key="check_runs", **params)
        return [check_from(c, f"GET {path}", sha) for c in items]

    # -- branch updates and merge -------------------------------------------------------

    def merge_pull(
        self,
        number: int,
        expected_head_sha: str,
        *,
        method: Literal["squash"] = "squash",
        title: str | None = None,
        message: str | None = None,
    ) -> MergeResult:
        pr = self.get_pull(number)
        if pr.state != "open":
            raise MergeRefusedError(
                f"PR #{number} is {pr.state}", "only open pull requests can be merged"
            )
        if pr.head_sha != expected_head_sha:
            raise HeadMovedError(number, expected_head_sha, pr.head_sha)
        # `sha` makes GitHub itself refuse (409) if the head moves after the
        # check above: the reference's check-then-merge race (docs/differences.md).
        body: dict[str, str] = {
            "sha": expected_head_sha,
            "merge_method": method,
            "commit_title": title or f"{pr.title} (#{number})",
        }
        if message is not None:
            body["commit_message"] = message
        path = self._repo_path(f"pulls/{number}/merge")
        response = self._request("PUT", path, json=body, allow=frozenset({405, 409}))
        if response.status_code == 409:
            try:
                actual = self.get_pull(number).head_sha
            except ForgeError:
                actual = ""
            raise HeadMovedError(number, expected_head_sha, actual)
        if response.status_code == 405:
            reason = _json_message(response) or "not mergeable"
            raise MergeRefusedError(
                f"GitHub refused to merge PR #{number}: {reason}",
                "check branch protection, required reviews and checks, and merge conflicts",
            )
        shape = Shape(f"PUT {path}")
        data = shape.obj(self._json(response, "PUT", path), "the merge result")
        return MergeResult(
            number,
            data.get("merged") is True,
            shape.sha(data, "sha", "merge", optional=True),
            shape.text(data, "message", "merge", optional=True),
        )


def _json_message(response: httpx.Response) -> str:
    body = json_or_none(response)
    return str(body.get("message", ""))[:500] if isinstance(body, dict) else ""
