"""GitHubForge against a hostile server on 127.0.0.1: endless pages, a byte at a
time, huge or encoded bodies, redirects, HTML, wrong shapes, the wrong PR.

Every case ends in a ForgeError (a GovError: exit 2) that names the URL path
and never the token. No assertion depends on timing: the slow servers never
finish, and the deadline given to the client is what ends the request.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from governance.core.diagnostics import GovError
from governance.forge.github import GitHubForge
from tests.forge.test_github import HEAD, SLUG, TOKEN, pull_payload

Behaviour = Callable[[BaseHTTPRequestHandler, str], None]
PULLS = f"/repos/{SLUG}/pulls"


class Hostile:
    """Path -> behaviour; the base URL is filled in once the server listens."""

    def __init__(self) -> None:
        self.routes: dict[str, Behaviour] = {}
        self.base_url = ""
        self.hits = 0
        self.stop = threading.Event()


def send(handler: BaseHTTPRequestHandler, status: int, body: bytes, **headers: str) -> None:
    handler.send_response(status)
    for key, value in {"Content-Length": str(len(body)), **headers}.items():
        handler.send_header(key.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


def send_json(handler: BaseHTTPRequestHandler, data: Any, **headers: str) -> None:
    send(handler, 200, json.dumps(data).encode(), Content_Type="application/json", **headers)


def stream_forever(handler: BaseHTTPRequestHandler, chunk: bytes, pause: float) -> None:
    """Headers, then `chunk` again and again until the client hangs up."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.end_headers()
    try:
        while True:
            handler.wfile.write(chunk)
            handler.wfile.flush()
            if pause:
                time.sleep(pause)
    except OSError:
        return


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    state = Hostile()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hits += 1
            path = self.path.split("?")[0]
            behaviour = state.routes.get(path)
            if behaviour is None:
                send(self, 404, b'{"message": "Not Found"}')
                return
            behaviour(self, self.path)

        do_PUT = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def forge(hostile: Hostile, **bounds: Any) -> GitHubForge:
    return GitHubForge(
        SLUG, token=TOKEN, base_url=hostile.base_url, sleep=lambda _s: None, max_retries=1,
        **bounds,
    )  # fmt: skip


def refused(call: Callable[[], object], *words: str) -> GovError:
    with pytest.raises(GovError) as info:
        call()
    text = str(info.value) + info.value.hint
    assert TOKEN not in text and TOKEN not in repr(info.value.args)
    for word in words:
        assert word in text, text
    return info.value


# -- time and size --------------------------------------------------------------------


def test_endless_next_links_stop_at_the_page_cap(hostile: Hostile) -> None:
    def endless(handler: BaseHTTPRequestHandler, path: str) -> None:
        page = int(parse_qs(urlsplit(path).query).get("page", ["1"])[0])
        link = f'<{hostile.base_url}{PULLS}?page={page + 1}>; rel="next"'
        send_json(handler, [], Link=link)

    hostile.routes[PULLS] = endless
    refused(lambda: forge(hostile, max_pages=5).list_pulls(), f"GET {PULLS}", "more than 5 pages")
    assert hostile.hits == 5


def test_a_next_link_back_to_a_page_already_read_is_refused(hostile: Hostile) -> None:
    def loop(handler: BaseHTTPRequestHandler, path: str) -> None:
        send_json(handler, [], Link=f'<{hostile.base_url}{PULLS}?page=1>; rel="next"')

    hostile.routes[PULLS] = loop
    refused(lambda: forge(hostile).list_pulls(), "already read")


def test_a_byte_at_a_time_answer_ends_at_the_deadline(hostile: Hostile) -> None:
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: stream_forever(h, b" ", 0.01)
    refused(lambda: forge(hostile, deadline=0.3).get_pull(7), f"GET {PULLS}/7", "deadline")


def test_a_server_that_never_answers_ends_at_the_deadline(hostile: Hostile) -> None:
    def silent(handler: BaseHTTPRequestHandler, _path: str) -> None:
        hostile.stop.wait()

    hostile.routes[f"{PULLS}/7"] = silent
    try:
        refused(lambda: forge(hostile, deadline=0.2).get_pull(7), f"GET {PULLS}/7", "no answer")
    finally:
        hostile.stop.set()


def test_an_endless_answer_stops_at_the_size_cap(hostile: Hostile) -> None:
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: stream_forever(h, b"[" * 65536, 0)
    cap = 1024 * 1024
    refused(lambda: forge(hostile, max_bytes=cap).get_pull(7), f"GET {PULLS}/7", "1,048,576")


def test_a_declared_huge_answer_is_refused_before_reading(hostile: Hostile) -> None:
    def huge(handler: BaseHTTPRequestHandler, _path: str) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(300 * 1024 * 1024))
        handler.end_headers()
        handler.wfile.write(b"[")

    hostile.routes[f"{PULLS}/7"] = huge
    refused(lambda: forge(hostile).get_pull(7), "314,572,800 bytes")


def test_a_compressed_answer_is_refused(hostile: Hostile) -> None:
    """gov asks for identity: a gzip body could expand past the cap in one read."""
    body = gzip.compress(json.dumps(pull_payload(7)).encode())
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: send(h, 200, body, Content_Encoding="gzip")
    refused(lambda: forge(hostile).get_pull(7), "gzip-encoded")


# -- what comes back ------------------------------------------------------------------


def test_a_redirect_is_not_followed(hostile: Hostile) -> None:
    where = "https://portal.example/login?next=x"
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: send(h, 302, b"", Location=where)
    refused(lambda: forge(hostile).get_pull(7), f"GET {PULLS}/7", "redirect", "portal.example")


def test_a_captive_portal_page_is_not_json(hostile: Hostile) -> None:
    page = b"<html><body>Sign in to the hotel wifi</body></html>"
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: send(h, 200, page, Content_Type="text/html")
    refused(lambda: forge(hostile).get_pull(7), f"GET {PULLS}/7", "not JSON", "text/html")


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"head": None}, "pull.head is missing"),
        ({"labels": 7}, "pull.labels is int"),
        ({"labels": [{"name": 7}]}, "pull.labels[].name"),
        ({"number": "7"}, "pull.number is str"),
        ({"title": None}, "pull.title"),
        ({"base": []}, "pull.base is list"),
    ],
)
def test_a_pull_of_the_wrong_shape_is_refused(
    hostile: Hostile, change: dict[str, Any], word: str
) -> None:
    payload = {**pull_payload(7), **change}
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: send_json(h, payload)
    refused(lambda: forge(hostile).get_pull(7), f"GET {PULLS}/7", word)


def test_a_head_sha_that_is_not_a_commit_id_is_refused(hostile: Hostile) -> None:
    payload = pull_payload(7)
    payload["head"]["sha"] = "--upload-pack=evil"
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: send_json(h, payload)
    refused(lambda: forge(hostile).get_pull(7), "pull.head.sha is not a commit id")


def test_another_pr_than_the_one_asked_for_is_refused(hostile: Hostile) -> None:
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: send_json(h, pull_payload(8))
    refused(lambda: forge(hostile).get_pull(7), "asked for PR #7", "PR #8")


def test_check_runs_of_another_commit_are_refused(hostile: Hostile) -> None:
    path = f"/repos/{SLUG}/commits/{HEAD}/check-runs"
    run = {"name": "ci", "status": "completed", "conclusion": "success", "head_sha": "b" * 40}
    hostile.routes[path] = lambda h, _p: send_json(h, {"total_count": 1, "check_runs": [run]})
    refused(lambda: forge(hostile).list_checks(HEAD), f"GET {path}", "bbbbbbbbbbbb")


def test_a_listing_that_is_not_a_list_is_refused(hostile: Hostile) -> None:
    hostile.routes[PULLS] = lambda h, _p: send_json(h, {"message": "hi"})
    refused(lambda: forge(hostile).list_pulls(), f"GET {PULLS}", "expected a list")
    path = f"/repos/{SLUG}/commits/{HEAD}/check-runs"
    hostile.routes[path] = lambda h, _p: send_json(h, {"check_runs": 7})
    refused(lambda: forge(hostile).list_checks(HEAD), "under 'check_runs'")


def test_a_deeply_nested_answer_is_an_error_not_a_crash(hostile: Hostile) -> None:
    hostile.routes[f"{PULLS}/7"] = lambda h, _p: send(h, 200, b"[" * 200_000 + b"]" * 200_000)
    refused(lambda: forge(hostile).get_pull(7), "not JSON")
