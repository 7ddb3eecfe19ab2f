"""The changelog's size bounds, checked on bytes before any YAML is parsed.

Every reader of changelog bytes (check, plan, the merge edits) applies them
first, so no input makes gov spend more than a bounded amount of time or
memory before it answers with a located finding. The numbers, and how far
the real InferenceX changelog is from each, are in docs/security.md
("Bounds"); generic YAML bounds (depth, tags, aliases) live in
`governance.core.yamlsafe`.

Line separators other than `\\n` (U+2028, U+2029, NEL, VT, FF, FS/GS/RS) are
refused outright: Python's `str.splitlines` and YAML break lines on some of
them and `\\n`-based byte spans do not, so one file would say different
things to different readers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from governance.core.diagnostics import Violation

MAX_CHANGELOG_BYTES = 16 * 1024 * 1024  # GOV111
MAX_LINES = 200_000  # the whole file (InferenceX: ~6,400)
MAX_ENTRIES = 20_000  # entries in the file (InferenceX: ~770)
MAX_ENTRY_LINES = 1_000  # lines from one `- config-keys:` to the next (InferenceX: 60)
MAX_ENTRY_BYTES = 64 * 1024  # bytes of one entry (InferenceX: 6.5 KB)
MAX_DESCRIPTION_LINES = 200  # items of one entry's description (InferenceX: < 60)

# Every character `str.splitlines` breaks on, except `\n` and `\r` (GOV102).
LINE_SEPARATORS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_SEPARATOR = re.compile("[" + LINE_SEPARATORS + "]")
_SEPARATOR_BYTES = re.compile(b"|".join(re.escape(c.encode()) for c in LINE_SEPARATORS))

# (code, message, byte offset, hint) -> Violation
Fail = Callable[[str, str, int, str], Violation]


def separator_fault(data: bytes, fail: Fail) -> Violation | None:
    """GOV114 at the first line separator that is not `\\n`."""
    match = _SEPARATOR_BYTES.search(data)
    if match is None:
        return None
    char = match.group().decode("utf-8", "replace")
    count = len(_SEPARATOR_BYTES.findall(data))
    more = f" ({count} in the file)" if count > 1 else ""
    return fail(
        "GOV114",
        f"file contains U+{ord(char):04X}, a line break other than `\\n`{more}",
        match.start(),
        "remove it: only `\\n` ends a line in the changelog (YAML and Python read "
        "this character as a line break, git and gov's byte spans do not)",
    )


def file_faults(data: bytes, starts: list[int], fail: Fail) -> Violation | None:
    """GOV116 when the whole file has too many lines or entries."""
    lines = data.count(b"\n")
    if lines > MAX_LINES:
        offset = _nth_newline(data, MAX_LINES) + 1
        return fail(
            "GOV116",
            f"file has {lines:,} lines; gov reads at most {MAX_LINES:,}",
            offset,
            "a changelog this long is almost certainly not a changelog; restore it",
        )
    if len(starts) > MAX_ENTRIES:
        return fail(
            "GOV116",
            f"file has {len(starts):,} entries; gov reads at most {MAX_ENTRIES:,}",
            starts[MAX_ENTRIES],
            "restore the base file and append only the entries this change needs",
        )
    return None


def entry_fault(data: bytes, start: int, end: int, index: int, fail: Fail) -> Violation | None:
    """GOV116 when one entry span is too long, located where it crosses the bound."""
    size = end - start
    if size > MAX_ENTRY_BYTES:
        return fail(
            "GOV116",
            f"entry {index} is {size:,} bytes; an entry has at most {MAX_ENTRY_BYTES:,}",
            start + MAX_ENTRY_BYTES,
            "describe the change in a few lines; put long notes in the PR description",
        )
    lines = data.count(b"\n", start, end)
    if lines > MAX_ENTRY_LINES:
        offset = _nth_newline(data, MAX_ENTRY_LINES, start) + 1
        return fail(
            "GOV116",
            f"entry {index} has {lines:,} lines; an entry has at most {MAX_ENTRY_LINES:,}",
            offset,
            "describe the change in a few lines; put long notes in the PR description",
        )
    return None


def description_fault(count: int) -> str | None:
    """The message when a description has too many items."""
    if count <= MAX_DESCRIPTION_LINES:
        return None
    return f"description has {count:,} lines; at most {MAX_DESCRIPTION_LINES:,}"


def text_separator(text: str) -> int:
    """Index of the first non-`\\n` line separator in `text`, or -1."""
    match = _SEPARATOR.search(text)
    return match.start() if match else -1


def _nth_newline(data: bytes, n: int, start: int = 0) -> int:
    """Offset of the n-th `\\n` at or after `start` (n >= 1; it must exist)."""
    pos = start - 1
    for _ in range(n):
        pos = data.index(b"\n", pos + 1)
    return pos


# Where an entry begins: a `- config-keys:` line at column 1. Byte-level, so
# the plan's reader and the rules agree on entries without parsing YAML.
ENTRY_START = re.compile(rb"^- config-keys:[^\r\n]*\n", re.MULTILINE)


_MARKER = b"- config-keys:"


def entry_starts(data: bytes) -> list[int]:
    """Where `ENTRY_START` matches, found with `bytes.find` (the regex tries
    every offset; the hook runs this over the whole history at base and head):
    each `- config-keys:` at a line's start whose line ends in `\n` with no
    `\r` before it."""
    out: list[int] = []
    start = 0 if data.startswith(_MARKER) else _line_with_marker(data, 0)
    while start != -1:
        end = data.find(b"\n", start)
        if end == -1:  # the last line has no `\n`: the pattern needs one
            break
        if data.find(b"\r", start, end) == -1:
            out.append(start)
        start = _line_with_marker(data, end)
    return out


def _line_with_marker(data: bytes, pos: int) -> int:
    """The start of the first line after a `\n` at or after `pos` that begins
    with the marker, or -1."""
    found = data.find(b"\n" + _MARKER, pos)
    return found + 1 if found != -1 else -1
