"""The pure core of the git merge driver for the changelog (`%O %A %B`):
merging main into a PR branch when both sides only appended entries.
`governance.merge.driver` is its git-facing adapter.
"""

from __future__ import annotations

from governance.changelog.document import Changelog, parse
from governance.changelog.edit import EditResult, refusal, refused
from governance.changelog.layout import first_byte_difference
from governance.changelog.modes import CheckMode
from governance.changelog.reappend import entry_contents, reappend
from governance.core.diagnostics import Violation, line_col
from governance.core.links import LinkPolicy


def merge_driver(
    ancestor: bytes,
    ours: bytes,
    theirs: bytes,
    pr: int | None,
    policy: LinkPolicy,
    *,
    path: str,
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
    history = entry_contents(base, base.entries)
    return reappend(history, mine, main, additions, pr, policy, mode, ours, allow_empty=True)


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
