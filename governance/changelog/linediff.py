"""Which lines of two versions of a file changed, placed where git places them.

Pure. `difflib` finds the changed lines; a group of changed lines that can
slide (its first line equals the line after it, or its last the line
before) is then placed as git's default diff places it: the compaction of
xdiff's `xdl_change_compact` with the indent heuristic (git's default since
2.14, `diff.indentHeuristic`). The placement decides which lines a block
inserted between two entries is read as: for

    pr-link: .../1        (context)
                          (context)
    - config-keys:        <- inserted entry ...
      ...
    pr-link: .../2
                          <- ... and its separator line
    - config-keys:        (context)

the inserted lines could as well start at `    - <key>` one line lower,
which is not YAML. The reference processor read git's placement, so the
plan reads the same lines (docs/matrix-differences.md).
"""

from __future__ import annotations

import difflib

_MAX_INDENT = 200
_MAX_BLANKS = 20
_MAX_SLIDING = 100
_START_OF_FILE_PENALTY = 1
_END_OF_FILE_PENALTY = 21
_TOTAL_BLANK_WEIGHT = -30
_POST_BLANK_WEIGHT = 6
_RELATIVE_INDENT_PENALTY = -4
_RELATIVE_INDENT_WITH_BLANK_PENALTY = 10
_RELATIVE_OUTDENT_PENALTY = 24
_RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17
_RELATIVE_DEDENT_PENALTY = 23
_RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17
_INDENT_WEIGHT = 60
_SPACE = frozenset(b" \t\n\v\f\r")


def changed_lines(old: list[bytes], new: list[bytes]) -> tuple[list[bool], list[bool]]:
    """Per line of `old` and of `new`: is it deleted / inserted."""
    old_changed = [False] * len(old)
    new_changed = [False] * len(new)
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
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for i in range(prefix + i1, prefix + i2):
            old_changed[i] = True
        for j in range(prefix + j1, prefix + j2):
            new_changed[j] = True
    _compact(old, old_changed)
    _compact(new, new_changed)
    return old_changed, new_changed


def _compact(lines: list[bytes], changed: list[bool]) -> None:
    """Slide each group of changed lines to git's place (in place).

    Unlike xdiff, groups are not lined up with the other file's changes:
    that only matters where both files change side by side, which the plan
    refuses (a deleted non-blank line) or reads the same (blank lines)."""
    n = len(lines)
    start = 0
    while start < n:
        if not changed[start]:
            start += 1
            continue
        end = start
        while end < n and changed[end]:
            end += 1
        while True:
            size = end - start
            while start > 0 and lines[start - 1] == lines[end - 1]:  # slide up
                start, end = start - 1, end - 1
                changed[start], changed[end] = True, False
                while start > 0 and changed[start - 1]:
                    start -= 1
            earliest_end = end
            while end < n and lines[start] == lines[end]:  # slide down
                changed[start], changed[end] = False, True
                start, end = start + 1, end + 1
                while end < n and changed[end]:
                    end += 1
            if size == end - start:
                break
        if end != earliest_end:
            best_shift, best = end, None
            for shift in range(max(earliest_end, end - size - 1, end - _MAX_SLIDING), end + 1):
                score = _add(_split_score(lines, shift), _split_score(lines, shift - size))
                if best is None or _compare(score, best) <= 0:  # ties: the lower place
                    best_shift, best = shift, score
            while end > best_shift:
                start, end = start - 1, end - 1
                changed[start], changed[end] = True, False
        start = end


def _indent(line: bytes) -> int:
    """xdiff's `get_indent`: -1 for a blank line."""
    width = 0
    for byte in line:
        if byte not in _SPACE:
            return width
        if byte == 0x20:
            width += 1
        elif byte == 0x09:
            width += 8 - width % 8
        if width >= _MAX_INDENT:
            return _MAX_INDENT
    return -1


def _nearest_indent(lines: list[bytes], order: range) -> tuple[int, int]:
    """(blank lines skipped, indent of the first non-blank line) walking `order`;
    past `_MAX_BLANKS` blanks xdiff stops and takes indent 0 (-1: none found)."""
    blanks = 0
    for i in order:
        indent = _indent(lines[i])
        if indent != -1:
            return blanks, indent
        blanks += 1
        if blanks == _MAX_BLANKS:
            return blanks, 0
    return blanks, -1


def _split_score(lines: list[bytes], split: int) -> tuple[int, int]:
    """(effective indent, penalty) of a group boundary before line `split`."""
    end_of_file = split >= len(lines)
    indent = -1 if end_of_file else _indent(lines[split])
    pre_blank, pre_indent = _nearest_indent(lines, range(split - 1, -1, -1))
    post_blank, post_indent = _nearest_indent(lines, range(split + 1, len(lines)))
    penalty = 0
    if pre_indent == -1 and pre_blank == 0:
        penalty += _START_OF_FILE_PENALTY
    if end_of_file:
        penalty += _END_OF_FILE_PENALTY
    post = 1 + post_blank if indent == -1 else 0
    total = pre_blank + post
    penalty += _TOTAL_BLANK_WEIGHT * total + _POST_BLANK_WEIGHT * post
    effective = indent if indent != -1 else post_indent
    blanks = total != 0
    if effective == -1 or pre_indent == -1 or effective == pre_indent:
        pass
    elif effective > pre_indent:
        penalty += _RELATIVE_INDENT_WITH_BLANK_PENALTY if blanks else _RELATIVE_INDENT_PENALTY
    elif post_indent != -1 and post_indent > effective:
        penalty += _RELATIVE_OUTDENT_WITH_BLANK_PENALTY if blanks else _RELATIVE_OUTDENT_PENALTY
    else:
        penalty += _RELATIVE_DEDENT_WITH_BLANK_PENALTY if blanks else _RELATIVE_DEDENT_PENALTY
    return effective, penalty


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] + b[0], a[1] + b[1]


def _compare(a: tuple[int, int], b: tuple[int, int]) -> int:
    """xdiff's `score_cmp`: below 0 when `a` is the better split."""
    return _INDENT_WEIGHT * ((a[0] > b[0]) - (a[0] < b[0])) + (a[1] - b[1])
