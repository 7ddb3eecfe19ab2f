"""Property: random strings full of control and markup characters, fed
through every renderer and the output boundary, come out inert for the
reader of each format (docs/security.md, 'Output boundary')."""

from __future__ import annotations

import html
import io
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from governance.changelog.rules import CheckMode, check
from governance.check import render as check_render
from governance.check.service import CheckResult
from governance.cli.output import _Boundary, _transform
from governance.core import safe_text
from governance.core.diagnostics import Violation
from governance.core.links import LinkPolicy
from governance.forge.base import PullRequest
from governance.forge.render import render_pull, render_pull_list
from governance.matrix.plan import PlanResult
from governance.matrix.render import plan_markdown, plan_text
from governance.merge.report import CommitMade, MergeReport, StepReport
from governance.merge.report import render_text as merge_text
from governance.results.compare import Comparison, ComparisonReport, Point
from governance.results.reader import Figures
from governance.results.render import render_markdown, render_text
from tests.test_fuzz import FAST

markdown_it = pytest.importorskip("markdown_it")

# What an attacker reaches for: every C0/C1 control, DEL, the Unicode line
# separators, workflow-command and markdown/HTML metacharacters.
_PIECES = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x9F),
    st.sampled_from(["::", "##[", "\u2028", "\u2029", "<img src=x>", "](", "# ", "|", "`"]),
    st.sampled_from(["[a](https://e.example)", "![i](https://e.example/i.png)", "[r]: /x"]),
    st.sampled_from(["<https://e.example>", "&lt;", "&#124;", "\\|", "`` ", "1. ", "- "]),
    st.sampled_from(list("%:,<>&[]()#!*_~\\$-+=. \n\r\t")),
)
HOSTILE = st.lists(_PIECES, max_size=30).map("".join)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
UNSTYLED = str.maketrans("", "", "*_~")
LINES = re.compile(r"\r\n|\r|\n")
BASE = (
    b"- config-keys:\n    - a\n  description:\n    - x\n"
    b"  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"
)


def through(fmt: str, text: str, cut: int = 7) -> str:
    """`text` written through the boundary of `fmt` in chunks of `cut`."""
    raw = io.StringIO()
    transform, by_line = _transform(fmt)
    stream = _Boundary(raw, transform, by_line=by_line)  # type: ignore[arg-type]
    for start in range(0, len(text), cut):
        stream.write(text[start : start + cut])
    stream.finish()
    return raw.getvalue()


def inert_terminal(text: str) -> None:
    assert not RAW.search(text), repr(text)


def inert_log(text: str, commands: int = 0) -> None:
    """No line but gov's `commands` first ones is a workflow command."""
    assert "\r" not in text
    for index, line in enumerate(LINES.split(text)):
        if index < commands:
            assert safe_text.is_workflow_command(line), line
        else:
            assert not line.lstrip().startswith("::") and "##[" not in line, repr(line)


def _html(markdown: str) -> str:
    """The markdown as GitHub renders it: CommonMark with raw HTML and tables."""
    return str(
        markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    )


def inert_markdown(text: str, headings: int) -> None:
    assert not RAW.search(text), repr(text)
    rendered = _html(text)
    assert "<img" not in rendered and "<a " not in rendered, rendered
    assert len(re.findall(r"<h[1-6]>", rendered)) == headings, rendered
    for table in re.findall(r"<table>.*?</table>", rendered, re.S):
        rows = re.findall(r"<tr>.*?</tr>", table, re.S)
        assert len({row.count("<td") + row.count("<th") for row in rows}) == 1, table


def check_result(value: str) -> CheckResult:
    verdict = check(BASE, BASE, LinkPolicy(), CheckMode.pr_mode(5), path="perf-changelog.yaml")
    verdict.violations = [Violation("GOV501", "unknown-config-key", value, value, 1, 1, value)]
    warning = Violation("GOV801", "settings-changed", f"settings changed (`{value}`)", value)
    return CheckResult(verdict, value, value, BASE, BASE, warnings=[warning])


@FAST
@given(HOSTILE)
def test_the_boundary_functions_are_inert(value: str) -> None:
    inert_terminal(safe_text.terminal(value).replace("\n", "").replace("\t", ""))
    assert json.loads(safe_text.json_text(json.dumps(value, ensure_ascii=False))) == value
    assert not re.search("[\x7f-\x9f\u2028\u2029]", safe_text.json_text(json.dumps(value)))
    inert_log(safe_text.workflow_log(value))
    command = safe_text.workflow_command("error", value, file=value, title=value)
    assert safe_text.is_workflow_command(command) and not LINES.search(command)
    props, _, data = command[len("::error ") :].partition("::")
    assert props.count(",") == 1 and props.count("=") >= 2
    assert "::" not in props and "\n" not in data
    flat = safe_text.terminal(value)
    for markdown, prefix, suffix in (
        ("| a |\n|---|\n| " + safe_text.markdown_text(value) + " |", "a ", ""),
        ("| a |\n|---|\n| " + safe_text.markdown_code(value, cell=True) + " |", "a ", ""),
        ("START " + safe_text.markdown_code(value), "START ", ""),
        (safe_text.markdown_text(value) + " END", "", " END"),
    ):
        inert_markdown(markdown, 0)
        # Emphasis is left to render (styling, not content): compare without it.
        styled = re.sub(r"</?(em|strong|s)>", "", _html(markdown))
        shown = html.unescape(re.sub(r"<[^>]*>", " ", styled)).translate(UNSTYLED)
        assert shown.split() == (prefix + flat + suffix).translate(UNSTYLED).split(), (
            markdown,
            _html(markdown),
        )


@FAST
@given(HOSTILE, st.integers(min_value=1, max_value=9))
def test_every_text_renderer_through_the_boundary_is_inert(value: str, cut: int) -> None:
    pull = PullRequest(3, value, "open", value, "a" * 40, value, labels=(value,), url=value)
    report = ComparisonReport(3, 5.0, [], [value], [value], value)
    figures = Figures("throughput", 1.0, 2.0, 3.0, 4.0)
    point = Point(value, ("k",), value, figures, run_id=1, commit=value, pr=3)
    report.comparisons.append(Comparison(point, None))
    merge = MergeReport(3, "local", status=value, results=value, sweep=value)
    merge.add(StepReport(value, "refused", value, [Violation("GOV601", value, value, value)]))
    merge.commits.append(CommitMade("b" * 40, value))
    texts = [
        check_render.render_text(check_result(value)),
        render_pull(pull),
        render_pull_list([pull]),
        render_text(report),
        merge_text(merge),
        plan_text(PlanResult(_document(value), [Violation("GOV550", "r", value, value)])),
    ]
    for text in texts:
        for fmt in ("text", "markdown", "html"):
            inert_terminal(through(fmt, text, cut).replace("\n", "").replace("\t", ""))
        inert_log(through("github", text, cut))


@FAST
@given(HOSTILE)
def test_the_github_format_and_every_markdown_renderer_are_inert(value: str) -> None:
    result = check_result(value)
    commands = check_render.github_commands(result)
    inert_log(commands + through("github", check_render.render_text(result)), 2)
    inert_log(check_render.render_github(result), 2)
    inert_log(check_render.render_error("github", value, value, 2), 1)
    inert_markdown(check_render.render_markdown_summary(result), 1)
    figures = Figures("throughput", 1.0, 2.0, 3.0, 4.0)
    point = Point(value, ("k",), value, figures, run_id=1, commit=value, pr=3)
    report = ComparisonReport(3, 5.0, [Comparison(point, None)], [value], [value], value)
    inert_markdown(render_markdown(report), 1)
    warnings = [Violation("GOV550", "r", value, value)]
    inert_markdown(plan_markdown(PlanResult(_document(value), warnings)), 1)


def _document(value: str) -> dict[str, Any]:
    """A plan document with no rows, naming `value` wherever a PR can."""
    return {
        "single_node": {},
        "multi_node": {},
        **{name: [] for name in ("evals", "agentic_evals", "multinode_evals")},
        "multinode_agentic_evals": [],
        "changelog_metadata": {
            "base_ref": value,
            "head_ref": value,
            "entries": [{"config-keys": [value, value], "pr-link": value, "evals-only": True}],
        },
    }


@FAST
@given(HOSTILE)
def test_the_results_page_keeps_its_data_through_the_boundary(value: str) -> None:
    from governance.results.html import render_html

    report = ComparisonReport(3, 5.0, [], [value], [value], value)
    page = through("html", render_html(report))
    inert_terminal(page.replace("\n", "").replace("\t", ""))
    scripts = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
    assert len(scripts) == 1 and json.loads(scripts[0]) == report.to_dict()
    assert "<img" not in page.replace("&lt;img", "")
