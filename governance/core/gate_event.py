"""A GitHub event payload, read as untrusted input: bounded (size, depth,
integers: `core.jsonsafe`), every field the sweep gate reads type-checked,
a wrong one a `UsageError` naming it (`pull_request.draft must be true or
false, not a string`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governance.core.diagnostics import UsageError

MAX_EVENT_BYTES = 25 * 1024 * 1024  # GitHub's own cap on a webhook payload
MAX_LABELS = 1000
MAX_NAME = 1024  # characters of a label, branch or action name


@dataclass(frozen=True, slots=True)
class Event:
    """The fields of a GitHub event the gate reads, type-checked."""

    name: str  # the event name: pull_request, push, ...
    action: str = ""
    ref: str = ""  # push: refs/heads/<branch>
    base_branch: str = ""
    head_sha: str = ""
    draft: bool = False
    fork: bool = False
    label: str | None = None  # labeled/unlabeled: the label the event is about
    labels: tuple[str, ...] = ()
    number: int | None = None


def read_event(data: bytes, name: str | None) -> Event:
    """The event file (`$GITHUB_EVENT_PATH`) as an `Event`; `name` the event
    name (`$GITHUB_EVENT_NAME`), else inferred from the payload's shape."""
    from governance.core.jsonsafe import JsonBoundError, loads

    if len(data) > MAX_EVENT_BYTES:
        raise UsageError(
            f"event file: {len(data)} bytes, over the {MAX_EVENT_BYTES}-byte bound",
            "pass the event GitHub wrote ($GITHUB_EVENT_PATH)",
        )
    try:
        payload = loads(data)
    except JsonBoundError as exc:
        raise UsageError(
            f"event file: not JSON gov reads: {exc}", "pass $GITHUB_EVENT_PATH"
        ) from exc
    if not isinstance(payload, dict):
        raise UsageError("event file: not a JSON object", "pass $GITHUB_EVENT_PATH")
    return event_from_payload(payload, name)


def event_from_payload(payload: dict[str, Any], name: str | None) -> Event:
    """The parsed payload as an `Event` (`name`: the event name, else
    inferred: a `pull_request` object, else a `ref` for a push)."""
    if name is None:
        name = "pull_request" if "pull_request" in payload else "push" if "ref" in payload else ""
    if not name or not _name(name):
        raise UsageError("event name unknown", "pass --event-name (e.g. pull_request)")
    if name == "push":
        return Event(name, ref=_text(payload, "ref"))
    if name != "pull_request":
        return Event(name)
    pull = _object(payload, "pull_request")
    labels = _list(pull, "pull_request.labels", "labels")
    repo = _text(_object(payload, "repository"), "full_name", "repository.full_name")
    head = _object(pull, "head", "pull_request.head")
    head_repo = head.get("repo")
    if head_repo is not None and not isinstance(head_repo, dict):
        raise _type("pull_request.head.repo", "an object or null", head_repo)
    own = head_repo is not None and head_repo.get("full_name") == repo
    label = payload.get("label")
    if label is not None:
        label = _text(_object(payload, "label"), "name", "label.name")
    number = pull.get("number")
    return Event(
        name,
        action=_text(payload, "action"),
        base_branch=_text(
            _object(pull, "base", "pull_request.base"), "ref", "pull_request.base.ref"
        ),
        head_sha=_sha(head.get("sha")),
        draft=_bool(pull, "draft", "pull_request.draft"),
        fork=not own,
        label=label,
        labels=tuple(
            _text(item, "name", f"pull_request.labels[{i}].name")
            if isinstance(item, dict)
            else _fail_type(f"pull_request.labels[{i}]", "an object", item)
            for i, item in enumerate(labels)
        ),
        number=number if isinstance(number, int) and not isinstance(number, bool) else None,
    )


def _type(where: str, expected: str, value: Any) -> UsageError:
    kind = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )
    return UsageError(
        f"event file: `{where}` must be {expected}, not {kind}", "pass $GITHUB_EVENT_PATH"
    )


def _fail_type(where: str, expected: str, value: Any) -> str:
    raise _type(where, expected, value)


def _object(data: dict[str, Any], key: str, where: str | None = None) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise _type(where or key, "an object", value)
    return value


def _list(data: dict[str, Any], where: str, key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise _type(where, "an array", value)
    if len(value) > MAX_LABELS:
        raise UsageError(f"event file: `{where}`: {len(value)} items, over {MAX_LABELS}", "")
    return value


def _text(data: dict[str, Any], key: str, where: str | None = None) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _type(where or key, "a string", value)
    if len(value) > MAX_NAME:
        raise UsageError(f"event file: `{where or key}` is over {MAX_NAME} characters", "")
    return value


def _bool(data: dict[str, Any], key: str, where: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise _type(where, "true or false", value)
    return value


def _sha(value: Any) -> str:
    if value is None:
        return ""
    if not (isinstance(value, str) and len(value) in (40, 64) and _hex(value)):
        raise _type("pull_request.head.sha", "a commit id (hex)", value)
    return value


def _hex(text: str) -> bool:
    return all(ch in "0123456789abcdef" for ch in text)


def _name(text: str) -> bool:
    return 0 < len(text) <= 64 and all(ch.isascii() and (ch.isalnum() or ch == "_") for ch in text)
