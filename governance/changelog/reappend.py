"""Re-appending a PR's additions after main's bytes: the step shared by
conflict resolution (`conflict`) and the git merge driver (`merge_driver`).
Pure: bytes in, bytes out.

A PR addition is dropped only when main gained the same entry since the
merge-base, not when any historical entry happens to read the same (see
docs/merge-differences.md).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence

from governance.changelog.document import Changelog, Entry
from governance.changelog.edit import (
    DroppedEntry,
    EditResult,
    confirmed,
    refusal,
    refused,
    unexpected_link,
)
from governance.changelog.modes import CheckMode
from governance.changelog.splice import LinkEdit, LinkRewrite, link_edit
from governance.core.diagnostics import Violation, line_col
from governance.core.links import LinkPolicy, link_text

Content = tuple[bytes, object]  # an entry's content block and its parsed mapping


def entry_contents(changelog: Changelog, entries: Iterable[Entry]) -> list[Content]:
    """The (block, parsed mapping) of each entry, as `reappend` compares them."""
    return [(changelog.block(entry), entry.raw) for entry in entries]


def content_signature(raw: object) -> str:
    """An entry's content without its pr-link, comparable across files."""
    content = {k: v for k, v in raw.items() if k != "pr-link"} if isinstance(raw, dict) else raw
    return json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)


def reappend(
    ancestor: Sequence[Content],
    pr_side: Changelog,
    main: Changelog,
    additions: Sequence[Entry],
    pr: int | None,
    policy: LinkPolicy,
    mode: CheckMode,
    fallback: bytes,
    *,
    allow_empty: bool = False,
) -> EditResult:
    """Main's bytes, one empty line, then the PR's surviving additions (links
    rewritten to PR `pr`'s link unless `pr` is None), one empty line apart."""
    survivors, dropped = _survivors(ancestor, main, additions)
    if not survivors and not allow_empty:
        first = additions[0]
        matches = ", ".join(
            f"PR-side entry {d.pr_entry} = main entry {d.main_entry}" for d in dropped
        )
        return refused(
            fallback,
            [
                refusal(
                    "nothing-remaining",
                    "the PR has no changelog contribution remaining after merging main: "
                    f"main already gained its appended entries ({matches})",
                    main.path,
                    first.line,
                    "the PR's entries already landed on main; take main's file, "
                    "or append a new entry describing what this PR adds",
                    source="pr",
                )
            ],
            dropped,
        )
    blocks: list[tuple[bytes, LinkEdit | None]] = []
    problems: list[Violation] = []
    for entry in survivors:
        block = _block_with_link(pr_side, entry, pr, policy)
        if isinstance(block, Violation):
            problems.append(block)
        else:
            blocks.append(block)
    if problems:
        return refused(fallback, problems, dropped)
    data, rewrites = _assemble(main, blocks)
    return confirmed(main.data, data, fallback, rewrites, dropped, policy, mode, main.path)


def _survivors(
    ancestor: Sequence[Content], main: Changelog, additions: Sequence[Entry]
) -> tuple[list[Entry], tuple[DroppedEntry, ...]]:
    """Drop the additions main gained since the merge-base (docs/merge-differences.md).

    An entry counts as gained when main holds more copies of its content
    (ignoring pr-link) than the merge-base did; each gained copy accounts for
    one PR addition. Historical look-alikes are not gained, so they never
    swallow a PR's entry."""
    gained: dict[str, list[Entry]] = {}
    for entry in _gained(ancestor, main):
        gained.setdefault(content_signature(entry.raw), []).append(entry)
    survivors: list[Entry] = []
    dropped: list[DroppedEntry] = []
    for entry in additions:
        matches = gained.get(content_signature(entry.raw))
        if matches:
            dropped.append(DroppedEntry(entry.index, matches.pop(0).index))
        else:
            survivors.append(entry)
    return survivors, tuple(dropped)


def _gained(ancestor: Sequence[Content], main: Changelog) -> list[Entry]:
    """Main's entries beyond the merge-base's, as a multiset difference by content.

    Byte-identical blocks are paired first (cheap); only the rest are compared
    by parsed content. Equal bytes imply equal content, so the pairing order
    does not change which contents remain."""
    by_bytes = Counter(block for block, _ in ancestor)
    unmatched: list[Entry] = []
    for entry in main.entries:
        block = main.block(entry)
        if by_bytes[block]:
            by_bytes[block] -= 1
        else:
            unmatched.append(entry)
    by_content: Counter[str] = Counter()
    for block, raw in ancestor:
        if by_bytes[block]:  # an ancestor copy that main does not hold byte-for-byte
            by_bytes[block] -= 1
            by_content[content_signature(raw)] += 1
    gained = []
    for entry in unmatched:
        key = content_signature(entry.raw)
        if by_content[key]:
            by_content[key] -= 1
        else:
            gained.append(entry)
    return gained


def _block_with_link(
    pr_side: Changelog, entry: Entry, pr: int | None, policy: LinkPolicy
) -> tuple[bytes, LinkEdit | None] | Violation:
    """The entry's content block with its link value written as PR `pr`'s
    link, and the edit relative to the block (None: bytes unchanged).

    Like the reference, the link is always written plainly (a quoted link
    becomes plain). With `pr` None the block is kept as it is."""
    block = pr_side.block(entry)
    if pr is None:
        return block, None
    expected = policy.expected(pr)
    link = link_text(entry.pr_link)
    if link != expected and not policy.is_placeholder(link):
        return unexpected_link(pr_side, entry, link, expected)
    edit = link_edit(pr_side, entry, expected, link)
    if isinstance(edit, Violation):
        return edit
    start, end = edit.start - entry.start, edit.end - entry.start
    if block[start:end] == edit.new:
        return block, None
    relative = LinkEdit(start, end, edit.new, edit.entry, edit.old)
    return block[:start] + edit.new + block[end:], relative


def _assemble(
    main: Changelog, blocks: Sequence[tuple[bytes, LinkEdit | None]]
) -> tuple[bytes, tuple[LinkRewrite, ...]]:
    """Main's bytes, then the blocks one empty line apart (the first empty
    line only when main does not already end with one)."""
    lead = b"" if main.data.endswith(b"\n\n") or not blocks else b"\n"
    pieces = [main.data + lead]
    offset = len(pieces[0])
    rewrites: list[tuple[int, int, LinkEdit]] = []
    for position, (block, edit) in enumerate(blocks):
        if edit is not None:
            rewrites.append((position, offset + edit.start, edit))
        if position:
            pieces.append(b"\n")
        pieces.append(block)
        offset += len(block) + 1
    data = b"".join(pieces)
    first = len(main.entries) + 1
    located = tuple(
        LinkRewrite(first + position, line_col(data, at)[0], edit.old, edit.new.decode("utf-8"))
        for position, at, edit in rewrites
    )
    return data, located
