"""Three-way changelog resolution at merge time (docs/rules.md, 'Conflict
resolution'), from a conflicted file's index stages. Pure: bytes in, bytes out.

Main's bytes are kept verbatim; the PR's additions are re-appended with the
PR's link (`reappend`), or its pr-link corrections re-applied. Every result
is re-checked before it is returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from governance.changelog.document import Changelog, Entry, parse
from governance.changelog.edit import (
    EditResult,
    confirmed,
    refusal,
    refused,
)
from governance.changelog.positions import value_position
from governance.changelog.reappend import content_signature, entry_contents, reappend
from governance.changelog.rules import CheckMode, check
from governance.changelog.splice import LinkEdit, apply_edits, link_edit
from governance.core.diagnostics import Violation
from governance.core.links import LinkPolicy, link_text

# -- conflict resolution ---------------------------------------------------------


def resolve_conflict(
    stage1: bytes | None,
    stage2: bytes,
    stage3: bytes,
    pr: int,
    policy: LinkPolicy,
    *,
    path: str,
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
        ancestor = entry_contents(change.head, history)
        return reappend(
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
    if content_signature(target.raw) != content_signature(old.raw):
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


def _entries_of(data: bytes | None, path: str) -> tuple[Entry, ...]:
    """Entries of a snapshot that `check` has already validated."""
    if data is None:
        return ()
    result = parse(data, path, source="base")
    return result.changelog.entries if result.changelog is not None else ()
