"""The repository explains itself: code points at `docs/`, never at an outside document.

Comments and string literals under `governance/` may not cite the external reference
("spec §5", "spec/matrix.md", "gap G10", a bare "(7.8.2)"), and every `docs/<page>.md` they
name must exist. Links between the pages of `docs/` must resolve too.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.harness import PROJECT

PACKAGE = PROJECT / "governance"
DOCS = PROJECT / "docs"

# Each pattern names one way of pointing outside the repository.
EXTERNAL = {
    "section sign": re.compile("§"),
    "spec section": re.compile(r"\bspec\b\s*(?:section|sections|step|\d)", re.IGNORECASE),
    "spec path": re.compile(r"\bspec/"),
    "reference file": re.compile(r"\b(?:changelog-rules|merge-and-launch)\.md\b"),
    "gap number": re.compile(r"\bgaps?\s+(?:G\d+|\d+(?:\.\d+)?)\b", re.IGNORECASE),
    "gap id": re.compile(r"\bG\d{1,2}\b"),
    "bare section number": re.compile(
        r"\((?:sections? )?[1-9]\d?\.\d{1,2}(?:\.\d)?(?:[ ,/-][^)]*)?\)"  # (7.8.2), (6.1/6.2)
        r"|^[\s\"'rbfu]*[1-9]\d?\.\d{1,2}(?:\.\d)?:"  # a docstring opening "6.3: ..."
        r"|\bsections? [1-9]",
        re.MULTILINE,
    ),
}
DOC_PATH = re.compile(r"\bdocs/([A-Za-z0-9_.-]+\.md)\b")
DOC_LINK = re.compile(r"\]\(([A-Za-z0-9_.-]+\.md)(?:#[^)]*)?\)")


def _texts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and string literal of one module."""
    source = path.read_text(encoding="utf-8")
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    kept = {tokenize.COMMENT, tokenize.STRING}
    fstring = {getattr(tokenize, "FSTRING_MIDDLE", -1)}
    return [(tok.start[0], tok.string) for tok in tokens if tok.type in kept | fstring]


def external_citations(text: str) -> list[str]:
    """The names of the patterns that `text` matches (empty: it cites nothing outside)."""
    return [name for name, pattern in EXTERNAL.items() if pattern.search(text)]


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize(
    "text",
    [
        "# history (spec §5, §6)",
        '"""Pydantic schemas (spec sections 1.2, 2, 7.2.1)."""',
        "# The contract is `spec/matrix.md`.",
        "# canonical (gap G7); gov does not.",
        "# the check-then-merge race of the reference (gap 6.10).",
        '"""Gap G11: the reference rewrote only the line."""',
        '"""7.8.1: one lowest-concurrency point per recipe."""',
        "# loaded on every invocation (1.2)",
        "# see merge-and-launch.md for the launcher contract",
        "# the processor (spec 7.3)",
    ],
)
def test_detector_flags_external_citations(text: str) -> None:
    assert external_citations(text), text


@pytest.mark.parametrize(
    "text",
    [
        "# row fields under the reference's names (docs/sweeps.md)",
        '"spec-decoding"',
        "# keys that do not change what is being measured",
        '"gov prepare-merge needs git 2.38 or newer"',
        "# (docs/matrix.md, 'Recipe fingerprints')",
        'f"{name}_spec-{spec}"',
    ],
)
def test_detector_passes_own_wording(text: str) -> None:
    assert external_citations(text) == [], text


def test_no_comment_or_string_cites_the_external_reference() -> None:
    found = [
        f"{path.relative_to(PROJECT)}:{line}: {', '.join(names)}: {text.strip()[:80]}"
        for path in _modules()
        for line, text in _texts(path)
        if (names := external_citations(text))
    ]
    assert found == [], "point at docs/ instead:\n" + "\n".join(found)


def test_every_docs_page_named_in_the_code_exists() -> None:
    named = {
        (f"{path.relative_to(PROJECT)}:{line}", page)
        for path in _modules()
        for line, text in _texts(path)
        for page in DOC_PATH.findall(text)
    }
    assert named, "the code names no docs/ page at all: the check would be vacuous"
    missing = sorted(
        f"{where}: docs/{page}" for where, page in named if not (DOCS / page).is_file()
    )
    assert missing == []


def test_links_between_docs_pages_resolve() -> None:
    pages = sorted(DOCS.glob("*.md"))
    assert {p.name for p in pages} >= {"rules.md", "matrix.md", "sweeps.md", "differences.md"}
    broken = [
        f"{page.name}: {target}"
        for page in pages
        for target in DOC_LINK.findall(page.read_text(encoding="utf-8"))
        if not (DOCS / target).is_file()
    ]
    assert broken == []


# -- the README's snippets are the ones the tests run ---------------------------------

README = PROJECT / "README.md"


def readme_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_snippets_are_the_ones_the_tests_run() -> None:
    """Each README snippet a user copies is run by a test, through the README
    text itself (a test reads the block; none keeps its own copy):

    * quickstart: `gov demo` (tests/test_demo.py; tests/test_wheel.py runs it
      from a freshly built and installed wheel);
    * pre-commit config: tests/test_hook.py runs it with the real framework;
    * CI workflow and the one-line CI step: tests/test_action.py runs them.
    """
    from tests.cli.test_hook import readme_pre_commit_config
    from tests.test_action import readme_yaml

    (quickstart, *_) = readme_blocks("sh")
    assert quickstart.splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/gov demo",
        ".venv/bin/pytest",
    ]
    config = readme_pre_commit_config(Path("/gov"), "0" * 40)
    assert "repo: /gov" in config and 'args: [--pr, "2194"]' in config
    workflow = readme_yaml("In CI, the `check-changelog` workflow", "uses: <org>/gov@")
    assert workflow["on"] == "pull_request"
    (step,) = readme_yaml("Or, with gov installed by other means", "- run: gov check")
    assert step["run"].startswith("gov check --base-ref origin/main --head-ref ${{")
    yaml_blocks = readme_blocks("yaml")
    assert sum("gov-check" in b or "uses: <org>/gov@" in b or "run: gov check" in b
               for b in yaml_blocks) == 3  # fmt: skip


# -- every code has its row in docs/rules.md --------------------------------------------

RULE_ROW = re.compile(r"^\| (GOV\d{3}) \| `([a-z0-9-]+)` \| [^|]+ \| (yes)? ?\|$", re.MULTILINE)


def test_every_code_is_documented_with_its_name_and_strictness() -> None:
    from governance.core.codes import RULES

    rows = {
        code: (name, bool(yes))
        for code, name, yes in RULE_ROW.findall((DOCS / "rules.md").read_text(encoding="utf-8"))
    }
    expected = {code: (rule.name, rule.stricter) for code, rule in RULES.items()}
    assert rows == expected
