"""Entry schema faults as located violations (docs/rules.md, codes GOV2xx)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from governance.changelog.model import FIELD_ALIASES, ChangelogEntry
from governance.changelog.positions import locate
from governance.core.codes import violation
from governance.core.diagnostics import Violation

if TYPE_CHECKING:
    from governance.changelog.document import Changelog, Entry


_SCHEMA_CODES = {
    "extra_forbidden": "GOV202",
    "missing": "GOV203",
    "too_short": "GOV205",
    "value_error": "GOV206",
}


def _errors(raw: Any) -> list[tuple[tuple[Any, ...], str, str]]:
    """Schema errors of one entry as (loc, type, msg) triples."""
    try:
        ChangelogEntry.model_validate(raw)
    except ValidationError as exc:
        return [(tuple(e["loc"]), e["type"], e["msg"]) for e in exc.errors()]
    return []


def schema_violations(changelog: Changelog, entry: Entry, source: str = "head") -> list[Violation]:
    found: list[Violation] = []
    for loc, kind, msg in _errors(entry.raw):
        code = _SCHEMA_CODES.get(kind, "GOV204")
        field = str(loc[0]) if loc else ""
        line, column = locate(changelog, entry, loc)
        where = ".".join(str(part) for part in loc) or "entry"
        found.append(
            violation(
                code,
                f"entry {entry.index}: {where}: {_schema_message(kind, msg, field)}",
                changelog.path,
                line,
                column,
                _schema_hint(kind, field),
                source=source,
            )
        )
    return found


def _schema_message(kind: str, msg: str, field: str) -> str:
    if kind == "extra_forbidden":
        return f"unknown field {field!r}"
    if kind == "missing":
        return f"required field {field!r} is missing"
    return msg[0].lower() + msg[1:] if msg else kind


def _schema_hint(kind: str, field: str) -> str:
    if kind == "extra_forbidden":
        guess = difflib.get_close_matches(field.replace("_", "-"), list(FIELD_ALIASES), n=1)
        if guess:
            return f"did you mean `{guess[0]}`?"
        return "allowed fields: " + ", ".join(FIELD_ALIASES)
    if kind == "missing":
        example = {"pr-link": "pr-link: XXX", "description": 'description:\\n    - "what changed"'}
        return f"add `{example.get(field, field + ': ...')}`"
    if kind == "too_short":
        return "give at least one item"
    if kind == "value_error":
        return "drop append-only, or drop evals-only / all-evals / eval-min-prefill-ep"
    if field in ("config-keys", "description"):
        return "quote the item (unquoted yes/no/on/off, numbers and dates are not strings)"
    if field == "pr-link":
        return "write `pr-link: XXX` (or the PR link) on the same line"
    return "see the entry schema in schemas/changelog-entry.schema.json"
