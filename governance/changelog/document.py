"""Bytes -> Changelog: entries with their byte spans, lines and parsed values.

Parsing follows docs/rules.md, 'Reading one version of the file' (file
invariants, in order, and entry spans).
Each entry's span is parsed as its own small YAML document. For a valid file
that is the same as parsing the whole file, and it makes two things cheap:
locating a fault (the line offset is known) and re-parsing history (an entry
whose bytes did not change is served from a cache).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from governance.changelog import bounds as limits
from governance.changelog.bounds import MAX_CHANGELOG_BYTES, entry_starts
from governance.changelog.entries import Changelog, Entry
from governance.changelog.entry_schema import schema_violations
from governance.changelog.positions import locate
from governance.core.codes import violation
from governance.core.diagnostics import Violation, line_col
from governance.core.yamlsafe import YamlLoadError, load

_ENTRY_PREFIX = "- config-keys:"


@dataclass(frozen=True, slots=True)
class ParseResult:
    changelog: Changelog | None  # None when the file is unusable
    violations: tuple[Violation, ...]

    @property
    def ok(self) -> bool:
        return not self.violations


# What str.splitlines breaks lines at besides `\n`.
_OTHER_LINE_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def entry_lines(text: str) -> int:
    """How many of `text.splitlines()` start with `- config-keys:`. With `\n`
    the only line break (the usual file), that is the marker at the start and
    after each `\n`, counted without splitting the file into lines."""
    if not any(char in text for char in _OTHER_LINE_BREAKS):
        return text.count("\n" + _ENTRY_PREFIX) + text.startswith(_ENTRY_PREFIX)
    return sum(1 for line in text.splitlines() if line.startswith(_ENTRY_PREFIX))


def content_end(data: bytes, start: int, end: int) -> int:
    """Drop whole trailing lines made only of spaces, tabs, CR and LF."""
    pos = end
    while pos > start:
        line_begin = data.rfind(b"\n", start, pos - 1) + 1
        if line_begin <= start:
            break
        if data[line_begin:pos].strip(b" \t\r\n"):
            break
        pos = line_begin
    return pos


@lru_cache(maxsize=16)
def parse(data: bytes, path: str, *, source: str = "head", trusted_prefix: int = 0) -> ParseResult:
    """Apply the file invariants (docs/rules.md) and split the file into entries.

    Memoized: the same snapshot is checked in several modes (audit: main and
    PR mode; merge: resolve, then canonicalize, then check), and the result
    is immutable data.

    Entries that start before `trusted_prefix` are located but not parsed
    (their `raw` is None): the caller vouches that those bytes were validated
    before (the append-only fast path). Byte invariants always cover the
    whole file: they are cheap scans.
    """

    def fail(code: str, message: str, offset: int | None, hint: str) -> Violation:
        line, column = line_col(data, offset) if offset is not None else (0, 0)
        return violation(code, message, path, line, column, hint, source=source)

    if len(data) > MAX_CHANGELOG_BYTES:
        return ParseResult(
            None,
            (
                fail(
                    "GOV111",
                    f"file is {len(data):,} bytes; gov parses at most {MAX_CHANGELOG_BYTES:,}",
                    MAX_CHANGELOG_BYTES,
                    "a changelog this large is almost certainly not a changelog; restore it",
                ),
            ),
        )
    found = _byte_faults(data, fail)
    if any(v.code == "GOV105" for v in found):
        return ParseResult(None, tuple(found))
    text = data.decode("utf-8")
    starts = entry_starts(data)
    too_big = limits.file_faults(data, starts, fail)
    if too_big is not None:
        return ParseResult(None, (*found, too_big))
    structural = _parse_entries(data, text, starts, path, source, trusted_prefix)
    if isinstance(structural, list):
        return ParseResult(None, (*found, *structural))
    if found:
        return ParseResult(None, tuple(found))
    return ParseResult(structural, ())


def _byte_faults(
    data: bytes, fail: Callable[[str, str, int | None, str], Violation]
) -> list[Violation]:
    """The byte invariants (GOV101-GOV105, GOV114), each located at its first occurrence."""
    faults: list[Violation] = []
    if not data.endswith(b"\n"):
        faults.append(
            fail(
                "GOV101",
                "file does not end with a newline",
                len(data),
                "add a single newline after the last line",
            )
        )
    for byte, code, what, hint in (
        (
            b"\r",
            "GOV102",
            "carriage return (CRLF line ending)",
            "save the file with LF line endings",
        ),
        (b"\t", "GOV103", "tab character", "indent with spaces; write \\t escapes as spaces"),
        (b"\0", "GOV104", "NUL byte", "remove the NUL byte (the file was probably corrupted)"),
    ):
        first = data.find(byte)
        if first >= 0:
            count = data.count(byte)
            more = f" ({count} in the file)" if count > 1 else ""
            faults.append(fail(code, f"file contains a {what}{more}", first, hint))
    separator = limits.separator_fault(data, fail)
    if separator is not None:
        faults.append(separator)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        faults.append(
            fail(
                "GOV105",
                f"file is not UTF-8: {exc.reason} (byte 0x{data[exc.start]:02x})",
                exc.start,
                "re-save the file as UTF-8",
            )
        )
    return faults


def _parse_entries(
    data: bytes, text: str, starts: list[int], path: str, source: str, trusted_prefix: int
) -> Changelog | list[Violation]:
    """The YAML and entry invariants on the decoded text; returns violations on failure."""
    problems: list[Violation] = []

    def at(code: str, message: str, line: int, column: int, hint: str) -> Violation:
        return violation(code, message, path, line, column, hint, source=source)

    # Content before the first entry must be empty YAML (comments, blank lines).
    prefix_end = starts[0] if starts else len(data)
    prefix: _Loaded | Violation
    if trusted_prefix and starts and prefix_end < trusted_prefix:
        prefix = _Loaded(None)
    else:
        prefix = _load_block(data[:prefix_end].decode("utf-8"), 0, path, source)
    if isinstance(prefix, Violation):
        return [prefix]
    if not starts:
        if prefix.value is None or not isinstance(prefix.value, list):
            return [
                at(
                    "GOV108",
                    "the changelog root must be a YAML list of entries",
                    1,
                    1,
                    "start each entry with `- config-keys:` at column 0 (an empty changelog is `[]`)",
                )
            ]
        if prefix.value:
            return [_count_mismatch(data, 0, len(data), path, source, lines=0)]
        return Changelog(path, data, ())
    if prefix.value is not None:
        return [
            at(
                "GOV108" if not isinstance(prefix.value, list) else "GOV109",
                "content before the first `- config-keys:` entry is not part of the entry list",
                1,
                1,
                "remove it, or start it with `- config-keys:` at column 0",
            )
        ]

    # The entry count (GOV109) counts lines the way str.splitlines splits them; the byte
    # spans use `\n` only. Both must agree or entries cannot be located.
    counted = entry_lines(text)
    if counted != len(starts):
        problems.append(
            at(
                "GOV109",
                f"{counted} lines start with `- config-keys:` but {len(starts)} entries were located",
                1,
                1,
                "use `\\n` line breaks only (no vertical tabs, form feeds or Unicode line separators)",
            )
        )
        return problems

    entries: list[Entry] = []
    bounds = [*starts, len(data)]
    line, counted_to = 1, 0
    for index, (start, end) in enumerate(itertools.pairwise(bounds), start=1):
        line += data.count(b"\n", counted_to, start)  # incremental: O(file), not O(entries*file)
        counted_to = start
        if start < trusted_prefix:
            entries.append(Entry(index, start, content_end(data, start, end), end, line, None))
            continue
        too_big = limits.entry_fault(
            data, start, end, index, lambda *a: _fail_at(data, path, source, *a)
        )
        if too_big is not None:
            problems.append(too_big)
            continue
        loaded = _load_block(data[start:end].decode("utf-8"), line - 1, path, source)
        if isinstance(loaded, Violation):
            problems.append(loaded)
            continue
        items = loaded.value
        if not isinstance(items, list) or len(items) != 1:
            problems.append(_count_mismatch(data, start, end, path, source, lines=1))
            continue
        raw = items[0]
        if not isinstance(raw, dict):
            problems.append(
                at("GOV110", f"entry {index} is not a mapping", line, 1, "write `key: value` pairs")
            )
            continue
        entry = Entry(index, start, content_end(data, start, end), end, line, raw)
        too_long = _description_fault(data, entry, path, source)
        if too_long is not None:
            problems.append(too_long)
            continue
        entries.append(entry)
    if problems:
        return problems
    changelog = Changelog(path, data, tuple(entries))
    schema = [
        v
        for entry in entries
        if entry.raw is not None
        for v in schema_violations(changelog, entry, source)
    ]
    return schema or changelog


def _fail_at(
    data: bytes, path: str, source: str, code: str, message: str, offset: int, hint: str
) -> Violation:
    line, column = line_col(data, offset)
    return violation(code, message, path, line, column, hint, source=source)


def _description_fault(data: bytes, entry: Entry, path: str, source: str) -> Violation | None:
    description = entry.raw.get("description")
    message = limits.description_fault(len(description)) if isinstance(description, list) else None
    if message is None:
        return None
    changelog = Changelog(path, data, (entry,))
    line, column = locate(changelog, entry, ("description", limits.MAX_DESCRIPTION_LINES))
    return violation(
        "GOV116",
        f"entry {entry.index}: {message}",
        path,
        line,
        column,
        "describe the change in a few lines; put long notes in the PR description",
        source=source,
    )


@dataclass(frozen=True, slots=True)
class _Loaded:
    value: Any


@lru_cache(maxsize=8192)
def _load_cached(text: str) -> _Loaded | tuple[str, str, int, int]:
    try:
        return _Loaded(load(text, strict=True))
    except YamlLoadError as exc:
        p = exc.problem
        return (p.kind, p.message, p.line, p.column)


_YAML_CODES = {
    "yaml-syntax": "GOV106",
    "duplicate-key": "GOV107",
    "too-large": "GOV111",
    "yaml-alias": "GOV112",
    "yaml-tag": "GOV113",
    "too-deep": "GOV115",
    "yaml-anchor": "GOV117",
}
_YAML_HINTS = {
    "yaml-syntax": "fix the YAML syntax at this position (quote strings that contain `: ` or `#`)",
    "duplicate-key": "keep one of the two keys; put every description line in one list",
    "yaml-alias": "write the values out instead of using anchors and aliases",
    "yaml-tag": "remove the `!tag`; entries hold plain strings, lists and booleans",
    "too-large": "split the input",
    "too-deep": "entries hold flat strings, lists and booleans; remove the nesting",
    "yaml-anchor": "write the value out as plain YAML: no `!!tag`, `&anchor`, `*alias` or `<<`",
}


def _load_block(text: str, line_offset: int, path: str, source: str) -> _Loaded | Violation:
    """Parse one entry span (cached by its text: unchanged history parses once)."""
    result = _load_cached(text)
    if isinstance(result, _Loaded):
        return result
    kind, message, line, column = result
    # A fault at the end of the input (an unclosed quote in a file without a
    # final newline) is reported at the last line, not one past it.
    last = text.count("\n") + 1  # the empty line after a final newline counts
    if line > last:
        line, column = last, len(text.rsplit("\n", 1)[-1]) + 1
    return violation(
        _YAML_CODES[kind],
        f"invalid YAML: {message}",
        path,
        line + line_offset,
        column,
        _YAML_HINTS[kind],
        source=source,
    )


def _count_mismatch(
    data: bytes, start: int, end: int, path: str, source: str, *, lines: int
) -> Violation:
    """Point at the first column-0 list item that is not a `- config-keys:` line."""
    pos = start + (1 if lines else 0)
    while True:
        pos = data.find(b"\n-", pos, end)
        if pos < 0:
            offset = start
            break
        candidate = pos + 1
        if not data.startswith(b"- config-keys:", candidate):
            offset = candidate
            break
        pos = candidate
    line, column = line_col(data, offset)
    return violation(
        "GOV109",
        "top-level list item does not start with `- config-keys:`",
        path,
        line,
        column,
        "every entry starts with `- config-keys:` at column 0; indent nested lists",
        source=source,
    )
