"""The append-only rules on bytes: each case shows a change and what gov says."""

from __future__ import annotations

import pytest

from governance.changelog.rules import CheckMode, KnownKeys, check
from governance.core.links import LinkPolicy

POLICY = LinkPolicy()
LINK = "https://github.com/SemiAnalysisAI/InferenceX/pull/"


def entry(key: str = "dsv4-fp8-mi300x-vllm", link: str = "XXX", extra: str = "") -> str:
    return f'- config-keys:\n    - {key}\n  description:\n    - "change {key}"\n  pr-link: {link}\n{extra}'


BASE = (entry("a", LINK + "1") + "\n" + entry("b", LINK + "2")).encode()


def codes(base: bytes | None, head: bytes, mode: CheckMode = CheckMode.pr_mode(7)) -> list[str]:
    return [v.code for v in check(base, head, POLICY, mode, path="perf-changelog.yaml").violations]


@pytest.mark.parametrize(
    ("head", "mode", "expected"),
    [
        # accepted
        (BASE + b"\n" + entry().encode(), CheckMode.pr_mode(7), []),
        (BASE + b"\n" + entry(link=LINK + "7").encode(), CheckMode.pr_mode(7), []),
        (BASE + b"\n" + entry(link=f"{LINK}XXX").encode(), CheckMode.pr_mode(7), []),
        (BASE + b"\n" + entry(link=LINK + "7").encode(), CheckMode.main(), []),
        (BASE + b"\n" + entry(link=LINK + "7").encode(), CheckMode.main(expect_pr=7), []),
        (BASE + b"\n" + entry(link="XXX").encode(), CheckMode(), []),
        (BASE, CheckMode.pr_mode(7), []),  # a no-op is valid
        # pr-link policy (PLACEHOLDER is not a placeholder; another PR's number is refused)
        (BASE + b"\n" + entry(link="PLACEHOLDER").encode(), CheckMode.pr_mode(7), ["GOV401"]),
        (BASE + b"\n" + entry(link=LINK + "XXXX").encode(), CheckMode.pr_mode(7), ["GOV401"]),
        (BASE + b"\n" + entry(link=LINK + "6").encode(), CheckMode.pr_mode(7), ["GOV401"]),
        (BASE + b"\n" + entry(link="TBD").encode(), CheckMode(), ["GOV401"]),
        (BASE + b"\n" + entry(link="XXX").encode(), CheckMode.main(), ["GOV402"]),
        (BASE + b"\n" + entry(link=LINK + "7/changes").encode(), CheckMode.main(), ["GOV402"]),
        (BASE + b"\n" + entry(link=LINK + "6").encode(), CheckMode.main(expect_pr=7), ["GOV404"]),
        # numbers the reference's \d accepts (GOV405)
        (BASE + b"\n" + entry(link=LINK + "٩٥").encode(), CheckMode.main(), ["GOV405"]),
        (BASE + b"\n" + entry(link=LINK + "0095").encode(), CheckMode.main(), ["GOV405"]),
        (BASE + b"\n" + entry(link=LINK + "0").encode(), CheckMode.main(), ["GOV405"]),
        # history
        (entry("a", LINK + "1").encode(), CheckMode.pr_mode(7), ["GOV301"]),
        (BASE.replace(b'"change b"', b'"changed b"'), CheckMode.pr_mode(7), ["GOV302"]),
        (
            (entry("a", LINK + "1") + "\n" + entry() + "\n" + entry("b", LINK + "2")).encode(),
            CheckMode.pr_mode(7),
            ["GOV302"],
        ),
        (
            BASE.replace(b"\n\n", b"\n\n\n") + b"\n" + entry().encode(),
            CheckMode.pr_mode(7),
            ["GOV304"],
        ),
        (BASE + entry().encode(), CheckMode.pr_mode(7), ["GOV305"]),
        (BASE + b"\n\n" + entry().encode(), CheckMode.pr_mode(7), ["GOV305"]),
        (BASE + b"\n" + entry().encode() + entry("c").encode(), CheckMode.pr_mode(7), ["GOV306"]),
        (BASE + b"\n" + entry().encode() + b"\n", CheckMode.pr_mode(7), ["GOV307"]),
        (BASE + b"\n", CheckMode.pr_mode(7), ["GOV311"]),
        # corrections
        (BASE.replace(LINK.encode() + b"2", LINK.encode() + b"20"), CheckMode.pr_mode(7), []),
        (BASE.replace(LINK.encode() + b"2", b"XXX"), CheckMode.pr_mode(7), ["GOV403"]),
        (
            BASE.replace(LINK.encode() + b"2", LINK.encode() + b"20") + b"\n" + entry().encode(),
            CheckMode.pr_mode(7),
            ["GOV303"],
        ),
        (
            BASE.replace(
                b"  pr-link: " + LINK.encode() + b"2", b"  pr-link:\n    " + LINK.encode() + b"20"
            ),
            CheckMode.pr_mode(7),
            ["GOV308"],
        ),
        # whitespace the reference lets through (GOV312-GOV314)
        (BASE + b"\n" + entry(link="XXX  ").encode(), CheckMode.pr_mode(7), ["GOV312"]),
        (
            BASE + b"\n" + entry(extra="   \n  evals-only: true\n").encode(),
            CheckMode.pr_mode(7),
            ["GOV313"],
        ),
        (BASE + b"\n" + entry().encode() + b"   \n", CheckMode.pr_mode(7), ["GOV314"]),
        # spelling
        (
            BASE + b"\n" + entry().replace("pr-link", "pr_link").encode(),
            CheckMode.pr_mode(7),
            ["GOV207"],
        ),
    ],
)
def test_rules(head: bytes, mode: CheckMode, expected: list[str]) -> None:
    assert codes(BASE, head, mode) == expected
    # The append-only fast path must reach the same verdict as a full parse.
    fast = [
        v.code
        for v in check(
            BASE, head, POLICY, mode, trust_base=True, path="perf-changelog.yaml"
        ).violations
    ]
    assert fast == expected


def test_insertion_in_the_middle_is_named_as_such() -> None:
    head = (entry("a", LINK + "1") + "\n" + entry() + "\n" + entry("b", LINK + "2")).encode()
    (v,) = check(BASE, head, POLICY, CheckMode.pr_mode(7), path="perf-changelog.yaml").violations
    assert "inserted as entry 2" in v.message
    assert (v.line, v.column) == (7, 1)
    assert "end of the file" in v.hint


def test_modified_entry_points_at_the_first_differing_line() -> None:
    head = BASE.replace(b'"change b"', b'"changed b"')
    (v,) = check(BASE, head, POLICY, CheckMode.pr_mode(7), path="perf-changelog.yaml").violations
    assert (v.line, v.column) == (10, 14)


def test_separator_violation_points_at_the_separator() -> None:
    head = BASE + b"\n" + entry().encode() + entry("c").encode()
    (v,) = check(BASE, head, POLICY, CheckMode.pr_mode(7), path="perf-changelog.yaml").violations
    assert v.line == 17  # the last line of the previous entry, where the empty line belongs


def test_link_violation_points_at_the_value() -> None:
    head = BASE + b"\n" + entry(link="PLACEHOLDER").encode()
    (v,) = check(BASE, head, POLICY, CheckMode.pr_mode(7), path="perf-changelog.yaml").violations
    assert (v.line, v.column) == (17, 12)
    assert "pr-link: XXX" in v.hint


def test_new_file_has_no_history_to_protect() -> None:
    assert codes(None, entry().encode()) == []


def test_repository_setting_is_honoured_everywhere() -> None:
    # The reference hard-codes the repository in validation; gov uses the setting.
    policy = LinkPolicy(repository="acme/bench")
    head = BASE + b"\n" + entry(link="https://github.com/acme/bench/pull/7").encode()
    assert check(BASE, head, policy, CheckMode.pr_mode(7), path="perf-changelog.yaml").ok
    wrong = BASE + b"\n" + entry(link=LINK + "7").encode()
    assert not check(BASE, wrong, policy, CheckMode.pr_mode(7), path="perf-changelog.yaml").ok


def test_config_keys_resolve_with_wildcards_and_suggestions() -> None:
    known = KnownKeys(["dsv4-fp8-mi300x-vllm", "dsv4-fp8-mi300x-vllm-mtp", "a", "b"], "configs")
    head = BASE + b"\n" + entry("dsv4-fp8-mi300x-*").encode()
    verdict = check(
        BASE, head, POLICY, CheckMode.pr_mode(7), known_keys=known, path="perf-changelog.yaml"
    )
    assert verdict.ok and verdict.config_keys == [
        "dsv4-fp8-mi300x-vllm",
        "dsv4-fp8-mi300x-vllm-mtp",
    ]

    head = BASE + b"\n" + entry("dsv4-fp8-mi300x-sglang").encode()
    (v,) = check(
        BASE, head, POLICY, CheckMode.pr_mode(7), known_keys=known, path="perf-changelog.yaml"
    ).violations
    assert (
        v.code == "GOV501" and "`dsv4-fp8-mi300x-vllm`" in v.hint and (v.line, v.column) == (14, 7)
    )

    head = BASE + b"\n" + entry("qwen*").encode()
    assert [
        v.code
        for v in check(
            BASE, head, POLICY, CheckMode.pr_mode(7), known_keys=known, path="perf-changelog.yaml"
        ).violations
    ] == ["GOV502"]
