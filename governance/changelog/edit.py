"""Byte-surgical edits of the changelog at merge time. Pure: bytes in, bytes out.

* `canonicalize` (spec §8): fill in the PR's link where its appended entries
  hold a placeholder.
* `resolve_conflict` (spec §9): rebuild a conflicted changelog from the three
  index stages: main's bytes verbatim, then the PR's additions (or its pr-link
  corrections re-applied).
* `merge_driver`: the same re-append for a git merge driver (`%O %A %B`), for
  the one case that needs no judgement: both sides only appended.

Every result is re-checked with the append-only rules before it is returned,
so an edit can never produce bytes that `check` would refuse. Links are
rewritten by splicing the byte span of the pr-link *value* (found with the
YAML composer), not by replacing a line: a placeholder continued on the next
line is rewritten as a whole (gap G11). Resolution drops a PR addition only
when main gained the same entry since the merge-base, not when any historical
entry happens to read the same (gap G10). docs/merge-differences.md lists
where gov and the reference tooling disagree on purpose.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from governance.changelog.document import Changelog, Entry, parse
from governance.changelog.layout import first_byte_difference
from governance.changelog.links import LinkPolicy, link_text
from governance.changelog.positions import value_position
from governance.changelog.rules import CheckMode, check
from governance.codes import code_for, violation
from governance.diagnostics import Violation, line_col

DEFAULT_PATH = "perf-changelog.yaml"

# Merge refusals: rule name -> code. The rule names are the golden `kind`
# values of the reference's refusals. To be registered in governance/codes.py.


_Content = tuple[bytes, object]  # an entry's content block and its parsed mapping


@dataclass(frozen=True, slots=True)
class LinkRewrite:
    """One pr-link value rewritten by an edit (positions in the result bytes)."""

    entry: int  # 1-based entry index in the result
    line: int  # 1-based line where the new value starts
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class DroppedEntry:
    """A PR addition left out because main gained the same entry (gap G10)."""

    pr_entry: int  # 1-based index on the PR side
    main_entry: int  # 1-based index of the matching entry on main


@dataclass(frozen=True, slots=True)
class EditResult:
    """Result of an edit. On refusal `data` is the caller's bytes unchanged
    (canonicalize: head; resolve: the PR side; merge driver: ours)."""

    data: bytes
    changed: bool = False
    rewrites: tuple[LinkRewrite, ...] = ()
    violations: tuple[Violation, ...] = ()
    dropped: tuple[DroppedEntry, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.violations


# -- §8 canonicalization ----------------------------------------------------------


def canonicalize(
    base: bytes, head: bytes, pr: int, policy: LinkPolicy, *, path: str = DEFAULT_PATH
) -> EditResult:
    """Rewrite the placeholder links of the entries `head` appends to `base`
    to the link of PR `pr`. Nothing else changes; a second run is a no-op."""
    mode = CheckMode.pr_mode(pr)
    verdict = check(base, head, policy, mode, path=path)
    if not verdict.ok:
        return _refused(head, verdict.violations)
    assert verdict.head is not None
    new, expected = verdict.head, policy.expected(pr)
    edits: list[_Edit] = []
    problems: list[Violation] = []
    for entry in verdict.additions:
        link = link_text(entry.pr_link)
        if link == expected:
            continue  # already final (quoted or not): leave the bytes alone
        if not policy.is_placeholder(link):
            problems.append(_unexpected_link(new, entry, link, expected))
            continue
        edit = _link_edit(new, entry, expected, link)
        if isinstance(edit, Violation):
            problems.append(edit)
        else:
            edits.append(edit)
    if problems:
        return _refused(head, problems)
    if not edits:
        return EditResult(head)  # the check above already vouches for these bytes
    data, rewrites = _apply(head, edits)
    # Base was validated by the first check; only the result needs a full look.
    return _confirmed(base, data, head, rewrites, (), policy, mode, path)


# -- §9 conflict resolution -------------------------------------------------------


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
        return _refused(stage2, [*change.violations, *main.violations])
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
    return _refused(
        stage2,
        [
            _refusal(
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
        return _refused(
            fallback,
            [
                _refusal(
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
    blocks: list[tuple[bytes, _Edit | None]] = []
    problems: list[Violation] = []
    for entry in survivors:
        block = _block_with_link(pr_side, entry, pr, policy)
        if isinstance(block, Violation):
            problems.append(block)
        else:
            blocks.append(block)
    if problems:
        return _refused(fallback, problems, dropped)
    data, rewrites = _assemble(main, blocks)
    return _confirmed(main.data, data, fallback, rewrites, dropped, policy, mode, main.path)


def _survivors(
    ancestor: Sequence[_Content], main: Changelog, additions: Sequence[Entry]
) -> tuple[list[Entry], tuple[DroppedEntry, ...]]:
    """Drop the additions main gained since the merge-base (gap G10).

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
) -> tuple[bytes, _Edit | None] | Violation:
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
        return _unexpected_link(pr_side, entry, link, expected)
    edit = _link_edit(pr_side, entry, expected, link)
    if isinstance(edit, Violation):
        return edit
    start, end = edit.start - entry.start, edit.end - entry.start
    if block[start:end] == edit.new:
        return block, None
    relative = _Edit(start, end, edit.new, edit.entry, edit.old)
    return block[:start] + edit.new + block[end:], relative


def _assemble(
    main: Changelog, blocks: Sequence[tuple[bytes, _Edit | None]]
) -> tuple[bytes, tuple[LinkRewrite, ...]]:
    """Main's bytes, then the blocks one empty line apart (spec §9 step 3:
    the first empty line only when main does not already end with one)."""
    lead = b"" if main.data.endswith(b"\n\n") or not blocks else b"\n"
    pieces = [main.data + lead]
    offset = len(pieces[0])
    rewrites: list[tuple[int, int, _Edit]] = []
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
    """Re-apply the PR's pr-link corrections to main's bytes (spec §9 step 4)."""
    ancestor = _entries_of(stage1, main.path)
    edits: list[_Edit] = []
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
            _refusal(
                "corrections-already-on-main",
                "the PR's pr-link corrections are already present on main",
                main.path,
                first.line,
                "nothing is left to merge in the changelog: take main's file",
                source="pr",
            )
        )
    if problems:
        return _refused(pr_side.data, problems)
    data, rewrites = _apply(main.data, edits)
    return _confirmed(main.data, data, pr_side.data, rewrites, (), policy, mode, main.path)


def _correction_edit(
    old: Entry, new: Entry, target: Entry | None, main: Changelog
) -> _Edit | Violation | None:
    """The edit that carries one correction over to main (None: already there)."""
    index, path = new.index, main.path
    if target is None:
        last_line = main.data.count(b"\n") or 1
        return _refusal(
            "main-missing-corrected",
            f"main is missing corrected entry {index} (main has {len(main.entries)} entries)",
            path,
            last_line,
            "main deleted history; resolve by hand",
            source="main",
        )
    if _signature(target.raw) != _signature(old.raw):
        return _refusal(
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
        return _refusal(
            "main-conflicting-link",
            f"main has a conflicting pr-link for entry {index}: {current!r} "
            f"(the PR writes {wanted!r})",
            path,
            line,
            "both sides corrected this link; keep one of them by hand",
            column=column,
            source="main",
        )
    return _link_edit(main, target, wanted, current, source="main")


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
        return _refused(ours, problems)
    base, mine, main = (result.changelog for result in logs)
    assert base is not None and mine is not None and main is not None
    problems = [
        *_appends_only(base, mine, "ours"),
        *_appends_only(base, main, "theirs"),
    ]
    if problems:
        return _refused(ours, problems)
    mode = CheckMode.pr_mode(pr) if pr is not None else CheckMode()
    additions = mine.entries[len(base.entries) :]
    ancestor = _contents(base, base.entries)
    return _reappend(ancestor, mine, main, additions, pr, policy, mode, ours, allow_empty=True)


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
        _refusal(
            "driver-not-append-only",
            f"{name} changed the changelog other than by appending entries; "
            "the merge driver leaves this conflict to you",
            side.path,
            line,
            "resolve it with `gov` conflict resolution, or by hand",
            source=name,
        )
    ]


# -- link value spans -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Edit:
    start: int  # absolute byte span of the old value
    end: int
    new: bytes
    entry: int
    old: str


def _link_edit(
    changelog: Changelog, entry: Entry, link: str, old: str, *, source: str = "pr"
) -> _Edit | Violation:
    span = _value_span(changelog, entry)
    if span is None:
        return _refusal(
            "pr-link-line",
            f"could not locate the pr-link value of entry {entry.index}",
            changelog.path,
            entry.line,
            "write the link as `  pr-link: XXX` in the entry",
            source=source,
        )
    return _Edit(span[0], span[1], link.encode("utf-8"), entry.index, old)


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


@lru_cache(maxsize=1)
def _composer() -> Any:
    """A ruamel instance for node positions (YAML 1.1, like the loader)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.version = (1, 1)
    return yaml


@lru_cache(maxsize=1024)
def _scalar_span(text: str) -> tuple[int, int] | None:
    """Character span of the pr-link value in one entry's YAML text. Only
    texts that already passed the safe loader get here, so composing them
    (which builds nodes, not objects) is safe."""
    try:
        root = _composer().compose(text)
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


def _apply(data: bytes, edits: Sequence[_Edit]) -> tuple[bytes, tuple[LinkRewrite, ...]]:
    """Splice the edits into `data`, reporting each rewrite at its new line."""
    pieces: list[bytes] = []
    starts: list[tuple[int, _Edit]] = []
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


# -- shared helpers -------------------------------------------------------------------


def _contents(changelog: Changelog, entries: Iterable[Entry]) -> list[_Content]:
    return [(changelog.block(entry), entry.raw) for entry in entries]


def _entries_of(data: bytes | None, path: str) -> tuple[Entry, ...]:
    """Entries of a snapshot that `check` has already validated."""
    if data is None:
        return ()
    result = parse(data, path, source="base")
    return result.changelog.entries if result.changelog is not None else ()


def _confirmed(
    base: bytes,
    data: bytes,
    fallback: bytes,
    rewrites: tuple[LinkRewrite, ...],
    dropped: tuple[DroppedEntry, ...],
    policy: LinkPolicy,
    mode: CheckMode,
    path: str,
) -> EditResult:
    """Re-check the edited bytes against `base`; refuse rather than return
    bytes the rules reject. `base` was fully parsed by the caller."""
    verdict = check(base, data, policy, mode, path=path, trust_base=True)
    if not verdict.ok:
        return _refused(fallback, verdict.violations, dropped)
    return EditResult(data, data != fallback, rewrites, (), dropped)


def _refused(
    data: bytes, violations: Iterable[Violation], dropped: tuple[DroppedEntry, ...] = ()
) -> EditResult:
    return EditResult(data, False, (), tuple(violations), dropped)


def _unexpected_link(changelog: Changelog, entry: Entry, link: str, expected: str) -> Violation:
    line, column = value_position(changelog, entry, "pr-link")
    return _refusal(
        "unexpected-appended-link",
        f"appended entry {entry.index} has unexpected pr-link {link!r}",
        changelog.path,
        line,
        f"write `pr-link: XXX` or `pr-link: {expected}`",
        column=column,
        source="pr",
    )


def _refusal(
    rule: str,
    message: str,
    path: str,
    line: int,
    hint: str,
    *,
    column: int = 1,
    source: str,
) -> Violation:
    return violation(code_for(rule), message, path, line, column, hint, source=source)
