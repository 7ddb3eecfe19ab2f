"""Bounded JSON reading for files a launched script wrote (result files, rows).

`json.loads` raises more than `JSONDecodeError` on hostile input: a
RecursionError past about 1,000 levels of nesting, a ValueError for an
integer over Python's 4,300-digit conversion limit, and a 400-digit integer
passes but overflows `float()` later. `loads` checks the bounds first (on
bytes) and raises one exception, `JsonBoundError`, located (1-based line and
column), for every way the text fails. The bounds are listed in
docs/security.md ("Bounds").
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 64  # nested arrays and objects
MAX_INT_DIGITS = 64  # digits of one integer literal
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")
_LONG_INT = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9]{%d,}' % (MAX_INT_DIGITS + 1))


class JsonBoundError(ValueError):
    """JSON that is malformed or crosses a bound; `line`, `column` say where."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(f"{message} at line {line} column {column}")
        self.reason = message
        self.line = line
        self.column = column


def _at(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def _too_deep(data: bytes) -> int | None:
    """Offset of the first opener past MAX_JSON_DEPTH (strings skipped). The
    whole text is judged at C speed first; only a text that is too deep is
    walked string by string, and byte by byte where the depth crosses."""
    if data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return None
    depth = 0  # first at C speed: strings out, brackets only, one tight loop
    for char in _STRING.sub(b"", data).translate(None, _NOT_BRACKETS):
        depth += 1 if char in _OPENERS else -1
        if depth > MAX_JSON_DEPTH:
            break
    else:
        return None
    depth = start = 0  # too deep: find where
    strings = _STRING.finditer(data)
    while start <= len(data):
        match = next(strings, None)
        end = match.start() if match else len(data)
        before = depth
        for char in data[start:end].translate(None, _NOT_BRACKETS):
            depth += 1 if char in _OPENERS else -1
            if depth > MAX_JSON_DEPTH:
                return _crossing(data, start, before)
        if match is None:
            return None
        start = match.end()
    return None


def _crossing(data: bytes, start: int, depth: int) -> int:
    """The offset, from `start` at `depth`, where the depth first passes the bound."""
    for offset in range(start, len(data)):
        char = data[offset]
        if char in _OPENERS:
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return offset
        elif char in _CLOSERS:
            depth -= 1
    return len(data)


def _long_integer(data: bytes) -> int | None:
    """Offset of the first integer literal over MAX_INT_DIGITS digits."""
    for match in _LONG_INT.finditer(data):
        if not match.group().startswith(b'"'):
            return match.start()
    return None


def loads(data: bytes) -> Any:
    """The JSON document in `data` (UTF-8), or JsonBoundError saying where and why."""
    deep = _too_deep(data)
    if deep is not None:
        raise JsonBoundError(f"nesting deeper than {MAX_JSON_DEPTH} levels", *_at(data, deep))
    if re.search(rb"[0-9]{%d}" % (MAX_INT_DIGITS + 1), data):
        long = _long_integer(data)
        if long is not None:
            raise JsonBoundError(
                f"an integer of more than {MAX_INT_DIGITS} digits", *_at(data, long)
            )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonBoundError("not UTF-8", *_at(data, exc.start)) from exc
    try:
        return json.loads(text)  # integers were bounded above
    except json.JSONDecodeError as exc:
        raise JsonBoundError(f"not JSON: {exc.msg}", exc.lineno, exc.colno) from exc
    except (ValueError, RecursionError, OverflowError) as exc:  # guards: bounds come first
        raise JsonBoundError(f"not readable JSON: {exc}") from exc
