"""GitHub's REST transport (httpx): bounded in time and size, every failure a ForgeError.

A forge answer is input gov does not control: a proxy, a captive portal or a
hostile server can answer slowly, hugely, forever, or with something else
than JSON. So each exchange has

* a total deadline (`deadline` seconds from the request to the last byte;
  each read waits at most the smaller of `timeout` and the deadline), not
  only a timeout per read that a server sending a byte a second never trips;
* a size cap (`max_bytes`, checked on the declared length and while the body
  streams in, uncompressed: gov asks for `identity` and refuses an encoded
  answer, so a small compressed body cannot grow past the cap);
* a page cap (`max_pages` per listing; a `next` link to a page already read is an error);
* no redirects followed (the token would go along), and a 3xx is an error;

and every transport, status or decoding failure is a `ForgeError` naming the
method and the URL path (never the query, never the token). Retries: 5xx and
connection failures with backoff, rate limits by their headers; an answer past
the deadline or the cap is not retried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from governance.forge.base import ForgeError
from governance.forge.tokens import redact

RETRY_STATUSES = frozenset({500, 502, 503, 504})
DEADLINE_SECONDS = 60.0
MAX_BYTES = 16 * 1024 * 1024
MAX_PAGES = 100
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


class _Bound(Exception):
    """An answer past the deadline or the size cap (not retried)."""


class RestClient:
    """One base URL, one token; `request`, `get_json` and `paginate`."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        token: str | None,
        *,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
        max_retries: int,
        backoff: float,
        max_wait: float,
        timeout: float,
        deadline: float,
        max_bytes: int,
        max_pages: int,
        transport: httpx.BaseTransport | None,
    ) -> None:
        self.base_url = base_url
        self._token = token
        self._sleep = sleep
        self._clock = clock  # wall clock: x-ratelimit-reset is a Unix time
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.timeout = timeout
        self.deadline = deadline
        self.max_bytes = max_bytes
        self.max_pages = max_pages
        self._headers = headers
        self._transport = transport
        self._client = httpx.Client(
            base_url=base_url,
            headers={**headers, "Accept-Encoding": "identity"},
            timeout=min(timeout, deadline),
            transport=transport,
            follow_redirects=False,
        )

    def without_token(self, base_url: str, *, max_bytes: int) -> RestClient:
        """A client for another origin (where GitHub redirects a download):
        the same bounds and retries, no token, no Authorization header."""
        headers = {k: v for k, v in self._headers.items() if k.lower() != "authorization"}
        return RestClient(
            base_url,
            headers,
            None,
            sleep=self._sleep,
            clock=self._clock,
            max_retries=self.max_retries,
            backoff=self.backoff,
            max_wait=self.max_wait,
            timeout=self.timeout,
            deadline=self.deadline,
            max_bytes=max_bytes,
            max_pages=self.max_pages,
            transport=self._transport,
        )

    def close(self) -> None:
        self._client.close()

    def redact(self, text: str) -> str:
        return redact(text, self._token)

    def fail(self, method: str, endpoint: str, what: str, hint: str) -> ForgeError:
        return ForgeError(self.redact(f"GitHub {method} {endpoint} failed: {what}"), hint)

    # -- one exchange ----------------------------------------------------------------

    def _exchange(
        self, method: str, url: str, params: dict[str, Any] | None, body: Any
    ) -> httpx.Response:
        """The whole answer, read within the deadline and the size cap."""
        ends = time.monotonic() + self.deadline
        with self._client.stream(method, url, params=params, json=body) as response:
            encoding = response.headers.get("content-encoding", "identity").strip().lower()
            if encoding not in ("", "identity"):
                raise _Bound(f"the answer is {encoding}-encoded though gov asked for identity")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise _Bound(f"the answer declares {int(declared):,} bytes, over {self._cap()}")
            chunks: list[bytes] = []
            size = 0
            for chunk in _raw_chunks(response):
                size += len(chunk)
                if size > self.max_bytes:
                    raise _Bound(f"the answer is over {self._cap()}")
                if time.monotonic() > ends:
                    raise _Bound(f"no complete answer within the {self.deadline:g} s deadline")
                chunks.append(chunk)
            if time.monotonic() > ends:
                raise _Bound(f"no complete answer within the {self.deadline:g} s deadline")
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            content=b"".join(chunks),
            request=response.request,
            extensions={"reason_phrase": response.reason_phrase.encode("ascii", "replace")},
        )

    def _cap(self) -> str:
        return f"the {self.max_bytes:,}-byte cap"

    def request(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        allow: frozenset[int] = frozenset(),
        redirect_ok: bool = False,
    ) -> httpx.Response:
        """Send with retries on 5xx, transport errors and rate limits.
        Statuses in `allow` are returned to the caller instead of raised; a
        redirect is too with `redirect_ok` (never followed here: the caller
        decides where to go, and without the token)."""
        endpoint = urlsplit(url).path or url
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = self._exchange(method, url, params, json)
            except _Bound as exc:
                raise self.fail(
                    method, endpoint, str(exc), "check the API base URL and any proxy in between"
                ) from None
            except httpx.TimeoutException:
                raise self.fail(
                    method,
                    endpoint,
                    f"no answer within the {min(self.timeout, self.deadline):g} s timeout",
                    "check the network, the API base URL and any proxy in between",
                ) from None
            except httpx.TransportError as exc:
                if last:
                    raise self.fail(
                        method, endpoint, str(exc), "check the network and the API base URL"
                    ) from None
                self._sleep(self._backoff(attempt))
                continue
            except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError, ValueError) as exc:
                raise self.fail(
                    method,
                    endpoint,
                    f"{type(exc).__name__}: {exc}",
                    "check the API base URL",
                ) from None
            status = response.status_code
            if 300 <= status < 400 and redirect_ok:
                return response
            if 300 <= status < 400:
                where = urlsplit(response.headers.get("location", "")).netloc or "elsewhere"
                raise self.fail(
                    method,
                    endpoint,
                    f"answered with a redirect (HTTP {status}) to {where}; gov does not follow "
                    "redirects (the token would go along)",
                    "check the API base URL (a captive portal or proxy in between?)",
                )
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
            raise self.http_error(response, method, endpoint)
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

    def http_error(self, response: httpx.Response, method: str, endpoint: str) -> ForgeError:
        detail = response.reason_phrase
        body = json_or_none(response)
        if isinstance(body, dict):
            if body.get("message"):
                detail += f": {str(body['message'])[:500]}"
            errors = body.get("errors")
            if isinstance(errors, list) and errors:
                detail += " (" + "; ".join(_error_text(e) for e in errors[:10]) + ")"
        hint = _HINTS.get(response.status_code, "")
        if not self._token and response.status_code in (401, 403, 404):
            hint = "no token is set: export GH_TOKEN or GITHUB_TOKEN"
        if response.status_code in RETRY_STATUSES:
            hint = f"GitHub kept failing after {self.max_retries} retries; try again later"
        return GitHubHTTPError(response.status_code, method, endpoint, self.redact(detail), hint)

    # -- JSON ------------------------------------------------------------------------

    def decode(self, response: httpx.Response, method: str, endpoint: str) -> Any:
        """The answer's JSON, or a ForgeError naming what came instead."""
        try:
            return json.loads(response.content)
        except (ValueError, RecursionError):
            kind = response.headers.get("content-type", "no content type").split(";")[0]
            raise self.fail(
                method,
                endpoint,
                f"answered HTTP {response.status_code} with something that is not JSON "
                f"({kind[:80]}, {len(response.content):,} bytes)",
                "check the API base URL (a captive portal or proxy in between?)",
            ) from None

    def get_json(self, path: str, **params: Any) -> Any:
        return self.decode(self.request("GET", path, params=params or None), "GET", path)

    def paginate(self, path: str, *, key: str | None = None, **params: Any) -> Iterator[Any]:
        """Items of every page, following `Link: <…>; rel="next"`, at most
        `max_pages` pages, never to another host, never to a page seen before."""
        url: str | None = path
        query: dict[str, Any] | None = {"per_page": 100, **params}
        seen: set[str] = set()
        while url is not None:
            if len(seen) >= self.max_pages:
                raise self.fail(
                    "GET",
                    path,
                    f"more than {self.max_pages} pages ({self.max_pages * 100:,} items)",
                    "check the API base URL; a real listing this long is not expected",
                )
            seen.add(url)
            response = self.request("GET", url, params=query)
            data = self.decode(response, "GET", path)
            items = data.get(key) if key and isinstance(data, dict) else data
            if not isinstance(items, list):
                raise self.fail(
                    "GET", path, f"expected a list{f' under {key!r}' if key else ''}, got "
                    f"{type(items).__name__}", "check the API base URL"
                )  # fmt: skip
            yield from items
            url = _next_link(response)
            if url is not None:
                self._same_origin(url)
                if url in seen:
                    raise self.fail(
                        "GET", path, "pagination points back to a page already read",
                        "check the API base URL",
                    )  # fmt: skip
            query = None  # the next link already carries the query string

    def _same_origin(self, url: str) -> None:
        # The client sends the token with every request: never follow a
        # pagination link to another host.
        here, there = urlsplit(self.base_url), urlsplit(url)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            raise ForgeError(
                f"GitHub pagination pointed to another host ({there.netloc[:100]})",
                "check the API base URL",
            )


def _raw_chunks(response: httpx.Response) -> Iterator[bytes]:
    """The body as it arrives; at once when a transport handed it over read
    (httpx.MockTransport)."""
    try:
        body = response.content
    except httpx.ResponseNotRead:
        yield from response.iter_raw()
    else:
        yield body


def _next_link(response: httpx.Response) -> str | None:
    try:
        url = response.links.get("next", {}).get("url")
    except (ValueError, AttributeError):
        return None
    return url if isinstance(url, str) else None


def json_or_none(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except (ValueError, RecursionError):
        return None


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or error)[:200]
    return str(error)[:200]
