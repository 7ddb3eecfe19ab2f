"""GitHub through its REST API (httpx): pull requests, their commits, check runs, the squash merge.

The token never leaves this module except in the Authorization header: it is
kept out of reprs, and every error message is scrubbed of it in case a server
or a transport exception echoes it back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
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
from governance.forge.tokens import clean_token, redact, token_from_env  # noqa: F401 (re-exported)

DEFAULT_BASE_URL = "https://api.github.com"
RETRY_STATUSES = frozenset({500, 502, 503, 504})
_HINTS = {
    401: "the token was rejected: check GH_TOKEN / GITHUB_TOKEN",
    403: "the token lacks permission for this call (needs pull request and issue write access)",
    404: "check the repository slug and PR number, and that the token can see the repository",
    422: "GitHub rejected the request body; see the message above",
}


class GitHubHTTPError(ForgeError):
    def __init__(self, status: int, method: str, endpoint: str, detail: str, hint: str) -> None:
        message = f"GitHub {method} {endpoint} failed: HTTP {status} {detail}"
        super().__init__(message.rstrip(), hint)
        self.status = status
        self.endpoint = endpoint


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
        self._token = token
        self._sleep = sleep
        self._clock = clock  # wall clock: x-ratelimit-reset is a Unix time
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": f"gov/{__version__}",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    def __repr__(self) -> str:
        return f"GitHubForge({self.slug!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> GitHubForge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- HTTP plumbing ---------------------------------------------------------

    def _redact(self, text: str) -> str:
        return redact(text, self._token)

    def _request(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        allow: frozenset[int] = frozenset(),
    ) -> httpx.Response:
        """Send with retries on 5xx, transport errors and rate limits.
        Statuses in `allow` are returned to the caller instead of raised."""
        endpoint = urlsplit(url).path or url
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = self._client.request(method, url, params=params, json=json)
            except httpx.TransportError as exc:
                if last:
                    raise ForgeError(
                        self._redact(f"GitHub {method} {endpoint} failed: {exc}"),
                        "check the network and the API base URL",
                    ) from None
                self._sleep(self._backoff(attempt))
                continue
            status = response.status_code
            if status < 400 or status in allow:
                return response
            wait = self._rate_limit_wait(response)
            if wait is not None and not last:
                if wait > self.max_wait:
                    raise ForgeError(
                        f"GitHub rate limit exhausted for {method} {endpoint} "
                        f"(resets in {wait:.0f}s)",
                        "wait for the reset, or use a token with a higher limit",
                    )
                self._sleep(wait)
                continue
            if status in RETRY_STATUSES and not last:
                self._sleep(self._backoff(attempt))
                continue
            raise self._http_error(response, method, endpoint)
        raise AssertionError("unreachable")  # the loop returns or raises

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff * 2**attempt, self.max_wait)

    def _rate_limit_wait(self, response: httpx.Response) -> float | None:
        """Seconds to wait when `response` is a rate-limit refusal, else None."""
        if response.status_code not in (403, 429):
            return None
        retry_after = response.headers.get("retry-after")
        if retry_after is not None:
            try:
                return max(float(retry_after), 0.0)
            except ValueError:
                return self.backoff
        if response.headers.get("x-ratelimit-remaining") == "0":
            try:
                reset = float(response.headers["x-ratelimit-reset"])
            except (KeyError, ValueError):
                return self.backoff
            return max(reset - self._clock(), 0.0) + 1.0  # +1: the reset second itself
        # A 429 always means "slow down", even without headers.
        return self.backoff if response.status_code == 429 else None

    def _http_error(self, response: httpx.Response, method: str, endpoint: str) -> ForgeError:
        detail = response.reason_phrase
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            if body.get("message"):
                detail += f": {body['message']}"
            errors = body.get("errors")
            if isinstance(errors, list) and errors:
                detail += " (" + "; ".join(_error_text(e) for e in errors) + ")"
        hint = _HINTS.get(response.status_code, "")
        if not self._token and response.status_code in (401, 403, 404):
            hint = "no token is set: export GH_TOKEN or GITHUB_TOKEN"
        if response.status_code in RETRY_STATUSES:
            hint = f"GitHub kept failing after {self.max_retries} retries; try again later"
        return GitHubHTTPError(response.status_code, method, endpoint, self._redact(detail), hint)

    def _get(self, path: str, **params: Any) -> Any:
        return self._request("GET", path, params=params or None).json()

    def _paginate(self, path: str, *, key: str | None = None, **params: Any) -> Iterator[Any]:
        """Items of every page, following `Link: <…>; rel="next"`."""
        url: str | None = path
        query: dict[str, Any] | None = {"per_page": 100, **params}
        while url is not None:
            response = self._request("GET", url, params=query)
            data = response.json()
            yield from (data.get(key, []) if key else data)
            url = response.links.get("next", {}).get("url")
            if url is not None:
                self._same_origin(url)
            query = None  # the next link already carries the query string

    def _same_origin(self, url: str) -> None:
        # The client sends the token with every request: never follow a
        # pagination link to another host.
        here, there = urlsplit(self.base_url), urlsplit(url)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            raise ForgeError(
                f"GitHub pagination pointed to another host ({there.netloc})",
                "check the API base URL",
            )

    def _repo_path(self, rest: str) -> str:
        return f"/repos/{self.slug}/{rest}"

    # -- pull requests -------------------------------------------------------------

    def get_pull(self, number: int) -> PullRequest:
        return self._to_pull(self._get(self._repo_path(f"pulls/{number}")))

    def list_pulls(self, state: PullState | Literal["all"] = "open") -> list[PullRequest]:
        # GitHub has no "merged" filter: merged PRs are closed ones with merged_at.
        api_state = {"open": "open", "closed": "closed", "merged": "closed"}.get(state, "all")
        pulls = [
            self._to_pull(item)
            for item in self._paginate(self._repo_path("pulls"), state=api_state)
        ]
        return pulls if state in ("all", "open") else [p for p in pulls if p.state == state]

    def _to_pull(self, data: dict[str, Any]) -> PullRequest:
        head, base = data["head"], data["base"]
        head_repo = (head.get("repo") or {}).get("full_name")
        base_repo = (base.get("repo") or {}).get("full_name") or self.slug
        if data.get("merged_at"):
            state: PullState = "merged"
        else:
            state = "open" if data["state"] == "open" else "closed"
        return PullRequest(
            number=data["number"],
            title=data["title"],
            state=state,
            head_branch=head["ref"],
            head_sha=head["sha"],
            base_branch=base["ref"],
            # A deleted fork has head.repo null: still not this repository.
            is_fork=head_repo is None or head_repo.lower() != base_repo.lower(),
            labels=tuple(label["name"] for label in data.get("labels", [])),
            url=data.get("html_url", ""),
            draft=bool(data.get("draft", False)),
            merge_commit_sha=data.get("merge_commit_sha"),
        )

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
                raise self._http_error(response, "DELETE", path)

    def post_comment(self, number: int, body: str) -> Comment:
        data = self._request(
            "POST", self._repo_path(f"issues/{number}/comments"), json={"body": body}
        ).json()
        return _to_comment(data)

    def list_comments(self, number: int) -> list[Comment]:
        items = self._paginate(self._repo_path(f"issues/{number}/comments"))
        return sorted((_to_comment(c) for c in items), key=lambda c: (c.created_at, c.id))

    # -- checks ------------------------------------------------------------------------

    def list_checks(self, sha: str, name: str | None = None) -> list[CheckRun]:
        params = {"check_name": name} if name else {}
        items = self._paginate(
            self._repo_path(f"commits/{sha}/check-runs"), key="check_runs", **params
        )
        return [
            CheckRun(
                name=c["name"],
                status=c["status"],
                conclusion=c.get("conclusion"),
                head_sha=c.get("head_sha", sha),
                started_at=c.get("started_at") or "",
                details_url=c.get("details_url") or "",
            )
            for c in items
        ]

    # -- branch updates and merge -------------------------------------------------------

    def update_branch(
        self, number: int, new_sha: str, *, expected_old_sha: str | None = None
    ) -> PullRequest:
        """The caller pushed with git; confirm GitHub now sees `new_sha` as the head."""
        return self.require_head(number, new_sha)

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
        data = response.json()
        return MergeResult(
            number, bool(data.get("merged")), data.get("sha", ""), data.get("message", "")
        )


def _to_comment(data: dict[str, Any]) -> Comment:
    return Comment(
        id=data["id"],
        body=data.get("body") or "",
        author=(data.get("user") or {}).get("login", ""),
        created_at=data.get("created_at", ""),
        author_association=data.get("author_association", ""),
    )


def _json_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return str(body.get("message", "")) if isinstance(body, dict) else ""


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)
    return str(error)
