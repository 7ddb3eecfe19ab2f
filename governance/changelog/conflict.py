"""Three-way changelog resolution at merge time (docs/rules.md, 'Conflict
resolution') and the git merge driver built on it. Pure: bytes in, bytes out.

Main's bytes are kept verbatim; the PR's additions are re-appended with the
PR's link, or its pr-link corrections re-applied. A PR addition is dropped only
when main gained the same entry since the merge-base, not when any historical
entry happens to read the same. Every result is re-checked before
it is returned.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence

from governance.changelog.document import Changelog, Entry, parse
from governance.changelog.edit import (
    DEFAULT_PATH,
    DroppedEntry,
    EditResult,
    confirmed,
    refusal,
    refused,
    unexpected_link,
)
from governance.changelog.layout import first_byte_difference
from governance.changelog.positions import value_position
from governance.changelog.rules import CheckMode, check
from governance.changelog.splice import LinkEdit, LinkRewrite, apply_edits, link_edit
from governance.core.diagnostics import Violation, line_col
from governance.core.links import LinkPolicy, link_text

_Content = tuple[bytes, object]  # an entry's content block and its parsed mapping


# -- conflict resolution ----------------------------------------------------------


def resolve_conflict(
    stage1: bytes | None,
    stage2: bytes,
    stage3: bytes,
    pr: int,
    policy: LinkPolicy,
    *,
    path: str = DEFAULT_PATH,
) -> EditResult:
    """Resolve a conflicted changelog from its index stages when main is merged
    into PR `pr`: 1 = merge-base (None if the file is new), 2 = PR side,
    3 = main side. Main's bytes are kept exactly."""
    mode = CheckMode.pr_mode(pr)
    change = check(stage1, stage2, policy, mode, path=path)
    main = parse(stage3, path, source="main")
    if not change.ok or main.changelog is None:
        return refused(stage2, [*change.violations, *main.violations])
    assert change.head is not None
    if change.additions:
        # With additions, check proved the PR side starts with the merge-base
        # bytes, so its first entries are the merge-base's: no second parse.
        history = change.head.entries[: len(change.head.entries) - len(change.additions)]
        ancestor = _contents(change.head, history)
        return _reappend(
            ancestor, change.head, main.changelog, change.additions, pr, policy, mode, stage2
        )
    if change.corrections:
        return _reapply_corrections(
            stage1, change.head, main.changelog, change.corrections, policy, mode
        )
    return refused(
        stage2,
        [
            refusal(
                "nothing-to-preserve",
                "the PR has no appended entry or pr-link correction to preserve",
                path,
                1,
                "nothing of the PR's changelog needs keeping: take main's file "
                "(git checkout --theirs perf-changelog.yaml)",
                source="pr",
            )
        ],
    )


def _reappend(
    ancestor: Sequence[_Content],
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
    ancestor: Sequence[_Content], main: Changelog, additions: Sequence[Entry]
) -> tuple[list[Entry], tuple[DroppedEntry, ...]]:
    """Drop the additions main gained since the merge-base (docs/merge-differences.md).

    An entry counts as gained when main holds more copies of its content
    (ignoring pr-link) than the merge-base did; each gained copy accounts for
    one PR addition. Historical look-alikes are not gained, so they never
    swallow a PR's entry."""
    gained: dict[str, list[Entry]] = {}
    for entry in _gained(ancestor, main):
        gained.setdefault(_signature(entry.raw), []).append(entry)
    survivors: list[Entry] = []
    dropped: list[DroppedEntry] = []
    for entry in additions:
        matches = gained.get(_signature(entry.raw))
        if matches:
            dropped.append(DroppedEntry(entry.index, matches.pop(0).index))
        else:
            survivors.append(entry)
    return survivors, tuple(dropped)


def _gained(ancestor: Sequence[_Content], main: Changelog) -> list[Entry]:
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
            by_content[_signature(raw)] += 1
    gained = []
    for entry in unmatched:
        key = _signature(entry.raw)
        if by_content[key]:
            by_content[key] -= 1
        else:
            gained.append(entry)
    return gained


def _signature(raw: object) -> str:
    """An entry's content without its pr-link, comparable across files."""
    content = {k: v for k, v in raw.items() if k != "pr-link"} if isinstance(raw, dict) else raw
    return json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)


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


def _reapply_corrections(
    stage1: bytes | None,
    pr_side: Changelog,
    main: Changelog,
    corrections: Sequence[int],
    policy: LinkPolicy,
    mode: CheckMode,
) -> EditResult:
    """Re-apply the PR's pr-link corrections to main's bytes."""
    ancestor = _entries_of(stage1, main.path)
    edits: list[LinkEdit] = []
    problems: list[Violation] = []
    for index in corrections:
        old, new = ancestor[index - 1], pr_side.entries[index - 1]
        target = main.entries[index - 1] if index <= len(main.entries) else None
        outcome = _correction_edit(old, new, target, main)
        if isinstance(outcome, Violation):
            problems.append(outcome)
        elif outcome is not None:
            edits.append(outcome)
    if not problems and not edits:
        first = pr_side.entries[corrections[0] - 1]
        problems.append(
            refusal(
                "corrections-already-on-main",
                "the PR's pr-link corrections are already present on main",
                main.path,
                first.line,
                "nothing is left to merge in the changelog: take main's file",
                source="pr",
            )
        )
    if problems:
        return refused(pr_side.data, problems)
    data, rewrites = apply_edits(main.data, edits)
    return confirmed(main.data, data, pr_side.data, rewrites, (), policy, mode, main.path)


def _correction_edit(
    old: Entry, new: Entry, target: Entry | None, main: Changelog
) -> LinkEdit | Violation | None:
    """The edit that carries one correction over to main (None: already there)."""
    index, path = new.index, main.path
    if target is None:
        last_line = main.data.count(b"\n") or 1
        return refusal(
            "main-missing-corrected",
            f"main is missing corrected entry {index} (main has {len(main.entries)} entries)",
            path,
            last_line,
            "main deleted history; resolve by hand",
            source="main",
        )
    if _signature(target.raw) != _signature(old.raw):
        return refusal(
            "main-changed-corrected",
            f"main changed corrected entry {index}; resolve manually",
            path,
            target.line,
            "compare the entry on both sides and redo the correction on main's text",
            source="main",
        )
    wanted, current = link_text(new.pr_link), link_text(target.pr_link)
    if current == wanted:
        return None
    if current != link_text(old.pr_link):
        line, column = value_position(main, target, "pr-link")
        return refusal(
            "main-conflicting-link",
            f"main has a conflicting pr-link for entry {index}: {current!r} "
            f"(the PR writes {wanted!r})",
            path,
            line,
            "both sides corrected this link; keep one of them by hand",
            column=column,
            source="main",
        )
    return link_edit(main, target, wanted, current, source="main")


# -- git merge driver ---------------------------------------------------------------


def merge_driver(
    ancestor: bytes,
    ours: bytes,
    theirs: bytes,
    pr: int | None,
    policy: LinkPolicy,
    *,
    path: str = DEFAULT_PATH,
) -> EditResult:
    """Merge for `git merge` (`%O %A %B`) while merging main (theirs) into a PR
    branch (ours). Handles only "both sides appended": the result is theirs
    (ancestor + main's appended entries) followed by ours' appended entries,
    their links set to PR `pr`'s link (kept as they are when `pr` is None).
    Anything else is refused, so git reports an ordinary conflict."""
    if ours == theirs or theirs == ancestor:
        return EditResult(ours)
    if ours == ancestor:
        return EditResult(theirs, changed=True)
    logs = [
        parse(data, path, source=side)
        for data, side in ((ancestor, "ancestor"), (ours, "ours"), (theirs, "theirs"))
    ]
    problems = [v for result in logs for v in result.violations]
    if problems:
        return refused(ours, problems)
    base, mine, main = (result.changelog for result in logs)
    assert base is not None and mine is not None and main is not None
    problems = [
        *_appends_only(base, mine, "ours"),
        *_appends_only(base, main, "theirs"),
    ]
    if problems:
        return refused(ours, problems)
    mode = CheckMode.pr_mode(pr) if pr is not None else CheckMode()
    additions = mine.entries[len(base.entries) :]
    history = _contents(base, base.entries)
    return _reappend(history, mine, main, additions, pr, policy, mode, ours, allow_empty=True)


def _appends_only(base: Changelog, side: Changelog, name: str) -> list[Violation]:
    """`side` is `base` byte-for-byte followed by whole new entries."""
    n = len(base.entries)
    kept = side.data.startswith(base.data) and len(side.entries) > n
    if kept and n:
        last_base, last_side = base.entries[-1], side.entries[n - 1]
        kept = base.block(last_base) == side.block(last_side)
    if kept:
        return []
    line, _ = line_col(side.data, first_byte_difference(base.data, side.data))
    return [
        refusal(
            "driver-not-append-only",
            f"{name} changed the changelog other than by appending entries; "
            "the merge driver leaves this conflict to you",
            side.path,
            line,
            "resolve it with `gov` conflict resolution, or by hand",
            source=name,
        )
    ]


# -- helpers ----------------------------------------------------------------------


def _contents(changelog: Changelog, entries: Iterable[Entry]) -> list[_Content]:
    return [(changelog.block(entry), entry.raw) for entry in entries]


def _entries_of(data: bytes | None, path: str) -> tuple[Entry, ...]:
    """Entries of a snapshot that `check` has already validated."""
    if data is None:
        return ()
    result = parse(data, path, source="base")
    return result.changelog.entries if result.changelog is not None else ()
