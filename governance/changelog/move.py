"""Moving entries inserted in the middle of history to the end (pure: bytes in, bytes out).

An entry a change inserts between two existing entries breaks append-only
history (GOV302) but is mechanical to repair: the history bytes are all
there, in order, with whole new entries between them. `move_inserted`
recognises exactly that shape and returns base's bytes followed by the
inserted entries (each block unchanged, one empty line before it) and then
whatever the change already appended at the end. Anything else (a history
entry edited, reordered, or its separator changed) is not an insertion and
is left to the rules to report.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from governance.changelog.bounds import entry_starts


@dataclass(frozen=True, slots=True)
class Moved:
    """One entry that was inserted mid-history: its 1-based line in the
    change, and in the repaired bytes."""

    line: int
    new_line: int


def _blocks(data: bytes) -> tuple[bytes, list[tuple[int, bytes]]]:
    """(bytes before the first entry, [(offset, entry block with its trailing separator)])."""
    starts = entry_starts(data)
    if not starts:
        return data, []
    pieces = [(a, data[a:b]) for a, b in itertools.pairwise([*starts, len(data)])]
    return data[: starts[0]], pieces


def _content(block: bytes) -> bytes:
    """The block without the blank lines after it, with one newline."""
    return block.rstrip(b"\n") + b"\n"


def move_inserted(base: bytes, head: bytes) -> tuple[bytes, tuple[Moved, ...]] | None:
    """(repaired bytes, the moved entries), or None when `head` is not `base`
    with whole entries inserted between its entries (and perhaps more at the end)."""
    if not base.endswith(b"\n") or head.startswith(base):
        return None
    base_prefix, base_blocks = _blocks(base)
    head_prefix, head_blocks = _blocks(head)
    if head_prefix != base_prefix or not base_blocks:
        return None
    inserted: list[tuple[int, bytes]] = []
    matched = 0
    rest_from = len(head_blocks)
    for index, (offset, block) in enumerate(head_blocks):
        wanted = base_blocks[matched][1]
        last = matched == len(base_blocks) - 1
        # History's blocks keep their bytes; the last one may gain blank lines.
        if block == wanted or (
            last and block.startswith(wanted) and not block[len(wanted) :].strip(b"\n")
        ):
            matched += 1
            if matched == len(base_blocks):
                rest_from = index + 1
                break
        else:
            inserted.append((offset, block))
    if matched < len(base_blocks) or not inserted:
        return None
    appended = [block for _offset, block in head_blocks[rest_from:]]
    data = base
    moved = []
    for offset, block in inserted:
        data += b"\n"
        moved.append(Moved(head.count(b"\n", 0, offset) + 1, data.count(b"\n") + 1))
        data += _content(block)
    for block in appended:
        data += b"\n" + _content(block)
    return data, tuple(moved)
