"""The changelog entry's fields and its plain case, without pydantic (pure).

Every door validates each entry it reads, and building the pydantic schema
(`model.ChangelogEntry`) costs a check about a tenth of a second before it
has read a byte. Nearly every real entry is plainly valid: kebab-case keys
of the right types, nothing combined that the schema forbids. `plainly_valid`
recognises exactly that case and nothing more; any other entry goes to the
pydantic model, which says what is wrong and where. It never accepts an
entry the model rejects (tests/changelog/test_entry_fields.py holds it to
the model on generated entries and on the corpus). `plain_entry` does the
same for an entry read by the round-trip loader.
"""

from __future__ import annotations

from typing import Any

# kebab-case key -> snake_case field name, for hints and the spelling rule
# (the model's aliases; a test keeps the two equal).
FIELD_ALIASES: dict[str, str] = {
    "config-keys": "config_keys",
    "description": "description",
    "pr-link": "pr_link",
    "evals-only": "evals_only",
    "all-evals": "all_evals",
    "append-only": "append_only",
    "eval-min-prefill-ep": "eval_min_prefill_ep",
    "scenario-type": "scenario_type",
}
SCENARIO_TYPES = ("fixed-seq-len", "agentic-coding")
_REQUIRED = ("config-keys", "description", "pr-link")
_SWITCHES = ("evals-only", "all-evals", "append-only")


def plain_entry(raw: Any) -> dict[str, Any] | None:
    """A plainly valid entry as exact builtins, or None. Accepts the
    round-trip loader's subclasses (commented maps and sequences, block
    strings, hex ints), which the model reads as their plain values."""
    if not isinstance(raw, dict) or not all(type(key) is str for key in raw):
        return None
    copy = {key: _plain_value(value) for key, value in raw.items()}
    return copy if plainly_valid(copy) else None


def _plain_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain_value(item) for item in value]
    if isinstance(value, str) and type(value) is not str:
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool) and type(value) is not int:
        return int(value)
    return value


def _texts(value: Any) -> bool:
    return type(value) is list and bool(value) and all(type(item) is str for item in value)


def plainly_valid(raw: Any) -> bool:
    """True only for an entry the model surely accepts as it is: a mapping
    of kebab-case keys, the required ones present, each value of exactly its
    type. False means "ask the model", not "invalid"."""
    if type(raw) is not dict or not all(key in raw for key in _REQUIRED):
        return False
    if not all(type(key) is str and key in FIELD_ALIASES for key in raw):
        return False
    if not (_texts(raw["config-keys"]) and _texts(raw["description"])):
        return False
    if type(raw["pr-link"]) is not str:
        return False
    if not all(type(raw.get(key, False)) is bool for key in _SWITCHES):
        return False
    prefill = raw.get("eval-min-prefill-ep")
    if prefill is not None and not (type(prefill) is int and prefill > 0):
        return False
    scenarios = raw.get("scenario-type")
    if scenarios is not None and not (
        _texts(scenarios) and all(item in SCENARIO_TYPES for item in scenarios)
    ):
        return False
    # The model's one rule across fields: append-only excludes eval selection.
    return not (
        raw.get("append-only")
        and (raw.get("evals-only") or raw.get("all-evals") or prefill is not None)
    )
