"""check(base, head, policy, mode) -> Verdict: the append-only rules.

Pure: bytes and plain data in, a Verdict out. docs/rules.md: 'Comparing base and
head', 'Byte regimes', 'pr-link policy', plus gov's stricter rules on appended
entries (plain link numbers, whitespace) and, when master keys are given,
config-key resolution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from governance.changelog.bounds import ENTRY_START
from governance.changelog.document import (
    Changelog,
    Entry,
    ParseResult,
    parse,
)
from governance.changelog.entry_fields import FIELD_ALIASES
from governance.changelog.keys import resolve_entry_keys
from governance.changelog.layout import appended_whitespace, byte_rules, hidden_characters
from governance.changelog.modes import CheckMode, Mode
from governance.changelog.positions import locate, value_position
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.core.links import MAX_PR_DIGITS, LinkKind, LinkPolicy, link_text


@dataclass(slots=True)
class Verdict:
    mode: CheckMode
    path: str
    violations: list[Violation] = field(default_factory=list)
    additions: list[Entry] = field(default_factory=list)
    corrections: list[int] = field(default_factory=list)  # 1-based entry indices
    config_keys: list[str] = field(default_factory=list)
    head: Changelog | None = None
    # Findings that do not fail the check (GOV209 hidden characters).
    warnings: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


@dataclass(frozen=True, slots=True)
class KnownKeys:
    """Master config keys to resolve against, and how to name their files."""

    keys: Sequence[str]
    files: str = "the master configs"


def check(
    base: bytes | None,
    head: bytes,
    policy: LinkPolicy,
    mode: CheckMode,
    *,
    path: str,
    trust_base: bool = False,
    known_keys: KnownKeys | None = None,
) -> Verdict:
    """Validate the change base -> head of one changelog.

    With `trust_base`, base bytes are assumed to have been validated when they
    landed: when head extends them by appending, only the appended entries are
    parsed (the common case costs one entry, not the whole file).
    """
    verdict = Verdict(mode, path)
    if base and not base.endswith(b"\n") and head.startswith(base + b"\n"):
        # The change repairs history's missing final newline (the base's
        # GOV101); history is otherwise kept, so judge it from the repaired base.
        base += b"\n"
        verdict.warnings.append(
            violation(
                "GOV316",
                "this change adds the final newline history lacked; nothing else of history "
                "changed",
                path,
                base.count(b"\n"),
                1,
                "nothing to do: a note for reviewers",
            )
        )
    trusted = trust_base and base is not None and _appends_only(base, head)
    if base is None:  # the file is new: no history to protect
        base_parsed = ParseResult(Changelog(path, b"", ()), ())
        base = b""
    else:
        # Trusted: base entries are only located (a prefix beyond the file).
        base_parsed = parse(
            base, path, source="base", trusted_prefix=len(base) + 1 if trusted else 0
        )
    head_parsed = parse(head, path, trusted_prefix=len(base) if trusted else 0)
    verdict.violations += [*base_parsed.violations, *head_parsed.violations]
    if base_parsed.changelog is None or head_parsed.changelog is None:
        return verdict
    old, new = base_parsed.changelog, head_parsed.changelog
    verdict.head = new

    if not _compare_entries(old, new, policy, verdict):
        return verdict
    verdict.additions = list(new.entries[len(old.entries) :])
    if verdict.corrections and verdict.additions:
        first = verdict.additions[0]
        verdict.violations.append(
            violation(
                "GOV303",
                f"this change corrects {len(verdict.corrections)} historical pr-link(s) "
                f"and appends {len(verdict.additions)} entr(y/ies)",
                path,
                first.line,
                1,
                "split it: one change for the pr-link corrections, one for the new entries",
            )
        )
        return verdict
    for entry in verdict.additions:
        verdict.violations += _link_policy(new, entry, policy, mode)
        verdict.violations += _spelling(new, entry)
        verdict.violations += _strict_types(new, entry)
    verdict.violations += byte_rules(
        base, head, new.path, len(verdict.additions), len(verdict.corrections)
    )
    if verdict.additions:
        verdict.violations += appended_whitespace(new, verdict.additions)
        verdict.warnings += hidden_characters(new, verdict.additions)
    if known_keys is not None and verdict.additions:
        keys, problems = resolve_entry_keys(
            new, verdict.additions, known_keys.keys, known_keys.files
        )
        verdict.config_keys = keys
        verdict.violations += problems
    return verdict


def _appends_only(base: bytes, head: bytes) -> bool:
    """head = base + (blank lines) + whole new entries."""
    if not head.startswith(base) or not base.endswith(b"\n"):
        return False
    match = ENTRY_START.search(head, len(base))
    gap_end = match.start() if match else len(head)
    if gap_end > len(base) and head[gap_end - 1 : gap_end] != b"\n":
        return False  # the gap must end at a line start
    return not head[len(base) : gap_end].strip(b" \n")


# -- entry comparison ------------------------------------------------------------


def _compare_entries(old: Changelog, new: Changelog, policy: LinkPolicy, verdict: Verdict) -> bool:
    """Deleted / modified entries and pr-link corrections. False stops the check."""
    path = new.path
    b, h = len(old.entries), len(new.entries)
    if h < b:
        first = next(
            (i for i in range(h) if not _same(old, old.entries[i], new, new.entries[i])), h
        )
        line = new.entries[first].line if first < h else new.data.count(b"\n") + 1
        verdict.violations.append(
            violation(
                "GOV301",
                f"{b - h} entr{'y was' if b - h == 1 else 'ies were'} deleted "
                f"(base has {b}, head has {h}); the first missing one is entry {first + 1}",
                path,
                line,
                1,
                "restore the base file (git checkout <base> -- perf-changelog.yaml), "
                "then append your entry at the end",
            )
        )
        return False
    for i in range(b):
        before, after = old.entries[i], new.entries[i]
        if _same(old, before, new, after):
            continue
        if _without_link(before.raw) != _without_link(after.raw):
            verdict.violations.append(_modified(old, new, i, h))
            return False
        link = link_text(after.pr_link)
        kind = policy.classify(link)
        if kind is not LinkKind.CANONICAL:
            line, column = value_position(new, after, "pr-link")
            code = "GOV405" if kind is LinkKind.LOOSE_NUMBER else "GOV403"
            verdict.violations.append(
                violation(
                    code,
                    f"entry {after.index}: pr-link correction {_short(link)!r} is not a canonical link",
                    path,
                    line,
                    column,
                    f"write the full link, e.g. {policy.expected(1234)}",
                )
            )
        verdict.corrections.append(after.index)
    return True


def _same(old: Changelog, a: Entry, new: Changelog, b: Entry) -> bool:
    if old.block(a) == new.block(b):
        return True  # identical bytes parse identically (and trusted entries are unparsed)
    return a.raw is not None and b.raw is not None and a.raw == b.raw


def _without_link(raw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in raw.items() if k != "pr-link"}


def _modified(old: Changelog, new: Changelog, i: int, h: int) -> Violation:
    before, after = old.entries[i], new.entries[i]
    line, column = _first_difference(old.block(before), new.block(after), after.line)
    b = len(old.entries)
    inserted = h > b and all(
        _same(old, old.entries[j], new, new.entries[j + 1]) for j in range(i, b)
    )
    if inserted:
        return violation(
            "GOV302",
            f"a new entry was inserted as entry {after.index}, in the middle of history",
            new.path,
            after.line,
            1,
            "move it to the end of the file, after one empty line (`gov check --fix` does it)",
        )
    return violation(
        "GOV302",
        f"entry {after.index} changed; existing entries are immutable except for "
        "pr-link-only corrections",
        new.path,
        line,
        column,
        "restore this entry from the base and describe the change in a new entry at the end",
    )


def _first_difference(a: bytes, b: bytes, first_line: int) -> tuple[int, int]:
    a_lines, b_lines = a.split(b"\n"), b.split(b"\n")
    for k, (x, y) in enumerate(zip(a_lines, b_lines, strict=False)):
        if x != y:
            column = next((c for c, (p, q) in enumerate(zip(x, y, strict=False)) if p != q), None)
            column = min(len(x), len(y)) if column is None else column
            return first_line + k, len(y[:column].decode("utf-8", "replace")) + 1
    return first_line + min(len(a_lines), len(b_lines)) - 1, 1


# -- link policy ------------------------------------------------------------------


def _link_policy(
    new: Changelog, entry: Entry, policy: LinkPolicy, mode: CheckMode
) -> list[Violation]:
    link = link_text(entry.pr_link)
    kind = policy.classify(link)

    def bad(code: str, message: str, hint: str) -> list[Violation]:
        # Located only for a finding: the position costs a round-trip parse.
        line, column = value_position(new, entry, "pr-link")
        return [violation(code, f"entry {entry.index}: {message}", new.path, line, column, hint)]

    placeholder = "XXX"
    if mode.kind is Mode.PR:
        assert mode.pr is not None
        expected = policy.expected(mode.pr)
        if link == expected or kind is LinkKind.PLACEHOLDER:
            return []
        if kind is LinkKind.CANONICAL and policy.number(link) == mode.pr:
            return []  # a former name's link: canonical only in a history replay
        why = f"new PR entry must use {expected!r} or an {placeholder} placeholder; found {_short(link)!r}"
        if policy.looks_like_placeholder(link):
            hint = f"write exactly `pr-link: {placeholder}`; gov prepare-merge fills in {expected}"
        elif kind is LinkKind.CANONICAL:
            hint = (
                f"this links PR #{policy.number(link)}; an entry appended by PR "
                f"#{mode.pr} links #{mode.pr} (or write `pr-link: {placeholder}`)"
            )
        else:
            hint = f"write `pr-link: {placeholder}` (or `pr-link: {expected}`)"
        return bad("GOV401", why, hint)
    if kind is LinkKind.LOOSE_NUMBER:
        return bad(
            "GOV405",
            f"pr-link {_short(link)!r} has a PR number that is not a plain decimal",
            f"write the number in ASCII digits without leading zeros (at most {MAX_PR_DIGITS})",
        )
    if mode.kind is Mode.MAIN:
        if kind is not LinkKind.CANONICAL:
            return bad(
                "GOV402",
                f"new main-branch entry has invalid pr-link: {_short(link)!r}",
                f"entries on main carry the merged PR's link, e.g. {policy.expected(1234)}",
            )
        if mode.pr is not None and policy.number(link) != mode.pr:
            return bad(
                "GOV404",
                f"pr-link names PR #{policy.number(link)} but this change is PR #{mode.pr}",
                f"write `pr-link: {policy.expected(mode.pr)}`",
            )
        return []
    if kind in (LinkKind.CANONICAL, LinkKind.PLACEHOLDER):
        return []
    return bad(
        "GOV401",
        f"pr-link {_short(link)!r} is neither a placeholder nor a canonical link",
        f"write `pr-link: {placeholder}` until the PR number is known",
    )


_STRICT_TYPES = {
    "evals-only": (bool, "true or false"),
    "all-evals": (bool, "true or false"),
    "append-only": (bool, "true or false"),
    "eval-min-prefill-ep": (int, "a plain integer such as 8"),
}


def _strict_types(new: Changelog, entry: Entry) -> list[Violation]:
    """Stricter than the reference check, as strict as its plan (GOV208): the
    schema coerces `"true"`, `1` or `"8"`, the plan's reader refuses them, so
    an appended entry writes the type itself."""
    found = []
    for key, value in entry.raw.items():
        kebab = str(key).replace("_", "-")
        if kebab not in _STRICT_TYPES or value is None:
            continue
        kind, spelled = _STRICT_TYPES[kebab]
        if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
            continue
        line, column = value_position(new, entry, key)
        found.append(
            violation(
                "GOV208",
                f"entry {entry.index}: {kebab} is {value!r:.40}, not {spelled}",
                new.path,
                line,
                column,
                f"write `{kebab}: {'true' if kind is bool else '8'}` (unquoted)",
            )
        )
    return found


def _short(link: str) -> str:
    """A link as shown in a message: long ones are cut (the location points at it)."""
    return link if len(link) <= 120 else link[:120] + "…"


def _spelling(new: Changelog, entry: Entry) -> list[Violation]:
    """Stricter than the reference: snake_case field names in new entries (GOV207)."""
    found = []
    snake_to_kebab = {snake: kebab for kebab, snake in FIELD_ALIASES.items() if "-" in kebab}
    for key in entry.raw:
        if key in snake_to_kebab:
            line, column = locate(new, entry, (key,))
            found.append(
                violation(
                    "GOV207",
                    f"entry {entry.index}: field {key!r} is spelled in snake_case",
                    new.path,
                    line,
                    column,
                    f"write `{snake_to_kebab[key]}`",
                )
            )
    return found
