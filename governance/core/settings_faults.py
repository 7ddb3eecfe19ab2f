"""Settings files that gov could not load, as a located finding (GOV802).

The gate reads its settings from the base, so a change's own `.gov.toml` is
never used to judge that change. Yet once it lands it is the base of every
later change: a file gov cannot load (`ignore = ["GOV101"]`, a bad path, a
TOML syntax error) would stop every later `gov check`, `gov pr open` and
`prepare-merge` with exit 2. So the head's settings files must load on their
own (`settings.file_settings`), and when they do not the change fails at the
file's line with the loader's reason.

    fault = settings_fault(read)   # read(name) -> bytes | None, the head's files
"""

from __future__ import annotations

import re

from governance.core.codes import violation
from governance.core.diagnostics import UsageError, Violation
from governance.core.settings import (
    SETTINGS_FILES,
    FileReader,
    file_settings,
    settings_tables,
    value_fault,
)

_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")
_HEADER = re.compile(r"^\s*\[")


def settings_fault(read: FileReader) -> Violation | None:
    """GOV802 when the settings files `read` gives do not load, else None."""
    try:
        file_settings(read)
    except UsageError as exc:
        path, line, column = _locate(_quiet(read), exc.message)
        return violation(
            "GOV802",
            f"the settings do not load: {exc.message}; once this change lands every later "
            "check would stop (exit 2)",
            path,
            line,
            column,
            hint=exc.hint or "fix the settings file so that gov can read it",
        )
    return None


def _quiet(read: FileReader) -> FileReader:
    """`read`, with a file gov refuses to read (a symlink) counted as absent."""

    def safe(name: str) -> bytes | None:
        try:
            return read(name)
        except UsageError:
            return None

    return safe


def _only(read: FileReader, name: str) -> FileReader:
    def one(wanted: str) -> bytes | None:
        return read(wanted) if wanted == name else None

    return one


def _locate(read: FileReader, message: str) -> tuple[str, int, int]:
    """(file, line, column) the loader's `message` points at: the TOML
    error's position, else the line that sets the first key that does not
    load on its own (`link-template` for a template the placeholders break)."""
    present = [name for name in SETTINGS_FILES if read(name) is not None]
    named = [name for name in present if f"{name}:" in message]
    path = (named or present or [SETTINGS_FILES[-1]])[-1]
    data = read(path) or b""
    if at := _TOML_AT.search(message):
        return path, int(at[1]), int(at[2])
    if "(at end of document)" in message:
        return path, max(data.count(b"\n"), 1), 1
    for name in reversed(present):
        try:
            values, _found = settings_tables(_only(read, name), "")
        except UsageError:
            continue
        bad = [key for key, value in values.items() if value_fault(key, value) is not None]
        for key in bad or (["link-template"] if "link-template" in values else []):
            line = _key_line(read(name) or b"", key, name == "pyproject.toml")
            if line:
                return name, line, 1
    return path, 1, 1


def _key_line(data: bytes, key: str, in_tool_gov: bool) -> int:
    """1-based line that sets `key` (or opens its `[tool.gov.key]` table), 0 if none."""
    text = data.decode("utf-8", "replace")
    inside = not in_tool_gov
    assign = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    table = re.compile(rf"^\s*\[\s*(?:tool\.gov\.)?{re.escape(key)}\s*\]")
    for number, line in enumerate(text.splitlines(), 1):
        if _HEADER.match(line):
            if table.match(line):
                return number
            stripped = line.strip()
            if in_tool_gov:
                inside = stripped == "[tool.gov]"
            continue
        if inside and assign.match(line):
            return number
    return 0
