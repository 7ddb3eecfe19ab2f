"""Byte layout rules: the three byte regimes and gov's stricter whitespace
rules on appended entries (docs/rules.md, 'Byte regimes').

Pure: bytes and entry spans in, violations out. The entry comparison
decides how many additions and corrections there are; these rules check that
the bytes say the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from governance.changelog.bounds import entry_starts
from governance.changelog.document import Changelog, Entry
from governance.core.codes import violation
from governance.core.diagnostics import Violation, line_col
from governance.core.plain import BIDI_CONTROLS, describe, hidden_controls

# -- byte regimes -----------------------------------------------------------------


def byte_rules(
    base: bytes, head: bytes, path: str, additions: int, corrections: int
) -> list[Violation]:
    """Exactly one regime applies (appends, corrections only, or none)."""

    def at(code: str, message: str, offset: int, hint: str) -> Violation:
        line, column = line_col(head, offset)
        return violation(code, message, path, line, column, hint)

    if additions:
        if not head.startswith(base):
            offset = first_byte_difference(base, head)
            return [
                at(
                    "GOV304",
                    "appended entries changed historical bytes"
                    + (" (the historical file was truncated)" if offset >= len(head) else ""),
                    min(offset, max(len(head) - 1, 0)),
                    "restore the base file byte-for-byte and append at the end "
                    "(git checkout <base> -- perf-changelog.yaml)",
                )
            ]
        problems = []
        suffix = head[len(base) :]
        lead = b"- config-keys:" if base.endswith(b"\n\n") else b"\n- config-keys:"
        if base and not suffix.startswith(lead):
            problems.append(_history_separator(base, at))
        starts = entry_starts(head)[-additions:]
        for start in starts[1:]:
            before = head[:start]
            if not before.endswith(b"\n\n") or before.endswith(b"\n\n\n"):
                problems.append(_entry_separator(head, start, at))
        if head.endswith(b"\n\n"):
            problems.append(
                at(
                    "GOV307",
                    "the final appended entry must end with one newline",
                    len(head) - 1,
                    "delete the empty line(s) at the end of the file",
                )
            )
        return problems
    if corrections:
        return _correction_bytes(base, head, corrections, path)
    if base != head:
        offset = first_byte_difference(base, head)
        return [
            at(
                "GOV311",
                "the changelog changed without an appended entry or pr-link correction; "
                "historical whitespace and formatting are immutable",
                min(offset, max(len(head) - 1, 0)),
                "restore the base file (git checkout <base> -- perf-changelog.yaml)",
            )
        ]
    return []


def _history_separator(base: bytes, at: Callable[[str, str, int, str], Violation]) -> Violation:
    """GOV305, at the end of history (where the empty line belongs); when
    history's own last line holds only whitespace, the hint says so: that line
    is history's and stays, so the empty line goes after it."""
    last = base[base.rstrip(b"\n").rfind(b"\n") + 1 :].rstrip(b"\n")
    message = "new entries must be separated from history by exactly one empty line"
    hint = "leave one empty line after the last historical entry, then `- config-keys:`"
    if last and not last.strip():
        line = base.count(b"\n")
        message += f" (line {line}, history's last line, holds only whitespace)"
        hint = (
            f"keep line {line} as it is (history is byte-exact) and add one empty line after "
            "it, before `- config-keys:` (`gov check --fix` does it)"
        )
    return at("GOV305", message, max(len(base) - 1, 0), hint)


def _entry_separator(
    head: bytes, start: int, at: Callable[[str, str, int, str], Violation]
) -> Violation:
    """GOV306, one finding per separator: at the whitespace of a separator line
    that holds some (the stricter GOV313 does not repeat it), else before the entry."""
    end = start  # walk back over the separator lines (those holding only whitespace)
    spaced = -1
    while end > 0:
        line_start = head.rfind(b"\n", 0, end - 1) + 1
        text = head[line_start : end - 1]
        if text.strip():
            break
        if text:
            spaced = line_start
        end = line_start
    if spaced >= 0:
        line = head.count(b"\n", 0, spaced) + 1
        return at(
            "GOV306",
            f"appended entries must have exactly one empty separator line (line {line} "
            "holds only whitespace)",
            spaced,
            f"delete the spaces on line {line} (`gov check --fix` does it)",
        )
    return at(
        "GOV306",
        "appended entries must have exactly one empty separator line",
        max(start - 1, 0),
        "leave exactly one empty line between appended entries",
    )


def first_byte_difference(a: bytes, b: bytes) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def _correction_bytes(base: bytes, head: bytes, corrections: int, path: str) -> list[Violation]:
    old_lines = base.decode("utf-8").splitlines(keepends=True)
    new_lines = head.decode("utf-8").splitlines(keepends=True)
    if len(old_lines) != len(new_lines):
        line = next(
            (k + 1 for k, (x, y) in enumerate(zip(old_lines, new_lines, strict=False)) if x != y),
            min(len(old_lines), len(new_lines)) + 1,
        )
        return [
            violation(
                "GOV308",
                f"pr-link corrections may not add or delete lines "
                f"(base has {len(old_lines)} lines, head {len(new_lines)})",
                path,
                line,
                1,
                "change only the value on the `  pr-link:` line",
            )
        ]
    changed = 0
    for number, (x, y) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if x == y:
            continue
        if not (x.startswith("  pr-link:") and y.startswith("  pr-link:") and y.endswith("\n")):
            return [
                violation(
                    "GOV309",
                    f"historical bytes changed outside a pr-link line at line {number}",
                    path,
                    number,
                    1,
                    "restore this line; a correction changes only `  pr-link:` lines",
                )
            ]
        changed += 1
    if changed != corrections:
        return [
            violation(
                "GOV310",
                f"expected {corrections} changed pr-link line(s), found {changed}",
                path,
                1,
                1,
                "write each corrected link on its `  pr-link:` line",
            )
        ]
    return []


# -- stricter whitespace rules on appended entries (GOV312-GOV314) ---------------


def appended_whitespace(new: Changelog, additions: Sequence[Entry]) -> list[Violation]:
    data, path = new.data, new.path
    found: list[Violation] = []
    for position, entry in enumerate(additions):
        offset = entry.start
        for line in data[entry.start : entry.content_end].split(b"\n")[:-1]:
            stripped = line.rstrip(b" ")
            if not stripped:
                found.append(
                    _ws(
                        "GOV313",
                        data,
                        path,
                        offset,
                        f"an empty or whitespace-only line inside entry {entry.index}",
                        "delete the line",
                    )
                )
            elif stripped != line:
                found.append(
                    _ws(
                        "GOV312",
                        data,
                        path,
                        offset + len(stripped),
                        f"trailing whitespace in entry {entry.index}",
                        "delete the trailing spaces",
                    )
                )
            offset += len(line) + 1
        gap = data[entry.content_end : entry.end]
        last = position == len(additions) - 1
        if last and gap and gap != b"\n" and not data.endswith(b"\n\n"):
            found.append(
                _ws(
                    "GOV314",
                    data,
                    path,
                    entry.content_end,
                    "whitespace after the last appended entry",
                    "end the file right after the entry's last line",
                )
            )
        # A whitespace-only line between appended entries is GOV306's (one
        # finding per fault), not this rule's too.
    return found


def _ws(code: str, data: bytes, path: str, offset: int, message: str, hint: str) -> Violation:
    line, column = line_col(data, offset)
    return violation(code, message, path, line, column, hint)


# -- hidden characters (a warning) -------------------------------------------------


def hidden_characters(new: Changelog, additions: Sequence[Entry]) -> list[Violation]:
    """GOV209 warnings: raw bidirectional controls and zero-width characters
    in appended entries, one per line, at the first of them. Descriptions
    keep their Unicode; these characters only make a line render other than
    it reads (the config keys' own rule, GOV503, refuses any non-ASCII key)."""
    data, path = new.data, new.path
    found: list[Violation] = []
    for entry in additions:
        block = data[entry.start : entry.content_end]
        if block.isascii():
            continue
        offset = entry.start
        for raw in block.split(b"\n"):
            text = raw.decode("utf-8", "replace")
            hidden = hidden_controls(text, start=offset)
            if hidden:
                first = offset + len(text[: hidden[0][0]].encode("utf-8"))
                names = ", ".join(dict.fromkeys(describe(char) for _, char in hidden))
                kind = (
                    "bidirectional control"
                    if any(char in BIDI_CONTROLS for _, char in hidden)
                    else "zero-width character"
                )
                line, column = line_col(data, first)
                found.append(
                    violation(
                        "GOV209",
                        f"entry {entry.index}: a raw {kind} ({names}) makes this line "
                        "render other than it reads",
                        path,
                        line,
                        column,
                        "delete it; if it is meant, write it escaped (`\\u202e`) "
                        "in a double-quoted string",
                    )
                )
            offset += len(raw) + 1
    return found
