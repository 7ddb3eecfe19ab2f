"""Entry schema faults as located violations (docs/rules.md, codes GOV2xx)."""

from __future__ import annotations

from governance.changelog.entries import Changelog, Entry
from governance.changelog.entry_fields import FIELD_ALIASES, plainly_valid
from governance.changelog.positions import locate
from governance.core import schema_faults
from governance.core.diagnostics import Violation
from governance.core.schema_faults import SchemaFault
from governance.core.suggest import did_you_mean

_SCHEMA_CODES = {
    "extra_forbidden": "GOV202",
    "missing": "GOV203",
    "too_short": "GOV205",
    "value_error": "GOV206",
}


def schema_violations(changelog: Changelog, entry: Entry, source: str = "head") -> list[Violation]:
    """The entry's schema faults, located inside the changelog. The model
    (and pydantic) is loaded only for an entry that is not plainly valid."""
    if plainly_valid(entry.raw):
        return []
    from pydantic import ValidationError

    from governance.changelog.model import ChangelogEntry

    try:
        ChangelogEntry.model_validate(entry.raw)
    except ValidationError as exc:
        return schema_faults.schema_violations(
            exc,
            code=lambda kind: _SCHEMA_CODES.get(kind, "GOV204"),
            locate=lambda loc: locate(changelog, entry, tuple(loc)),
            word=lambda fault: _word(entry, fault),
            path=changelog.path,
            source=source,
        )
    return []


def _word(entry: Entry, fault: SchemaFault) -> tuple[str, str]:
    field = str(fault.loc[0]) if fault.loc else ""
    message = _schema_message(fault.kind, fault.msg, field)
    return f"entry {entry.index}: {fault.where or 'entry'}: {message}", _schema_hint(
        fault.kind, field
    )


def _schema_message(kind: str, msg: str, field: str) -> str:
    if kind == "extra_forbidden":
        return f"unknown field {field!r}"
    if kind == "missing":
        return f"required field {field!r} is missing"
    return msg[0].lower() + msg[1:] if msg else kind


def _schema_hint(kind: str, field: str) -> str:
    if kind == "extra_forbidden":
        return did_you_mean(
            field.replace("_", "-"), FIELD_ALIASES, limit=1
        ) or "allowed fields: " + ", ".join(FIELD_ALIASES)
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
