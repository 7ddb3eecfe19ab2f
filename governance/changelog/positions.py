"""Where a key, item or value sits inside one changelog entry.

Entries are parsed fast without positions; when a finding needs a line and
column, the entry's span alone is re-read with ruamel's round-trip loader.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from governance.changelog.entries import Changelog, Entry
from governance.core.yamlsafe import YamlLoadError, load, position


@lru_cache(maxsize=256)
def _round_trip(text: str) -> Any:
    try:
        return load(text, round_trip=True)
    except YamlLoadError:
        return None


def locate(changelog: Changelog, entry: Entry, loc: tuple[Any, ...]) -> tuple[int, int]:
    """1-based (line, column) of the key or item at `loc` inside `entry`;
    falls back to the deepest locatable parent, then to the entry's first line."""
    text = changelog.data[entry.start : entry.end].decode("utf-8")
    tree = _round_trip(text)
    found = position(tree[0], loc) if tree else None
    if found is None:
        return entry.line, 1
    return entry.line + found[0] - 1, found[1]


def value_position(changelog: Changelog, entry: Entry, key: str) -> tuple[int, int]:
    """Position of a key's value (e.g. the pr-link URL) inside an entry."""
    text = changelog.data[entry.start : entry.end].decode("utf-8")
    tree = _round_trip(text)
    mapping = tree[0] if tree else None
    if isinstance(mapping, dict) and key in mapping:
        commented: Any = mapping  # a ruamel CommentedMap: it records positions
        try:
            line, column = commented.lc.value(key)
            return entry.line + line, column + 1
        except (KeyError, TypeError):
            pass
    return locate(changelog, entry, (key,))
