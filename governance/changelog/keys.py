"""Resolve the config keys of appended entries against the master config keys.

Semantics follow the changelog processor (docs/matrix.md, 'From the changelog
to the plan'): a pattern with
`*` matches any run of characters and every other character is literal; any
other pattern must be an exact key.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from governance.changelog.positions import locate
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.core.plain import fold, lookalike, name_column, not_plain
from governance.core.suggest import did_you_mean

if TYPE_CHECKING:  # the parser is not needed to match keys (the plan imports this module)
    from governance.changelog.document import Changelog, Entry


@lru_cache(maxsize=1024)
def wildcard_pattern(pattern: str) -> re.Pattern[str]:
    """The changelog's wildcard: only `*` is special, and it must match the whole key."""
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def wildcard_matches(pattern: str, key: str) -> bool:
    if "*" in pattern:
        return wildcard_pattern(pattern).fullmatch(key) is not None
    return pattern == key


def resolve_pattern(pattern: str, known: Sequence[str]) -> list[str]:
    """Keys matched by one pattern, in master order (empty when none)."""
    if "*" in pattern:
        regex = wildcard_pattern(pattern)
        return [key for key in known if regex.fullmatch(key)]
    return [pattern] if pattern in known else []


def resolve_keys(patterns: Sequence[str], known: Sequence[str]) -> tuple[list[str], list[int]]:
    """The one key resolver (docs/matrix.md), shared by `gov check` and the
    matrix engine: matched keys in first-occurrence order (master order within
    a wildcard) and the indexes of the patterns that match nothing."""
    known_set = frozenset(known)
    resolved: dict[str, None] = {}
    unmatched: list[int] = []
    for index, pattern in enumerate(patterns):
        if "*" in pattern:
            matches = resolve_pattern(pattern, known)
        else:
            matches = [pattern] if pattern in known_set else []
        if matches:
            resolved.update(dict.fromkeys(matches))
        else:
            unmatched.append(index)
    return list(resolved), unmatched


def unresolved_violation(
    pattern: str, known: Sequence[str], masters: str, path: str, line: int, column: int
) -> Violation:
    """GOV502 for a wildcard that matches nothing, GOV501 for an unknown key.
    The wording is the reference processor's, which users already grep for."""
    if "*" in pattern:
        return violation(
            "GOV502",
            f"No config keys matched the wildcard pattern '{pattern}' in master configs. ({masters})",
            path,
            line,
            column,
            "narrow or fix the pattern; `*` matches any run of characters",
        )
    hint = (
        did_you_mean(pattern, known, first=_siblings(pattern, known))
        or f"use a top-level key of {masters}"
    )
    return violation(
        "GOV501",
        f"Config key '{pattern}' not found in master configs. ({masters})",
        path,
        line,
        column,
        hint,
    )


def plain_patterns(patterns: Sequence[str]) -> tuple[list[str], list[int]]:
    """`patterns` with the ones that are not ASCII blanked (they select
    nothing: GOV503), and the indexes of those."""
    foreign = [index for index, pattern in enumerate(patterns) if not pattern.isascii()]
    if not foreign:
        return list(patterns), []
    return ["" if i in foreign else p for i, p in enumerate(patterns)], foreign


def not_plain_violation(
    pattern: str, known: Sequence[str], path: str, line: int, column: int, line_text: str
) -> Violation:
    """GOV503: a config key (or pattern) of an entry that is not ASCII,
    located at its first non-ASCII character, naming the key it imitates."""
    plain = [key for key in known if key.isascii()]
    folded = fold(pattern)
    if "*" in folded:
        resembles = resolve_pattern(folded, plain) if folded.isascii() else []
    else:
        resembles = [found] if (found := lookalike(pattern, plain)) else []
    hint = "" if resembles else did_you_mean(folded, plain)
    return not_plain(
        "GOV503",
        "config key",
        pattern,
        path,
        line,
        name_column(line_text, pattern, column) if line else 0,
        resembles,
        hint=hint,
    )


def resolve_entry_keys(
    changelog: Changelog, entries: Sequence[Entry], known: Sequence[str], masters: str
) -> tuple[list[str], list[Violation]]:
    """Resolved keys of parsed changelog entries, with violations located in
    the changelog."""
    resolved: dict[str, None] = {}
    problems: list[Violation] = []
    for entry in entries:
        patterns = entry.raw.get("config-keys", entry.raw.get("config_keys")) or []
        # non-strings are schema violations, reported elsewhere; keep indexes
        strings, foreign = plain_patterns([p if isinstance(p, str) else "" for p in patterns])
        keys, unmatched = resolve_keys(strings, known)
        resolved.update(dict.fromkeys(keys))
        for index in sorted({*unmatched, *foreign}):
            if not isinstance(patterns[index], str):
                continue
            line, column = locate(changelog, entry, ("config-keys", index))
            if index in foreign:
                found = not_plain_violation(
                    patterns[index],
                    known,
                    changelog.path,
                    line,
                    column,
                    _line_text(changelog.data, line),
                )
            else:
                found = unresolved_violation(
                    patterns[index], known, masters, changelog.path, line, column
                )
            problems.append(found)
    return list(resolved), problems


def _line_text(data: bytes, line: int) -> str:
    """The text of 1-based line `line` of `data` ("" when out of range)."""
    start = 0
    for _ in range(line - 1):
        start = data.find(b"\n", start) + 1
        if start == 0:
            return ""
    end = data.find(b"\n", start)
    return data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")


def _siblings(key: str, known: Sequence[str]) -> list[str]:
    """Keys read model-precision-hardware-engine[-variant]; a renamed key usually
    keeps its first three parts (dsv4-fp8-mi300x-sglang became
    dsv4-fp8-mi300x-vllm), so those siblings rank before mere look-alikes."""
    stem = key.split("-")[:3]
    siblings = [k for k in known if k.split("-")[:3] == stem]
    siblings.sort(key=lambda k: -difflib.SequenceMatcher(None, key, k).ratio())
    return siblings
