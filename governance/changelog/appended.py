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
line by line (`linediff`: difflib, with changed lines placed where git's
diff places them), like the reference's diff: the lines head inserts are the
additions, and the first non-blank base line head drops or rewrites
is reported, so the plan can refuse it (GOV530).
"""

from __future__ import annotations

from dataclasses import dataclass

from governance.changelog.linediff import changed_lines


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
    old_changed, new_changed = changed_lines(old, new)
    lines = tuple(_text(line) for line, changed in zip(new, new_changed, strict=True) if changed)
    numbers = tuple(j + 1 for j, changed in enumerate(new_changed) if changed)
    return Appended(lines, numbers, _first_removed(old, old_changed, new_changed))


def _first_removed(
    old: list[bytes], old_changed: list[bool], new_changed: list[bool]
) -> Removed | None:
    """The first deleted non-blank base line, and the head line in its place
    (its counterpart when the group was rewritten, else where head goes on)."""
    j = 0  # head position after the unchanged lines seen so far
    group = 0  # index of the line inside the current deleted group
    for i, line in enumerate(old):
        if not old_changed[i]:
            while j < len(new_changed) and new_changed[j]:
                j += 1
            j += 1
            group = 0
            continue
        text = _text(line)
        if text.strip():
            inserted = 0
            while j + inserted < len(new_changed) and new_changed[j + inserted]:
                inserted += 1
            head_line = j + min(group, max(inserted - 1, 0)) + 1
            return Removed(text, i + 1, min(head_line, max(len(new_changed), 1)))
        group += 1
    return None
