"""Each setting's type: a value from a settings file or a `GOV_*` variable
coerced to a bool, a list, a table or a checked string (settings_values then
checks what the value means: paths, templates, patterns)."""

from __future__ import annotations

import re
from typing import Any

from governance.core.codes import ignorable_codes
from governance.core.diagnostics import UsageError
from governance.core.links import DEFAULT_REPOSITORY
from governance.core.settings_priority import parse_rules
from governance.core.settings_queue import parse_queue

# Settings by kind (field names); every other setting is a non-empty string.
LIST_KEYS = {
    "master_configs",
    "placeholders",
    "sweep_labels",
    "ignore",
    "former_repositories",
    "harness_inputs",
    "reuse_authorizers",
}
TABLE_KEYS = {"script_names", "sweep_gate"}
BOOL_KEYS = {
    "sweep_on_merge",
    "preflight_warnings_fail",
    "publish_on_merge",
    "reuse_requires_authorization",
}

_SLUG = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def coerce(name: str, key: str, value: Any, where: str) -> Any:
    """`value` (from a settings file or a `GOV_*` variable) as the type of
    setting `name` (`key` is how the user spelled it, for messages)."""
    if name == "sweep_gate":
        return _coerce_gate(key, value, where)
    if name in TABLE_KEYS:
        return _coerce_table(key, value, where)
    if name == "priority":
        return parse_rules(value, key, where)
    if name == "queue":
        return parse_queue(value, key, where)
    if name in BOOL_KEYS:
        if isinstance(value, str) and value.strip().lower() in ("true", "1", "false", "0"):
            value = value.strip().lower() in ("true", "1")
        if not isinstance(value, bool):
            raise UsageError(f"{where}: `{key}` must be true or false", f"e.g. {key} = true")
        return value
    if name in LIST_KEYS:
        if isinstance(value, str):  # from the environment: one rule for every list
            value = _list_from_text(key, value, where)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(
                f"{where}: `{key}` must be a list of strings", f'e.g. {key} = ["a", "b"]'
            )
        if name == "ignore":
            return ignorable_codes(value, where)
        if name == "reuse_authorizers":
            known = ("OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR",
                     "FIRST_TIMER", "MANNEQUIN", "NONE")  # fmt: skip
            unknown = [v for v in value if v.upper() not in known]
            if unknown:
                raise UsageError(
                    f"{where}: `{key}`: {', '.join(map(repr, unknown))} is no author association",
                    f"known: {', '.join(known)}",
                )
            return tuple(v.upper() for v in value)
        if name == "former_repositories":
            for slug in value:
                if not _SLUG.fullmatch(slug):
                    raise UsageError(
                        f"{where}: `{key}`: '{slug}' is not ORG/NAME",
                        f'e.g. {key} = ["InferenceMAX/InferenceMAX"]',
                    )
        return tuple(value)
    if name == "sweep_preflight":
        text = str(value).strip().lower() if isinstance(value, (str, bool)) else ""
        text = {"1": "true", "0": "false"}.get(text, text)
        if text not in ("auto", "true", "false"):
            raise UsageError(
                f"{where}: `{key}` must be auto, true or false", f'e.g. {key} = "auto"'
            )
        return text
    if name == "harness_change":
        text = value.strip().lower() if isinstance(value, str) else ""
        if text not in ("reuse", "rerun"):
            raise UsageError(f"{where}: `{key}` must be reuse or rerun", f'e.g. {key} = "rerun"')
        return text
    if name == "results_threshold":
        try:
            number = float(value) if isinstance(value, (str, int, float)) else -1.0
        except ValueError:
            number = -1.0
        if not 0 <= number < 1e6:
            raise UsageError(
                f"{where}: `{key}` must be a percentage (a number >= 0)", f"e.g. {key} = 5"
            )
        return str(number)
    if not isinstance(value, str) or not value:
        raise UsageError(f"{where}: `{key}` must be a non-empty string", f'e.g. {key} = "..."')
    if name == "repository" and not _SLUG.fullmatch(value):
        raise UsageError(
            f"{where}: `{key}`: '{value}' is not ORG/NAME", f'e.g. {key} = "{DEFAULT_REPOSITORY}"'
        )
    return value


def _list_from_text(key: str, text: str, where: str) -> list[str]:
    """A list written as text (a `GOV_*` variable): a TOML/JSON array of
    strings when it starts with `[`, else comma-separated values."""
    if not text.strip().startswith("["):
        return [part.strip() for part in text.split(",") if part.strip()]
    import tomllib

    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{where}: `{key}` is not an array of strings: {exc}",
            f'e.g. {key}=\'["a.yaml", "b.yaml"]\' or {key}=a.yaml,b.yaml',
        ) from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(
            f"{where}: `{key}` must be an array of strings", f'e.g. {key}=\'["a.yaml", "b.yaml"]\''
        )
    return value


def _json_text(value: Any) -> Any:
    """A table given as text (a `GOV_*` variable) read as JSON (None: not JSON)."""
    if not isinstance(value, str):
        return value
    import json

    try:
        return json.loads(value)
    except ValueError:
        return None


def _coerce_table(key: str, value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A TOML table of lists of strings (from the environment: the same as JSON)."""
    value = _json_text(value)
    example = f'e.g. [tool.gov.{key}] mi300x = ["single_node/{{scenario}}/{{model}}_x.sh"]'
    if not isinstance(value, dict) or not value:
        raise UsageError(f"{where}: `{key}` must be a table of lists of strings", example)
    out = []
    for glob, templates in value.items():
        if (
            not isinstance(templates, list)
            or not templates
            or not all(isinstance(t, str) and t for t in templates)
        ):
            raise UsageError(
                f"{where}: `{key}.{glob}` must be a non-empty list of strings", example
            )
        out.append((str(glob), tuple(templates)))
    return tuple(out)


def _coerce_gate(key: str, value: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The sweep gate's rules: lists of strings (empty allowed) and a `labels`
    table of label -> modifier words, flattened to `labels.<name>` rows."""
    from governance.core.sweep_gate import LABEL_PREFIX, GateRules

    value = _json_text(value)
    example = f'e.g. [tool.gov.{key}] drafts = ["skip"], [tool.gov.{key}.labels] run-it = ["sweep"]'
    if not isinstance(value, dict):
        raise UsageError(f"{where}: `{key}` must be a table", example)
    rows: list[tuple[str, tuple[str, ...]]] = []
    for rule, items in value.items():
        table = items if rule == "labels" and isinstance(items, dict) else {"": items}
        for label, words in table.items():
            name = f"{LABEL_PREFIX}{label}" if rule == "labels" else str(rule)
            if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
                raise UsageError(f"{where}: `{key}.{name}` must be a list of strings", example)
            rows.append((name, tuple(words)))
    try:
        GateRules.from_setting(rows)
    except ValueError as exc:
        raise UsageError(f"{where}: `{key}`: {exc}", example) from exc
    return tuple(rows)
