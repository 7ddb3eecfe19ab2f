"""Rewrite pr-link values by splicing their byte spans.

The span of a value is found with the YAML composer, so a placeholder quoted
or continued on the next line is replaced as a whole (the reference rewrote the
line and left `…/pull/N XXX`), and nothing
outside the value moves: history bytes, separators and comments stay exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from governance.changelog.document import Changelog, Entry
from governance.core.codes import code_for, violation
from governance.core.diagnostics import Violation, line_col
from governance.core.yamlsafe import compose


@dataclass(frozen=True, slots=True)
class LinkRewrite:
    """One pr-link value rewritten by an edit (positions in the result bytes)."""

    entry: int  # 1-based entry index in the result
    line: int  # 1-based line where the new value starts
    old: str
    new: str


# -- link value spans -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LinkEdit:
    start: int  # absolute byte span of the old value
    end: int
    new: bytes
    entry: int
    old: str


def link_edit(
    changelog: Changelog, entry: Entry, link: str, old: str, *, source: str = "pr"
) -> LinkEdit | Violation:
    span = _value_span(changelog, entry)
    if span is None:
        return violation(
            code_for("pr-link-line"),
            f"could not locate the pr-link value of entry {entry.index}",
            changelog.path,
            entry.line,
            1,
            "write the link as `  pr-link: XXX` in the entry",
            source=source,
        )
    return LinkEdit(span[0], span[1], link.encode("utf-8"), entry.index, old)


def _value_span(changelog: Changelog, entry: Entry) -> tuple[int, int] | None:
    """Absolute byte span of the entry's pr-link scalar (quotes included;
    continuation lines included; trailing spaces and comments excluded)."""
    text = changelog.data[entry.start : entry.end].decode("utf-8")
    span = _scalar_span(text)
    if span is None:
        return None
    start, end = span
    to_bytes = len(text[:start].encode("utf-8"))
    return entry.start + to_bytes, entry.start + to_bytes + len(text[start:end].encode("utf-8"))


@lru_cache(maxsize=1024)
def _scalar_span(text: str) -> tuple[int, int] | None:
    """Character span of the pr-link value in one entry's YAML text. Only
    texts that already passed the safe loader get here, so composing them
    (which builds nodes, not objects) is safe."""
    try:
        root = compose(text)
    except Exception:  # the text was parsed before; this is belt and braces
        return None
    items = getattr(root, "value", None)
    if not isinstance(items, list) or len(items) != 1:
        return None
    pairs = getattr(items[0], "value", None)
    if not isinstance(pairs, list):
        return None
    found = {key.value: value for key, value in pairs if isinstance(key.value, str)}
    value = found.get("pr-link", found.get("pr_link"))
    if value is None or not isinstance(value.value, str) or value.tag.endswith(":null"):
        return None  # `pr-link:` with no value has no span to replace
    return value.start_mark.index, value.end_mark.index


def apply_edits(data: bytes, edits: Sequence[LinkEdit]) -> tuple[bytes, tuple[LinkRewrite, ...]]:
    """Splice the edits into `data`, reporting each rewrite at its new line."""
    pieces: list[bytes] = []
    starts: list[tuple[int, LinkEdit]] = []
    position = size = 0
    for edit in sorted(edits, key=lambda e: e.start):
        pieces += [data[position : edit.start], edit.new]
        size += edit.start - position
        starts.append((size, edit))
        size += len(edit.new)
        position = edit.end
    pieces.append(data[position:])
    result = b"".join(pieces)
    rewrites = tuple(
        LinkRewrite(edit.entry, line_col(result, at)[0], edit.old, edit.new.decode("utf-8"))
        for at, edit in starts
    )
    return result, rewrites
