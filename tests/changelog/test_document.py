"""Bad input: every malformed changelog gets a located violation, never an exception."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from governance.changelog.document import parse

GOOD = (
    b"- config-keys:\n"
    b"    - dsv4-fp8-mi300x-vllm\n"
    b"  description:\n"
    b'    - "Bring up"\n'
    b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2188\n"
)


def entry(body: str) -> bytes:
    return ("- config-keys:\n    - k\n" + body).encode()


@pytest.mark.parametrize(
    ("data", "code", "line", "column"),
    [
        pytest.param(GOOD[:-1], "GOV101", 5, 66, id="truncated-no-final-newline"),
        pytest.param(b"", "GOV101", 1, 1, id="empty-file"),
        pytest.param(GOOD.replace(b"\n", b"\r\n"), "GOV102", 1, 15, id="crlf"),
        pytest.param(
            GOOD.replace(b'"Bring up"', b'"Bring\tup"'), "GOV103", 4, 13, id="tab-in-string"
        ),
        pytest.param(GOOD.replace(b"Bring", b"Br\0ng"), "GOV104", 4, 10, id="nul"),
        pytest.param(GOOD.replace(b"Bring", b"Br\xffng"), "GOV105", 4, 10, id="not-utf8"),
        pytest.param(
            GOOD.replace(b'"Bring up"', b'"Bring up'),
            "GOV106",
            4,
            7,
            id="unclosed-quote",  # at the opening quote
        ),
        pytest.param(GOOD + b"  pr-link: XXX\n", "GOV107", 6, 3, id="duplicate-key"),
        pytest.param(b"config-keys: [a]\n", "GOV108", 1, 1, id="root-is-mapping"),
        pytest.param(b"# nothing\n", "GOV108", 1, 1, id="empty-document"),
        pytest.param(GOOD + b"- just a scalar\n", "GOV109", 6, 1, id="scalar-item"),
        pytest.param(
            entry("  description: [x]\n  pr_link: XXX\n  pr-link: XXX\n"),
            "GOV202",
            4,
            3,
            id="both-spellings",
        ),
        pytest.param(
            entry("  description: [x]\n  pr-link: XXX\n  config-key: [b]\n"),
            "GOV202",
            5,
            3,
            id="misspelled-field",
        ),
        pytest.param(entry("  description: [x]\n"), "GOV203", 1, 1, id="missing-pr-link"),
        pytest.param(entry("  description: []\n  pr-link: XXX\n"), "GOV205", 3, 3, id="empty-list"),
        pytest.param(
            entry("  description: [yes]\n  pr-link: XXX\n"), "GOV204", 3, 17, id="yaml11-bool-item"
        ),
        pytest.param(entry("  description: [x]\n  pr-link:\n"), "GOV204", 4, 3, id="null-link"),
        pytest.param(
            entry("  description: [x]\n  pr-link: XXX\n  append-only: true\n  evals-only: true\n"),
            "GOV206",
            1,
            1,
            id="append-only-with-evals",
        ),
        pytest.param(
            entry("  description: !!python/object:os.system [x]\n  pr-link: XXX\n"),
            "GOV113",
            3,
            16,
            id="python-tag",
        ),
    ],
)
def test_bad_input_is_located(data: bytes, code: str, line: int, column: int) -> None:
    result = parse(data, "perf-changelog.yaml")
    assert not result.ok
    first = next(v for v in result.violations if v.code == code)
    assert (first.line, first.column) == (line, column), first
    assert first.path == "perf-changelog.yaml"
    assert first.hint, "every violation tells the user what to do"


def test_alias_bomb_is_refused_quickly() -> None:
    lines = ["- config-keys: &a0 [x]", "  description: [d]", "  pr-link: XXX"]
    lines += [f"  k{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 12) + "]" for i in range(1, 15)]
    result = parse(("\n".join(lines) + "\n").encode(), "perf-changelog.yaml")
    assert [v.code for v in result.violations] == [
        "GOV117"
    ]  # anchors are refused before any alias is counted


def test_fifty_megabyte_file_is_refused_without_parsing() -> None:
    result = parse(GOOD * (50 * 1024 * 1024 // len(GOOD)), "perf-changelog.yaml")
    assert [v.code for v in result.violations] == ["GOV111"]


def test_spans_and_lines_of_a_valid_file() -> None:
    data = GOOD + b"\n" + GOOD.replace(b"2188", b"2189") + b"  \n"
    result = parse(data, "perf-changelog.yaml")
    assert result.ok
    first, second = result.changelog.entries
    assert (first.index, first.line, second.line) == (1, 1, 7)
    assert data[first.start : first.content_end] == GOOD
    assert data[second.start : second.content_end] == GOOD.replace(b"2188", b"2189")
    assert second.end == len(data)


def test_empty_list_is_a_valid_empty_changelog() -> None:
    result = parse(b"[]\n", "perf-changelog.yaml")
    assert result.ok and result.changelog.entries == ()


def test_yaml_11_scalars_resolve_like_the_reference() -> None:
    result = parse(entry("  description: ['on']\n  pr-link: XXX\n  evals-only: yes\n"), "p")
    assert result.ok
    assert result.changelog.entries[0].raw["evals-only"] is True


# Pieces a changelog is made of, and the line breaks that make entries hard to find.
_PIECES = st.sampled_from(
    ["- config-keys:", "- config-keys: [a]", "  - k", "\n", "\r\n", "\r", "\v", "\x85",
     "\u2028", " ", "x", "-", "description:", "é"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=40).map("".join))
@example("- config-keys: [a]\r\n- config-keys:\n")  # a `\r` before the `\n`: no entry
@example("x\n- config-keys:")  # no `\n` ends the line: no entry
@example("- config-keys:\v- config-keys:\n\u2028- config-keys:\n")
def test_entries_are_found_where_the_pattern_matches(text: str) -> None:
    """`entry_starts` (bytes.find) agrees with `ENTRY_START`, the pattern it
    stands for, and `entry_lines` with counting `str.splitlines()` lines."""
    from governance.changelog.bounds import ENTRY_START, entry_starts
    from governance.changelog.document import entry_lines

    data = text.encode("utf-8")
    assert entry_starts(data) == [match.start() for match in ENTRY_START.finditer(data)]
    expected = sum(1 for line in text.splitlines() if line.startswith("- config-keys:"))
    assert entry_lines(text) == expected
