"""Plain names in master configs and the runner file (docs/rules.md, 'Plain names').

Pure: the names and their positions in, located Violations out. GOV519 for a
master-config key or a name that picks a row's script, GOV523 for a runner
label, each naming the ASCII name it imitates when there is one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from governance.core.diagnostics import Violation
from governance.core.plain import lookalike, name_column, not_plain

# The fields whose values choose a row's launch script (docs/sweeps.md).
SELECTING_FIELDS = ("runner", "model-prefix", "precision", "framework")


def line_text(text: str, line: int) -> str:
    """The text of 1-based line `line` ("" when out of range)."""
    lines = text.split("\n", line)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def foreign_keys(
    path: str,
    text: str,
    keys: Iterable[str],
    key_lines: Mapping[str, tuple[int, int]],
    plain: Sequence[str],
) -> list[Violation]:
    """GOV519 for each top-level key of one master file that is not ASCII."""
    found: list[Violation] = []
    for key in keys:
        if key.isascii():
            continue
        line, column = key_lines.get(key, (0, 0))
        start = name_column(line_text(text, line), key, column) if line else 0
        imitated = lookalike(key, plain)
        hint = (
            f"rename it in plain ASCII; to change `{imitated}`, edit that key's own block"
            if imitated
            else ""
        )
        found.append(
            not_plain(
                "GOV519",
                "master config key",
                key,
                path,
                line,
                start,
                [imitated] if imitated else (),
                hint=hint,
            )
        )
    return found


def foreign_values(
    key: str,
    raw: Any,
    text: str,
    locate: Callable[[str], tuple[str, int, int]],
    labels: Callable[[], Sequence[str]],
) -> list[Violation]:
    """GOV523 for a config's runner label, GOV519 for another name that
    picks the row's script (model-prefix, precision, framework), when not
    ASCII. `locate(field)` is the (path, line, column) of the field's key,
    `labels()` the runner file's labels (asked only for a runner)."""
    if not isinstance(raw, dict):
        return []
    found: list[Violation] = []
    for name in SELECTING_FIELDS:
        value = raw.get(name)
        if not isinstance(value, str) or value.isascii():
            continue
        path, line, column = locate(name)
        start = name_column(line_text(text, line), value, column + len(name)) if line else 0
        if name == "runner":
            imitated = lookalike(value, labels())
            code, noun = "GOV523", f"config '{key}': runner label"
        else:
            imitated, code, noun = None, "GOV519", f"config '{key}': {name}"
        found.append(
            not_plain(code, noun, value, path, line, start, [imitated] if imitated else ())
        )
    return found


def foreign_labels(
    text: str,
    path: str,
    sections: Mapping[str, Iterable[str]],
    where: Callable[..., tuple[int, int]],
) -> list[Violation]:
    """GOV523 for each runner-file label (keys of `labels`, `hardware`) that is not ASCII."""
    plain = [label for label in sections.get("labels", ()) if label.isascii()]
    found = []
    for section, names in sections.items():
        for label in names:
            if label.isascii():
                continue
            line, column = where(section, label)
            start = name_column(line_text(text, line), label, column) if line else 0
            imitated = lookalike(label, plain)
            found.append(
                not_plain(
                    "GOV523",
                    "runner label",
                    label,
                    path,
                    line,
                    start,
                    [imitated] if imitated else (),
                )
            )
    return found
