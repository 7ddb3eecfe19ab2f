"""The standing fuzz suite (docs/security.md): hostile changelogs through check,
plan's reader and the merge edits together, and mutations of history.

The default run is bounded to a few seconds; `pytest -m slow tests/test_fuzz.py`
runs the same properties with many more cases (GOV_FUZZ_EXAMPLES overrides).
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.changelog.conflict import resolve_conflict
from governance.changelog.document import parse
from governance.changelog.edit import canonicalize
from governance.changelog.rules import CheckMode, check
from governance.check.render import render_text
from governance.check.service import CheckResult
from governance.core.links import LinkKind, LinkPolicy
from governance.matrix.additions import (
    Where,
    changelog_additions,
    parse_additions,
    validate_entries,
)

POLICY = LinkPolicy()
PR = 5
LINK = "https://github.com/SemiAnalysisAI/InferenceX/pull/{}"
PATH = "perf-changelog.yaml"
SECONDS_PER_CASE = 2.0  # every case here is far inside the bounds

BASE = "".join(
    f'- config-keys:\n    - key-{n}\n  description:\n    - "entry {n}"\n  pr-link: {LINK.format(n)}\n\n'
    for n in (1, 2, 3)
).encode()[:-1]
MAIN_ENTRY = (
    f"\n- config-keys:\n    - main-key\n  description:\n    - m\n  pr-link: {LINK.format(9)}\n"
)

VALUES: dict[str, list[str]] = {
    "config-keys": ["[k]", "\n    - k", '\n    - "k*"', "[]", "k", "!!seq [k]", "[k, k2]"],
    "description": [
        "[d]",
        "\n    - d",
        "\n    - 'a: b'",
        "[yes]",
        '\n    - "x\\ty"',
        "[1]",
        "|\n    x",
    ],
    "pr-link": [
        "XXX",
        "'XXX'",
        '"XXX"',
        LINK.format(PR),
        LINK.format(7),
        LINK.format("XXX"),
        "!!int XXX",
        "!!float XXX",
        "!!str XXX",
        "PLACEHOLDER",
        "",
        "[XXX]",
        "XXX\n    continued",
        LINK.format("0005"),
        LINK.format("٥"),
        LINK.format("9" * 5000),
    ],
    "evals-only": ["true", "false", "!!bool maybe", "yes", "1", '"true"', "null"],
    "append-only": ["true", "false", "on"],
    "eval-min-prefill-ep": ["8", "0", "9" * 5000, "-1", "8.0", '"8"'],
    "scenario-type": ["[fixed-seq-len]", "[agentic-coding]", "[]", "[other]"],
    "extra": ["[[[]]]", "{<<: {a: 1}}", "*a", "&a x", "!custom x", "[" * 100 + "]" * 100],
}
KEYS = [*VALUES, "pr_link", "<<"]
NOISE = [
    "\u2028",
    "\u2029",
    "\x85",
    "\t",
    "\r",
    "#",
    ": ",
    "'",
    '"',
    "[",
    "{",
    "&",
    "*",
    "!",
    " ",
    "\n",
]


def value(draw: Any, key: str) -> str:
    """Half the time one of the first two (benign) values, so many entries pass."""
    values = VALUES.get(key.replace("_", "-"), ["{pr-link: XXX}"])
    return draw(st.one_of(st.sampled_from(values[:2]), st.sampled_from(values)))


@st.composite
def entry(draw: Any) -> str:
    lines = ["- config-keys: " + value(draw, "config-keys")]
    keys = st.one_of(st.sampled_from(KEYS[:7]), st.sampled_from(KEYS))
    for key in draw(st.lists(keys, max_size=3, unique=True)):
        if key not in ("config-keys", "description", "pr-link"):
            lines.append(f"  {key}: {value(draw, key)}")
    if draw(st.integers(0, 4)):  # mostly complete entries, so many are accepted
        lines.append(f"  pr-link: {value(draw, 'pr-link')}")
    if draw(st.integers(0, 4)):
        lines.insert(1, f"  description: {value(draw, 'description')}")
    return "\n".join(lines) + "\n"


# Valid spellings only: these entries are mostly accepted, so the agreement
# between check, plan and the merge edits is exercised, not just refusals.
PLAUSIBLE: dict[str, list[str]] = {
    "config-keys": ["[k]", "\n    - k", '\n    - "k*"', "[k, k2]", "\n    - 'k'\n    - k2"],
    "description": [
        "[d]",
        "\n    - d",
        "\n    - 'a: b'",
        '\n    - "quoted # not a comment"',
        "\n    - first\n    - second  # comment",
        "\n    - >-\n      folded\n      text",
        '["x", y]',
    ],
    "pr-link": ["XXX", "'XXX'", '"XXX"', LINK.format(PR), LINK.format("XXX"), "XXX  # later"],
    "evals-only": ["true", "false", "True"],
    "all-evals": ["true", "false"],
    "append-only": ["true", "false"],
    "eval-min-prefill-ep": ["8", "1", "16"],
    "scenario-type": ["[fixed-seq-len]", "[agentic-coding]", "\n    - fixed-seq-len"],
}


@st.composite
def plausible_entry(draw: Any) -> str:
    keys = ["description", "pr-link"]
    keys += draw(st.lists(st.sampled_from(list(PLAUSIBLE)[3:]), max_size=3, unique=True))
    keys = draw(st.permutations(keys))
    keys_value = draw(st.sampled_from(PLAUSIBLE["config-keys"]))
    lines = ["- config-keys:" + ("" if keys_value.startswith("\n") else " ") + keys_value]
    for key in keys:
        value = draw(st.sampled_from(PLAUSIBLE[key]))
        lines.append(f"  {key}:{'' if value.startswith(chr(10)) else ' '}{value}")
    return "\n".join(lines) + "\n"


@st.composite
def plausible_text(draw: Any) -> bytes:
    entries = draw(st.lists(plausible_entry(), min_size=1, max_size=3))
    return ("\n" + "\n".join(entries)).encode("utf-8")


@st.composite
def appended_text(draw: Any) -> bytes:
    entries = draw(st.lists(entry(), min_size=1, max_size=2))
    text = "\n" + "\n".join(entries)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):  # noise at random places
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(NOISE)) + text[at:]
    return text.encode("utf-8")


def located_inside(data: bytes, violations: Any) -> None:
    last = data.count(b"\n") + 1
    for v in violations:
        assert 1 <= v.line <= last and v.column >= 1, v


def plain(raw: dict[str, Any]) -> dict[str, Any]:
    """An entry as plain data, kebab-case keys (both readers agree on this)."""
    return {k.replace("_", "-"): v for k, v in raw.items()}


def check_plan_merge(tail: bytes) -> None:
    head = BASE + tail
    start = time.perf_counter()
    verdict = check(
        BASE, head, POLICY, CheckMode.pr_mode(PR), trust_base=True, path="perf-changelog.yaml"
    )
    located_inside(head, verdict.violations)
    render_text(CheckResult(verdict, "base", "head", BASE, head))
    if verdict.ok:
        accepted = [plain(e.raw) for e in verdict.additions]
        # plan reads the same blobs and sees the same entries
        additions = changelog_additions(BASE, head, PATH)
        raw = parse_additions(additions)
        entries = validate_entries(raw, Where(PATH, additions.lines))
        assert [plain(dict(r)) for r in raw] == accepted
        assert [e.pr_link for e in entries] == [a["pr-link"] for a in accepted]
        # the merge edits keep every field but the link, and write the PR's link
        canon = canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml")
        assert canon.ok, canon.violations
        merged = check(BASE, canon.data, POLICY, CheckMode.main(PR), path="perf-changelog.yaml")
        assert merged.ok, merged.violations
        links = {a["pr-link"] for a in accepted}
        assert {e.pr_link for e in merged.additions} == {LINK.format(PR)}
        assert [dict(plain(e.raw), **{"pr-link": 0}) for e in merged.additions] == [
            dict(a, **{"pr-link": 0}) for a in accepted
        ], links
        main = BASE + MAIN_ENTRY.encode()
        resolved = resolve_conflict(BASE, head, main, PR, POLICY, path="perf-changelog.yaml")
        assert resolved.ok, resolved.violations
        after = check(
            main, resolved.data, POLICY, CheckMode.pr_mode(PR), path="perf-changelog.yaml"
        )
        assert after.ok, after.violations
        assert [dict(plain(e.raw), **{"pr-link": 0}) for e in after.additions] == [
            dict(a, **{"pr-link": 0}) for a in accepted
        ]
    else:
        for result in (canonicalize(BASE, head, PR, POLICY, path="perf-changelog.yaml"),):
            assert not result.ok
            located_inside(head, result.violations)
    assert time.perf_counter() - start < SECONDS_PER_CASE


# -- history mutations ------------------------------------------------------------------


@st.composite
def mutated_history(draw: Any) -> bytes:
    data = bytearray(BASE)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "link"]))
        at = draw(st.integers(0, len(data) - 1))
        if kind == "insert":
            data[at:at] = draw(st.sampled_from([*NOISE, "x", "- ", "  pr-link: XXX\n"])).encode()
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 8))]
        elif kind == "replace":
            data[at : at + 1] = draw(st.sampled_from(["y", " ", "\n", "0", "'"])).encode()
        else:
            n = draw(st.sampled_from(["1", "2", "3"]))
            old = LINK.format(n).encode()
            new = draw(st.sampled_from([LINK.format(8), "XXX", LINK.format("08"), "'x'"]))
            data = bytearray(bytes(data).replace(old, new.encode(), 1))
    if draw(st.booleans()):
        data += MAIN_ENTRY.replace(LINK.format(9), "XXX").encode()
    return bytes(data)


def history_kept(head: bytes) -> None:
    verdict = check(BASE, head, POLICY, CheckMode.pr_mode(PR), path="perf-changelog.yaml")
    located_inside(head, verdict.violations)
    if not verdict.ok:
        return
    old = parse(BASE, PATH).changelog
    new = parse(head, PATH).changelog
    assert old is not None and new is not None
    assert len(new.entries) >= len(old.entries)
    for before, after in zip(old.entries, new.entries, strict=False):
        if old.block(before) == new.block(after):
            continue
        # the only accepted change to history: a canonical pr-link correction
        assert {k: v for k, v in before.raw.items() if k != "pr-link"} == {
            k: v for k, v in after.raw.items() if k != "pr-link"
        }
        assert POLICY.classify(str(after.pr_link)) is LinkKind.CANONICAL
        changed = [
            (a, b)
            for a, b in zip(
                old.block(before).split(b"\n"), new.block(after).split(b"\n"), strict=True
            )
            if a != b
        ]
        assert all(
            a.startswith(b"  pr-link: ") and b.startswith(b"  pr-link: ") for a, b in changed
        )


EXAMPLES = int(os.environ.get("GOV_FUZZ_EXAMPLES", "0"))
FAST = settings(
    max_examples=EXAMPLES or 60,
    deadline=None,
    derandomize=not EXAMPLES,  # the default run is the same every time
    suppress_health_check=[HealthCheck.too_slow],
)
SLOW = settings(FAST, max_examples=EXAMPLES or 3000, derandomize=False)


@FAST
@given(appended_text())
def test_appended_entries_check_plan_and_merge_agree(tail: bytes) -> None:
    check_plan_merge(tail)


@FAST
@given(plausible_text())
def test_plausible_entries_check_plan_and_merge_agree(tail: bytes) -> None:
    check_plan_merge(tail)


@FAST
@given(mutated_history())
def test_history_mutations_are_refused_except_link_corrections(head: bytes) -> None:
    history_kept(head)


@pytest.mark.slow
@SLOW
@given(appended_text())
def test_appended_entries_long_run(tail: bytes) -> None:
    check_plan_merge(tail)


@pytest.mark.slow
@SLOW
@given(plausible_text())
def test_plausible_entries_long_run(tail: bytes) -> None:
    check_plan_merge(tail)


@pytest.mark.slow
@SLOW
@given(mutated_history())
def test_history_mutations_long_run(head: bytes) -> None:
    history_kept(head)
