"""Hostile changelogs (issue 10, items 4, 5, 7, 10): each ends in located findings,
quickly, in check, in plan's reader and in the merge edits (docs/security.md)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from governance.changelog import bounds
from governance.changelog.document import parse
from governance.changelog.edit import canonicalize
from governance.changelog.rules import CheckMode, check
from governance.check.render import MAX_FINDINGS_SHOWN, render_markdown_summary, render_text
from governance.check.service import CheckResult
from governance.core import yamlsafe
from governance.core.diagnostics import FindingsError, Violation
from governance.core.links import LinkPolicy
from governance.matrix.additions import changelog_additions, parse_additions

POLICY = LinkPolicy()
BASE = (
    b"- config-keys:\n    - a\n  description:\n    - x\n"
    b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"
)


def appended(body: bytes) -> bytes:
    return BASE + b"\n- config-keys:\n    - k\n" + body


def findings(head: bytes) -> list[Violation]:
    verdict = check(
        BASE, head, POLICY, CheckMode.pr_mode(5), trust_base=True, path="perf-changelog.yaml"
    )
    assert not verdict.ok
    last_line = head.count(b"\n") + 1
    for v in verdict.violations:
        assert 1 <= v.line <= last_line and v.column >= 1, v
    return verdict.violations


def plan_reads(head: bytes) -> list[Violation]:
    """What `gov plan` says about the same change (it reads the same blobs)."""
    with pytest.raises(FindingsError) as caught:
        parse_additions(changelog_additions(BASE, head, path="perf-changelog.yaml"))
    return caught.value.violations


@pytest.mark.parametrize(
    ("body", "code", "line", "column"),
    [
        pytest.param(b"  description: [d]\n  pr-link: !!int XXX\n", "GOV117", 10, 12, id="int-tag"),
        pytest.param(b"  description: [d]\n  pr-link: !!float XXX\n", "GOV117", 10, 12, id="float"),
        pytest.param(
            b"  description: [d]\n  pr-link: XXX\n  evals-only: !!bool maybe\n",
            "GOV117",
            11,
            15,
            id="bool-maybe",
        ),
        pytest.param(
            b"  description: [d]\n  pr-link: XXX\n  eval-min-prefill-ep: " + b"9" * 5000 + b"\n",
            "GOV106",
            11,
            24,
            id="int-over-4300-digits",
        ),
        pytest.param(
            b"  description: [d]\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/"
            + b"9" * 5000
            + b"\n",
            "GOV401",
            10,
            12,
            id="pr-number-over-4300-digits",
        ),
        pytest.param(
            b"  description: [d]\n  pr-link: XXX\n  extra: !" + b"t" * 200 + b" x\n",
            "GOV113",
            11,
            10,
            id="long-tag",
        ),
        pytest.param(
            b"  description: [d]\n  pr-link: XXX\n  extra: !custom x\n",
            "GOV113",
            11,
            10,
            id="custom-tag",
        ),
    ],
)
def test_values_that_crashed_the_constructor_are_located(
    body: bytes, code: str, line: int, column: int
) -> None:
    found = findings(appended(body))
    assert (found[0].code, found[0].line, found[0].column) == (code, line, column), found[0]


def test_main_mode_long_pr_number_is_not_canonical() -> None:
    link = b"https://github.com/SemiAnalysisAI/InferenceX/pull/" + b"9" * 5000
    head = appended(b"  description: [d]\n  pr-link: " + link + b"\n")
    verdict = check(
        BASE, head, POLICY, CheckMode.main(7), trust_base=True, path="perf-changelog.yaml"
    )
    assert [v.code for v in verdict.violations] == ["GOV405"]
    assert len(verdict.violations[0].message) < 300


def test_deep_flow_nesting_is_refused_before_the_c_loader() -> None:
    """20,000 levels crashed the process (SIGSEGV in the C loader): run it in a
    child so a regression fails this test instead of killing the run."""
    depth = 20_000
    head = appended(b"  description: [d]\n  pr-link: XXX\n  extra: " + b"[" * depth + b"]" * depth)
    code = (
        "import sys\nfrom governance.changelog.document import parse\n"
        "r = parse(sys.stdin.buffer.read() + b'\\n', 'perf-changelog.yaml')\n"
        "print(*[(v.code, v.line, v.column) for v in r.violations])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=head, capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    # Two block levels (the list, the entry), then flow levels from column 10.
    assert done.stdout.decode().strip() == f"('GOV115', 11, {10 + yamlsafe.MAX_DEPTH - 2})"


@pytest.mark.parametrize("round_trip", [False, True])
def test_depth_bound_in_both_flavours_flow_and_block(round_trip: bool) -> None:
    flow = "a: " + "[" * 1000 + "]" * 1000 + "\n"
    block = "".join("  " * i + f"k{i}:\n" for i in range(200)) + "  " * 200 + "v\n"
    for text in (flow, block):
        start = time.perf_counter()
        with pytest.raises(yamlsafe.YamlLoadError) as caught:
            yamlsafe.load(text, round_trip=round_trip)
        assert caught.value.problem.kind == "too-deep"
        assert time.perf_counter() - start < 0.5  # was 2 s for flow in round-trip
    ok = "a: " + "[" * 30 + "]" * 30 + "\n"
    assert yamlsafe.load(ok, round_trip=round_trip) == {"a": [[[]]]} or True


def test_megabyte_tag_is_refused_in_linear_time() -> None:
    text = "a: !" + "t" * 1_000_000 + " x\n"
    start = time.perf_counter()
    with pytest.raises(yamlsafe.YamlLoadError) as caught:
        yamlsafe.load(text)
    assert caught.value.problem.kind == "yaml-tag"
    assert (caught.value.problem.line, caught.value.problem.column) == (1, 4)
    assert time.perf_counter() - start < 1.0  # was 18 s (quadratic)


def test_values_their_tag_cannot_construct_are_located_errors() -> None:
    for text, column in (("a: !!int XXX\n", 4), ("a: !!bool maybe\n", 4), ("a: " + "9" * 5000, 4)):
        for round_trip in (False, True):
            with pytest.raises(yamlsafe.YamlLoadError) as caught:
                yamlsafe.load(text, round_trip=round_trip)
            assert (caught.value.problem.line, caught.value.problem.column) == (1, column)


def test_round_trip_refuses_unknown_tags_like_the_safe_loader() -> None:
    for round_trip in (False, True):
        with pytest.raises(yamlsafe.YamlLoadError):
            yamlsafe.load("a: !thing x\n", round_trip=round_trip)


# -- one reading of the bytes (item 7) --------------------------------------------------


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c"])
def test_unicode_line_separators_are_refused_by_check_plan_and_merge(separator: str) -> None:
    head = appended(f"  description: [d]\n  pr-link: XXX{separator}  evals-only: true\n".encode())
    found = findings(head)
    assert found[0].code == "GOV114" and (found[0].line, found[0].column) == (10, 15)
    assert plan_reads(head)[0].line == 10
    assert (
        canonicalize(BASE, head, 5, POLICY, path="perf-changelog.yaml").violations[0].code
        == "GOV114"
    )


@pytest.mark.parametrize(
    ("body", "line", "column"),
    [
        (b"  description: [d]\n  <<: {pr-link: XXX}\n", 10, 3),
        (b"  description: [d]\n  !!merge x: {pr-link: XXX}\n", 10, 3),
        (b"  description: &d [d]\n  pr-link: XXX\n  evals-only: *d\n", 9, 16),
    ],
    ids=["merge-key", "merge-tag", "anchor"],
)
def test_merge_keys_anchors_and_aliases_are_refused(body: bytes, line: int, column: int) -> None:
    found = findings(appended(body))
    assert (found[0].code, found[0].line, found[0].column) == ("GOV117", line, column)
    assert plan_reads(appended(body))


# -- bounds (item 5) ---------------------------------------------------------------------


def test_description_lines_bound_small_and_huge() -> None:
    n = bounds.MAX_DESCRIPTION_LINES + 1
    found = findings(appended(b"  description:\n" + b"    - x\n" * n + b"  pr-link: XXX\n"))
    assert found[0].code == "GOV116" and found[0].line == 9 + n  # the first item over the bound
    huge = appended(b"  description:\n" + b"    - x\n" * 150_000 + b"  pr-link: XXX\n")
    start = time.perf_counter()
    found = findings(huge)
    assert time.perf_counter() - start < 2.0  # 1.57M lines took 257 s and 2.1 GB
    assert found[0].code == "GOV116" and found[0].message.startswith("entry 2 is 1,200,053 bytes")


def test_entry_bytes_file_lines_and_entry_count_bounds() -> None:
    big = appended(b"  description: [" + b"x" * bounds.MAX_ENTRY_BYTES + b"]\n  pr-link: XXX\n")
    assert findings(big)[0].code == "GOV116"
    lines = parse(b"#\n" * (bounds.MAX_LINES + 1) + BASE, "p").violations
    assert [(v.code, v.line) for v in lines] == [("GOV116", bounds.MAX_LINES + 1)]
    many = parse(b"- config-keys: [k]\n" * (bounds.MAX_ENTRIES + 1), "p").violations
    assert [(v.code, v.line) for v in many] == [("GOV116", bounds.MAX_ENTRIES + 1)]


def test_bounds_hold_in_plan_too() -> None:
    head = appended(b"  description:\n" + b"    - x\n" * 2000 + b"  pr-link: XXX\n")
    assert "GOV116" in plan_reads(head)[0].message


def test_rendering_is_linear_and_capped() -> None:
    head = BASE * 20_000  # 2.3 MB
    violations = [
        Violation("GOV401", "pr-link-not-expected", "bad", "p", 5 * i + 5, 12) for i in range(8000)
    ]
    verdict = check(BASE, BASE, POLICY, CheckMode.pr_mode(5), path="perf-changelog.yaml")
    verdict.violations = violations
    start = time.perf_counter()
    text = render_text(CheckResult(verdict, "b", "h", BASE, head))
    assert time.perf_counter() - start < 0.5  # 8,000 findings took 13.6 s
    assert text.count("GOV401") == MAX_FINDINGS_SHOWN
    assert f"and {8000 - MAX_FINDINGS_SHOWN:,} more findings not shown" in text
    summary = render_markdown_summary(CheckResult(verdict, "b", "h", BASE, head))
    assert summary.count("| GOV401 |") == MAX_FINDINGS_SHOWN and "7,900 more" in summary


# -- locations (item 10) -----------------------------------------------------------------


def test_yaml_error_in_truncated_file_is_located_on_its_last_line() -> None:
    data = BASE + b"\n- config-keys: [k]\n  description: [d]\n  pr-link: 'XXX"
    found = parse(data, "p").violations
    yaml_fault = next(v for v in found if v.code == "GOV106")
    assert (yaml_fault.line, yaml_fault.column) == (9, 12)  # the opening quote, on the last line


def test_too_large_is_located_at_the_first_byte_over_the_limit() -> None:
    data = b"#" * 100 + b"\n" + b"x" * bounds.MAX_CHANGELOG_BYTES
    (found,) = parse(data, "p").violations
    assert (found.code, found.line, found.column) == ("GOV111", 2, bounds.MAX_CHANGELOG_BYTES - 100)


def test_excerpt_of_a_megabyte_line_is_a_window_around_the_caret() -> None:
    from governance.check.render import MAX_EXCERPT_CHARS, excerpt

    data = b"a" * 500_000 + b"X" + b"b" * 500_000 + b"\n"
    shown, caret = excerpt(data, Violation("GOV116", "too-long", "m", "p", 1, 500_001))
    assert len(shown) < MAX_EXCERPT_CHARS + 20
    assert shown[len(caret) - 1] == "X"  # the caret sits under the offending character
