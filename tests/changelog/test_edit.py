"""Unit tests for governance.changelog.edit: canonicalize, resolve_conflict,
merge_driver. Bytes in, bytes out; no git."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from governance.changelog.conflict import resolve_conflict
from governance.changelog.edit import (
    DroppedEntry,
    EditResult,
    LinkRewrite,
    canonicalize,
)
from governance.changelog.merge_driver import merge_driver
from governance.changelog.rules import CheckMode, check
from governance.core.codes import code_for
from governance.core.links import LinkPolicy

POLICY = LinkPolicy()
PR = 4242
EXPECTED = POLICY.expected(PR)
FULL_PLACEHOLDER = "https://github.com/SemiAnalysisAI/InferenceX/pull/XXX"


def link(number: int) -> str:
    return POLICY.expected(number)


def entry(key: str, pr_link: str = "XXX", text: str | None = None) -> bytes:
    return (
        f"- config-keys:\n    - {key}\n  description:\n"
        f'    - "{text or "change " + key}"\n  pr-link: {pr_link}\n'
    ).encode()


def log(*blocks: bytes) -> bytes:
    """A changelog: entries separated by one empty line."""
    return b"\n".join(blocks)


BASE = log(entry("a", link(1)), entry("b", link(2)))


def passes(base: bytes, result: EditResult, pr: int = PR) -> bool:
    return (
        result.ok
        and check(base, result.data, POLICY, CheckMode.pr_mode(pr), path="perf-changelog.yaml").ok
    )


def rules(result: EditResult) -> list[str]:
    return [v.rule for v in result.violations]


# -- canonicalize --------------------------------------------------------------------


def test_placeholder_is_rewritten_to_the_expected_link() -> None:
    head = log(BASE, entry("new"))
    result = canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok and result.changed
    assert result.data == log(BASE, entry("new", EXPECTED))
    assert result.rewrites == (LinkRewrite(3, 17, "XXX", EXPECTED),)
    assert passes(BASE, result)


def test_full_url_and_quoted_placeholders_are_rewritten() -> None:
    head = log(BASE, entry("x", FULL_PLACEHOLDER), entry("why", '"XXX"'))
    result = canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml")
    assert result.data == log(BASE, entry("x", EXPECTED), entry("why", EXPECTED))
    assert [r.old for r in result.rewrites] == [FULL_PLACEHOLDER, "XXX"]


def test_continuation_line_placeholder_is_rewritten_whole() -> None:
    """The reference rewrote only the `  pr-link:` line (docs/merge-differences.md)."""
    block = entry("c").replace(b"  pr-link: XXX\n", b"  pr-link:\n    XXX\n")
    result = canonicalize(BASE, log(BASE, block), PR, POLICY, path="perf-changelog.yaml")
    assert result.ok
    assert result.data.endswith(b"  pr-link:\n    " + EXPECTED.encode() + b"\n")
    assert result.rewrites[0].line == result.data.count(b"\n")
    assert passes(BASE, result)


def test_canonicalize_is_idempotent() -> None:
    first = canonicalize(
        BASE, log(BASE, entry("new"), entry("m")), PR, POLICY, path="perf-changelog.yaml"
    )
    second = canonicalize(BASE, first.data, PR, POLICY, path="perf-changelog.yaml")
    assert second.ok and not second.changed and second.rewrites == ()
    assert second.data == first.data


def test_expected_link_and_no_change_are_left_alone() -> None:
    head = log(BASE, entry("new", EXPECTED))
    assert canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml") == EditResult(head)
    assert canonicalize(BASE, BASE, PR, POLICY, path="perf-changelog.yaml") == EditResult(BASE)


def test_only_appended_placeholders_change() -> None:
    """History may hold placeholders; only the PR's own entries are filled in."""
    base = log(entry("a", "XXX"), entry("b", link(2)))
    result = canonicalize(base, log(base, entry("new")), PR, POLICY, path="perf-changelog.yaml")
    assert result.data == log(base, entry("new", EXPECTED))


def test_corrections_only_change_is_returned_unchanged() -> None:
    head = BASE.replace(link(1).encode(), link(11).encode())
    result = canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok and not result.changed and result.data == head


def test_canonicalize_refuses_a_link_to_another_pr() -> None:
    head = log(BASE, entry("new", link(7)))
    result = canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml")
    assert not result.ok and result.data == head
    (problem,) = result.violations
    assert (problem.code, problem.line) == ("GOV401", 17)


def test_canonicalize_refuses_history_edits() -> None:
    head = log(entry("a", link(1), "rewritten"), entry("b", link(2)), entry("new"))
    result = canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml")
    assert [v.code for v in result.violations] == ["GOV302"]


def test_repository_of_the_policy_is_used() -> None:
    """Repository parameter: the link written is the one the same policy validates."""
    fork = LinkPolicy(repository="acme/InferenceX")
    base = log(entry("a", fork.expected(1)))
    result = canonicalize(base, log(base, entry("new")), 5, fork, path="perf-changelog.yaml")
    assert result.ok and result.data.endswith(b"acme/InferenceX/pull/5\n")


# -- resolve_conflict: additions -------------------------------------------------------


def test_resolve_appends_pr_entries_after_main() -> None:
    main = log(BASE, entry("m", link(3)))
    pr_side = log(BASE, entry("p1"), entry("p2", EXPECTED))
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok and result.changed
    assert result.data == log(main, entry("p1", EXPECTED), entry("p2", EXPECTED))
    assert result.rewrites == (LinkRewrite(4, 23, "XXX", EXPECTED),)
    assert passes(main, result)


def test_resolve_keeps_main_bytes_verbatim() -> None:
    """Main's own quirks (here: a whitespace-only separator line) are kept."""
    main = BASE + b"   \n" + entry("m", link(3))
    result = resolve_conflict(
        BASE, log(BASE, entry("p")), main, PR, POLICY, path="perf-changelog.yaml"
    )
    assert result.data == log(main, entry("p", EXPECTED))


def test_resolve_after_main_ending_in_an_empty_line() -> None:
    main = log(BASE, entry("m", link(3))) + b"\n"
    result = resolve_conflict(
        BASE, log(BASE, entry("p")), main, PR, POLICY, path="perf-changelog.yaml"
    )
    assert result.data == main + entry("p", EXPECTED)


def test_resolve_writes_a_quoted_link_plainly() -> None:
    main = log(BASE, entry("m", link(3)))
    result = resolve_conflict(
        BASE, log(BASE, entry("p", f'"{EXPECTED}"')), main, PR, POLICY, path="perf-changelog.yaml"
    )
    assert result.data == log(main, entry("p", EXPECTED))


def test_resolve_continuation_placeholder() -> None:
    main = log(BASE, entry("m", link(3)))
    block = entry("p").replace(b"  pr-link: XXX\n", b"  pr-link:\n    XXX\n")
    result = resolve_conflict(BASE, log(BASE, block), main, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok
    assert result.data == log(main, block.replace(b"    XXX", b"    " + EXPECTED.encode()))


def test_resolve_keeps_an_addition_that_only_looks_like_history() -> None:
    """Dedupe only what main gained: the PR re-runs entry a's text; main never gained it."""
    main = log(BASE, entry("m", link(3)))
    pr_side = log(BASE, entry("a", "XXX"))
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok and result.dropped == ()
    assert result.data == log(main, entry("a", EXPECTED))


def test_resolve_drops_an_addition_main_already_gained() -> None:
    landed = entry("p1", link(PR))
    main = log(BASE, landed, entry("m", link(3)))
    pr_side = log(BASE, entry("p1"), entry("p2"))
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok
    assert result.dropped == (DroppedEntry(pr_entry=3, main_entry=3),)
    assert result.data == log(main, entry("p2", EXPECTED))


def test_resolve_refuses_when_everything_already_landed() -> None:
    main = log(BASE, entry("p1", link(PR)))
    pr_side = log(BASE, entry("p1"))
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert rules(result) == ["nothing-remaining"]
    problem = result.violations[0]
    assert (problem.code, problem.line, problem.source) == (
        code_for("nothing-remaining"),
        13,
        "pr",
    )
    assert "main entry 3" in problem.message
    assert result.data == pr_side and not result.changed


def test_resolve_refuses_an_invalid_pr_change() -> None:
    pr_side = log(entry("a", link(1)), entry("new"), entry("b", link(2)))  # inserted mid-history
    result = resolve_conflict(
        BASE, pr_side, log(BASE, entry("m", link(3))), PR, POLICY, path="perf-changelog.yaml"
    )
    assert [v.code for v in result.violations] == ["GOV302"]
    assert result.violations[0].line == 7


def test_resolve_refuses_a_broken_main_side() -> None:
    main = log(BASE, entry("m", link(3))).replace(b"    - m", b"    - m\n  evals-only: maybe")
    result = resolve_conflict(
        BASE, log(BASE, entry("p")), main, PR, POLICY, path="perf-changelog.yaml"
    )
    assert not result.ok and {v.source for v in result.violations} == {"main"}


def test_resolve_refuses_when_the_pr_changed_nothing() -> None:
    result = resolve_conflict(
        BASE, BASE, log(BASE, entry("m", link(3))), PR, POLICY, path="perf-changelog.yaml"
    )
    assert rules(result) == ["nothing-to-preserve"]
    assert result.violations[0].code == code_for("nothing-to-preserve")


def test_resolve_when_the_file_is_new_on_both_sides() -> None:
    main = log(entry("m", link(3)))
    result = resolve_conflict(None, log(entry("p")), main, PR, POLICY, path="perf-changelog.yaml")
    assert result.data == log(main, entry("p", EXPECTED))


# -- resolve_conflict: corrections ------------------------------------------------------


def corrected(data: bytes, old: int, new: int) -> bytes:
    return data.replace(link(old).encode(), link(new).encode())


def test_resolve_reapplies_corrections_on_main() -> None:
    pr_side = corrected(BASE, 1, 11)
    main = log(BASE, entry("m", link(3)))
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok
    assert result.data == corrected(main, 1, 11)
    assert result.rewrites == (LinkRewrite(1, 5, link(1), link(11)),)
    assert passes(main, result)


def test_resolve_refuses_corrections_already_on_main() -> None:
    pr_side = corrected(BASE, 1, 11)
    main = log(pr_side, entry("m", link(3)))
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert rules(result) == ["corrections-already-on-main"]


def test_resolve_refuses_a_conflicting_link_on_main() -> None:
    pr_side = corrected(BASE, 1, 11)
    main = corrected(BASE, 1, 12)
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert rules(result) == ["main-conflicting-link"]
    problem = result.violations[0]
    assert (problem.line, problem.column, problem.source) == (5, 12, "main")


def test_resolve_refuses_a_corrected_entry_main_changed() -> None:
    pr_side = corrected(BASE, 2, 12)
    main = BASE.replace(b'"change b"', b'"changed on main"')
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert rules(result) == ["main-changed-corrected"]
    assert result.violations[0].line == 7


def test_resolve_refuses_a_corrected_entry_main_deleted() -> None:
    pr_side = corrected(BASE, 2, 12)
    main = entry("a", link(1))
    result = resolve_conflict(BASE, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert rules(result) == ["main-missing-corrected"]


# -- merge driver ---------------------------------------------------------------------


def test_driver_appends_ours_after_theirs_keeping_placeholders() -> None:
    theirs = log(BASE, entry("m", link(3)))
    ours = log(BASE, entry("p"))
    result = merge_driver(BASE, ours, theirs, None, POLICY, path="perf-changelog.yaml")
    assert result.ok and result.data == log(theirs, entry("p"))


def test_driver_with_a_pr_number_writes_links() -> None:
    theirs = log(BASE, entry("m", link(3)))
    result = merge_driver(
        BASE, log(BASE, entry("p")), theirs, PR, POLICY, path="perf-changelog.yaml"
    )
    assert result.data == log(theirs, entry("p", EXPECTED))


def test_driver_trivial_sides() -> None:
    ours = log(BASE, entry("p"))
    assert merge_driver(BASE, ours, BASE, None, POLICY, path="perf-changelog.yaml").data == ours
    assert merge_driver(BASE, BASE, ours, None, POLICY, path="perf-changelog.yaml").data == ours


def test_driver_refuses_history_edits() -> None:
    theirs = log(BASE, entry("m", link(3)))
    ours = corrected(BASE, 1, 11)
    result = merge_driver(BASE, ours, theirs, None, POLICY, path="perf-changelog.yaml")
    assert rules(result) == ["driver-not-append-only"]
    assert (result.violations[0].line, result.violations[0].source) == (5, "ours")
    assert result.data == ours


def test_driver_refuses_when_main_rewrote_history() -> None:
    theirs = log(entry("a", link(1)), entry("m", link(3)), entry("b", link(2)))
    result = merge_driver(
        BASE, log(BASE, entry("p")), theirs, None, POLICY, path="perf-changelog.yaml"
    )
    assert rules(result) == ["driver-not-append-only"]
    assert result.violations[0].source == "theirs"


# -- property: resolution of independent appends -------------------------------------

KEY = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 .,-_()", min_size=1, max_size=24)
PLACEHOLDERS = st.sampled_from(["XXX", FULL_PLACEHOLDER, EXPECTED])


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[bytes], list[bytes], list[tuple[bytes, bytes]]]:
    """History entries, main's new entries, and the PR's new entries as
    (block as written, block with the canonical link) pairs. Namespaced keys
    keep main's and the PR's additions distinct; a PR entry may reuse a
    history entry's text (which must survive: only what main gained is dropped)."""

    def block(prefix: str, pr_link: str) -> bytes:
        return entry(prefix + draw(KEY), pr_link, draw(TEXT).strip() or "x")

    history = [
        block("h-", link(draw(st.integers(1, 99999)))) for _ in range(draw(st.integers(1, 6)))
    ]
    main = [block("m-", link(draw(st.integers(1, 99999)))) for _ in range(draw(st.integers(0, 4)))]
    additions = []
    for _ in range(draw(st.integers(1, 4))):
        written = draw(PLACEHOLDERS)
        if draw(st.booleans()):
            old = draw(st.sampled_from(history))
            source = old.split(b"  pr-link: ")[0] + f"  pr-link: {written}\n".encode()
        else:
            source = block("p-", written)
        canonical = source.split(b"  pr-link: ")[0] + f"  pr-link: {EXPECTED}\n".encode()
        additions.append((source, canonical))
    return history, main, additions


@settings(max_examples=60, deadline=None)
@given(histories())
def test_resolving_independent_appends(
    case: tuple[list[bytes], list[bytes], list[tuple[bytes, bytes]]],
) -> None:
    history, main_entries, additions = case
    base = log(*history)
    pr_side = log(*history, *(source for source, _ in additions))
    main = log(*history, *main_entries)
    result = resolve_conflict(base, pr_side, main, PR, POLICY, path="perf-changelog.yaml")
    assert result.ok, result.violations
    assert result.data == main + b"\n" + log(*(canonical for _, canonical in additions))
    assert result.dropped == ()
    assert check(main, result.data, POLICY, CheckMode.pr_mode(PR), path="perf-changelog.yaml").ok
    # The merge driver agrees (git calls it only when both sides changed),
    # and canonicalizing the result changes nothing.
    if main_entries:
        assert (
            merge_driver(base, pr_side, main, PR, POLICY, path="perf-changelog.yaml").data
            == result.data
        )
    assert (
        canonicalize(main, result.data, PR, POLICY, path="perf-changelog.yaml").data == result.data
    )


def test_driver_drops_entries_main_already_gained() -> None:
    landed = entry("p", link(PR))
    theirs = log(BASE, landed)
    result = merge_driver(
        BASE, log(BASE, entry("p")), theirs, PR, POLICY, path="perf-changelog.yaml"
    )
    assert result.ok and result.data == theirs
    assert result.dropped == (DroppedEntry(pr_entry=3, main_entry=3),)


def test_comment_after_a_placeholder_is_kept() -> None:
    """Only the value is spliced (the reference discarded the rest of the line)."""
    head = log(BASE, entry("c", "XXX  # filled in at merge"))
    result = canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml")
    assert result.data == log(BASE, entry("c", f"{EXPECTED}  # filled in at merge"))
