"""`Entry` and `Changelog`: one version of the file as entries with byte spans.

The types `document` (which builds them) and the modules it calls back
(`entry_schema`, `positions`) share, in a module that imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Entry:
    """One top-level item. Offsets are byte offsets into the file."""

    index: int  # 1-based position in the file
    start: int  # offset of its `- config-keys:` line
    content_end: int  # end of its last non-blank line (the content block)
    end: int  # start of the next entry, or EOF
    line: int  # 1-based line of `start`
    raw: Any  # the parsed mapping as YAML produced it; None when trusted, not parsed

    @property
    def pr_link(self) -> object:
        return (
            self.raw.get("pr-link", self.raw.get("pr_link")) if isinstance(self.raw, dict) else None
        )


@dataclass(frozen=True, slots=True)
class Changelog:
    path: str
    data: bytes
    entries: tuple[Entry, ...]

    def block(self, entry: Entry) -> bytes:
        """The entry's content block (from its first line to its last content line)."""
        return self.data[entry.start : entry.content_end]
