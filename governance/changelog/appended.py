"""What head adds to base, read line by line from the two blobs.

The one reading of the appended changelog lines: `gov check` (its plan
check and sweep preflight), `gov plan` and prepare-merge's sweep all take
them from here, never from `git diff` text. Diff text is not a faithful
copy of the bytes: an added line that begins with `++` prints as `+++...`
and reads as a file header, and a repository's attributes (`-diff`, a
`textconv` driver) or an external diff turn it into "Binary files differ"
or into someone else's text (docs/matrix.md, 'From the changelog to the
plan').

Pure: bytes in, lines out. When head starts with base's bytes (the common
case) the added lines are head's tail; otherwise the two files are compared
line by line (`difflib`), like the reference's diff: the lines head inserts
are the additions, and the first non-blank base line head drops or rewrites
is reported, so the plan can refuse it (GOV530).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Removed:
    """The first non-blank base line that head deletes or rewrites."""

    text: str  # the line, without its `\\n`
    base_line: int  # 1-based line in base
    head_line: int  # 1-based line of head where it was (the line now in its place)


@dataclass(frozen=True, slots=True)
class Appended:
    """The lines head adds, their 1-based line numbers in head, and the
    first non-blank base line head removes (None: head only adds)."""

    lines: tuple[str, ...]
    numbers: tuple[int, ...]
    removed: Removed | None = None


def appended(base: bytes | None, head: bytes | None) -> Appended:
    """The lines `head` adds to `base` (None: the file is absent)."""
    base, head = base or b"", head or b""
    if not base or (base.endswith(b"\n") and head.startswith(base)):
        tail = _lines(head[len(base) :])
        first = base.count(b"\n") + 1
        return Appended(_texts(tail), tuple(range(first, first + len(tail))))
    return _compare(_lines(base), _lines(head))


def _lines(data: bytes) -> list[bytes]:
    """`\\n`-terminated lines, the last one without it when the file lacks a
    final newline (so `x` and `x\\n` differ, as they do for git)."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _text(line: bytes) -> str:
    return line.removesuffix(b"\n").decode("utf-8", "surrogateescape")


def _texts(lines: list[bytes]) -> tuple[str, ...]:
    return tuple(_text(line) for line in lines)


def _compare(old: list[bytes], new: list[bytes]) -> Appended:
    # The common prefix and suffix are not handed to difflib: on a real
    # changelog (thousands of lines) only the changed middle is compared.
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    a, b = old[prefix : len(old) - suffix], new[prefix : len(new) - suffix]
    lines: list[str] = []
    numbers: list[int] = []
    removed: Removed | None = None
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace") and removed is None:
            for i in range(i1, i2):
                text = _text(a[i])
                if text.strip():
                    # A rewritten line is at its counterpart in head; a
                    # deleted one where head continues.
                    j = j1 + min(i - i1, j2 - j1 - 1) if tag == "replace" else j1
                    removed = Removed(text, prefix + i + 1, min(prefix + j + 1, max(len(new), 1)))
                    break
        if tag in ("insert", "replace"):
            lines.extend(_text(line) for line in b[j1:j2])
            numbers.extend(range(prefix + j1 + 1, prefix + j2 + 1))
    return Appended(tuple(lines), tuple(numbers), removed)
