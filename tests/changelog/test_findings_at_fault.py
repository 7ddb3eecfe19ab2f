"""Findings at the bytes at fault, one per fault, with hints that say what to
type (adoption-day frictions): whitespace separators, history's whitespace
last line, a base-repair PR, and a YAML error's caret."""

from __future__ import annotations

from governance.changelog.author import fix_appended
from governance.changelog.document import parse
from governance.changelog.rules import CheckMode, check
from tests.changelog.test_edit import POLICY, entry, link, log

BASE = log(entry("a", link(1)), entry("b", link(2)))


def codes(base: bytes, head: bytes) -> list[tuple[str, int, int]]:
    verdict = check(base, head, POLICY, CheckMode(), path="perf-changelog.yaml")
    return [(v.code, v.line, v.column) for v in verdict.violations]


def test_a_whitespace_separator_between_appended_entries_is_one_finding() -> None:
    head = BASE + b"\n" + entry("c") + b"  \n" + entry("d") + b"  \n" + entry("e")
    found = check(BASE, head, POLICY, CheckMode(), path="perf-changelog.yaml").violations
    assert [v.code for v in found] == ["GOV306", "GOV306"]  # not GOV306 + GOV313 each
    first = found[0]
    assert head.split(b"\n")[first.line - 1] == b"  " and first.column == 1
    assert "holds only whitespace" in first.message and "gov check --fix" in first.hint
    fixed, _ = fix_appended(BASE, head, POLICY, path="perf-changelog.yaml")
    assert check(BASE, fixed, POLICY, CheckMode(), path="perf-changelog.yaml").ok


def test_historys_whitespace_last_line_is_named_and_fixed() -> None:
    base = BASE + b"  \n"  # history's own last line holds two spaces
    head = base + entry("c")
    (finding,) = check(base, head, POLICY, CheckMode(), path="perf-changelog.yaml").violations
    line = base.count(b"\n")
    assert (finding.code, finding.line, finding.column) == ("GOV305", line, 3)
    assert f"line {line}, history's last line, holds only whitespace" in finding.message
    assert f"keep line {line} as it is" in finding.hint
    fixed, fixes = fix_appended(base, head, POLICY, path="perf-changelog.yaml")
    assert fixed == base + b"\n" + entry("c")
    assert [f.what for f in fixes] == ["one empty line between history and the new entries"]
    assert check(base, fixed, POLICY, CheckMode(), path="perf-changelog.yaml").ok


def test_a_pr_that_only_adds_historys_missing_final_newline_passes_with_a_note() -> None:
    base = BASE.rstrip(b"\n")
    verdict = check(base, base + b"\n", POLICY, CheckMode.pr_mode(7), path="perf-changelog.yaml")
    assert verdict.ok, verdict.violations
    assert [w.code for w in verdict.warnings] == ["GOV316"]
    # Repairing and appending in one change is judged against the repaired history.
    both = check(
        base, base + b"\n\n" + entry("c"), POLICY, CheckMode.pr_mode(7), path="perf-changelog.yaml"
    )
    assert both.ok and len(both.additions) == 1
    # Anything else done to history is still refused.
    assert not check(
        base, base + b"  \n", POLICY, CheckMode.pr_mode(7), path="perf-changelog.yaml"
    ).ok


def test_an_unclosed_quote_is_located_where_it_opens() -> None:
    head = BASE + b'\n- config-keys:\n    - c\n  description:\n    - "unclosed\n  pr-link: XXX\n'
    fault = next(v for v in parse(head, "p").violations if v.code == "GOV106")
    lines = head.split(b"\n")
    assert lines[fault.line - 1] == b'    - "unclosed' and fault.column == 7
