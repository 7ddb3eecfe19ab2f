"""Byte-surgical edits of the changelog at merge time. Pure: bytes in, bytes out.

* `canonicalize` (docs/rules.md, 'Canonicalization'; here): fill in the PR's link where its appended
  entries hold a placeholder.
* `resolve_conflict` and `merge_driver` (docs/rules.md, 'Conflict resolution'): in `resolve.py`.

Every result is re-checked with the append-only rules before it is returned,
so an edit can never produce bytes that `check` would refuse. Links change by
splicing the byte span of the pr-link value (`splice.py`), never by
rewriting a line. docs/merge-differences.md lists where gov and the
reference tooling disagree on purpose.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from governance.changelog.document import Changelog, Entry
from governance.changelog.positions import value_position
from governance.changelog.rules import CheckMode, check
from governance.changelog.splice import LinkEdit, LinkRewrite, apply_edits, link_edit
from governance.core.codes import code_for, violation
from governance.core.diagnostics import Violation
from governance.core.links import LinkPolicy, link_text


@dataclass(frozen=True, slots=True)
class DroppedEntry:
    """A PR addition left out because main gained the same entry since the merge-base."""

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


# -- canonicalization -------------------------------------------------------------


def canonicalize(base: bytes, head: bytes, pr: int, policy: LinkPolicy, *, path: str) -> EditResult:
    """Rewrite the placeholder links of the entries `head` appends to `base`
    to the link of PR `pr`. Nothing else changes; a second run is a no-op."""
    mode = CheckMode.pr_mode(pr)
    verdict = check(base, head, policy, mode, path=path)
    if not verdict.ok:
        return refused(head, verdict.violations)
    assert verdict.head is not None
    new, expected = verdict.head, policy.expected(pr)
    edits: list[LinkEdit] = []
    problems: list[Violation] = []
    for entry in verdict.additions:
        link = link_text(entry.pr_link)
        if link == expected:
            continue  # already final (quoted or not): leave the bytes alone
        if not policy.is_placeholder(link):
            problems.append(unexpected_link(new, entry, link, expected))
            continue
        edit = link_edit(new, entry, expected, link)
        if isinstance(edit, Violation):
            problems.append(edit)
        else:
            edits.append(edit)
    if problems:
        return refused(head, problems)
    if not edits:
        return EditResult(head)  # the check above already vouches for these bytes
    data, rewrites = apply_edits(head, edits)
    # Base was validated by the first check; only the result needs a full look.
    return confirmed(base, data, head, rewrites, (), policy, mode, path)


# -- shared helpers-------------------------------------------------------------------


def confirmed(
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
        return refused(fallback, verdict.violations, dropped)
    return EditResult(data, data != fallback, rewrites, (), dropped)


def refused(
    data: bytes, violations: Iterable[Violation], dropped: tuple[DroppedEntry, ...] = ()
) -> EditResult:
    return EditResult(data, False, (), tuple(violations), dropped)


def unexpected_link(changelog: Changelog, entry: Entry, link: str, expected: str) -> Violation:
    line, column = value_position(changelog, entry, "pr-link")
    return refusal(
        "unexpected-appended-link",
        f"appended entry {entry.index} has unexpected pr-link {link!r}",
        changelog.path,
        line,
        f"write `pr-link: XXX` or `pr-link: {expected}`",
        column=column,
        source="pr",
    )


def refusal(
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
