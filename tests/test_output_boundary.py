"""The output boundary (docs/security.md, 'Output boundary'): what a PR
controls cannot start a workflow command in CI, forge markup in the job
summary or a PR comment, or reach a terminal as an escape sequence.

Each case goes through the command line on a real repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from governance.results.compare import Comparison, ComparisonReport, Point
from governance.results.reader import Figures
from governance.results.render import render_markdown
from tests.harness import Repo, run_gov

# Workflow commands a hostile value tries to print on lines of their own.
FORGED = "x\n::error ::forged\n::add-mask::secret\r::warning::cr\n  ::notice::indented"
# Terminal escapes: OSC 52 (set the clipboard), OSC 8 (a hyperlink), CSI (clear, colour).
ESCAPES = "t\x1b]52;c;ZWNobyBoaQ==\x07 \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b[2J\x9b31m"
# Markup for the job summary and a PR comment.
MARKUP = "<img src=https://evil.example/x.png>\n# forged heading | cell [a](https://evil.example)"
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _toml_key(text: str) -> str:
    """`text` as a TOML quoted key (every control written as an escape)."""
    body = "".join(
        f"\\u{ord(c):04X}" if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in '"\\' else c
        for c in text
    )
    return f'"{body}"'


def _yaml_string(text: str) -> str:
    body = "".join(
        f"\\x{ord(c):02x}" if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in '"\\' else c
        for c in text
    )
    return f'"{body}"'


def _settings_pr(repo: Repo, key: str, branch: str = "pr-7") -> None:
    """A PR whose only change is a `.gov.toml` with `key` (GOV801 echoes it)."""
    repo.git("checkout", "-q", "-b", branch)
    repo.commit("settings", **{".gov.toml": f"{_toml_key(key)} = 1\n"})


def _config_key_pr(repo: Repo, key: str, branch: str = "pr-7") -> None:
    """A PR appending an entry that names `key` (an unknown config key)."""
    repo.git("checkout", "-q", "-b", branch)
    log = repo.path / "perf-changelog.yaml"
    entry = (
        f"\n- config-keys:\n    - {_yaml_string(key)}\n  description:\n"
        '    - "Retune"\n  pr-link: XXX\n'
    )
    repo.commit("entry", **{"perf-changelog.yaml": log.read_text() + entry})


def _github(repo: Repo, *extra: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = run_gov(
        "check", "--base-ref", "main", "--head-ref", "HEAD", "--pr", "7", "--no-configs",
        "--format", "github", *extra, cwd=repo.path, env=env,
    )  # fmt: skip
    return done.exit_code, done.stdout, done.stderr


def _commands(output: str) -> list[str]:
    """Every line a runner would read as a workflow command (it splits
    lines on \\r as well, and trims leading blanks)."""
    lines = re.split(r"\r\n|\r|\n", output)
    return [line for line in lines if line.lstrip().startswith("::") or "##[" in line]


def _only_gov_annotations(output: str) -> list[str]:
    commands = _commands(output)
    for line in commands:
        assert re.match(r"::(error|warning|notice) [a-z]+=", line), line
    return commands


def test_a_settings_key_cannot_print_workflow_commands(example_repo: Repo) -> None:
    _settings_pr(example_repo, FORGED)
    code, stdout, stderr = _github(example_repo)
    # The unknown key fails the check (GOV802: settings that would not load),
    # beside the GOV801 warning; both annotations carry the key escaped.
    assert code == 1, stdout + stderr
    commands = _only_gov_annotations(stdout)
    assert [c.split(" ", 1)[0] for c in commands] == ["::error", "::warning"], commands
    assert all(" file=.gov.toml," in c for c in commands)
    assert all("%0A::error ::forged%0A::add-mask::secret%0D::warning::cr" in c for c in commands)
    assert "%3A:error ::forged" in stdout and "%3A:add-mask::secret" in stdout
    assert "\r" not in stdout and not _commands(stderr)


def test_a_config_key_cannot_print_workflow_commands(example_repo: Repo) -> None:
    _config_key_pr(example_repo, FORGED)
    done = run_gov(
        "check", "--base-ref", "main", "--head-ref", "HEAD", "--pr", "7",
        "--format", "github", cwd=example_repo.path,
    )  # fmt: skip
    assert "GOV5" in done.stdout, done.stdout + done.stderr
    commands = _only_gov_annotations(done.stdout)
    assert commands and all("add-mask" not in c.partition("::")[2][:9] for c in commands)
    assert not any(line.startswith("::add-mask") for line in re.split(r"[\r\n]", done.stdout))
    assert not _commands(done.stderr)


def _summary_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _assert_inert_markdown(lines: list[str]) -> str:
    """The markdown rendered as GitHub would (CommonMark with raw HTML and
    tables): no image, no link, no heading but gov's, no control character."""
    markdown_it = pytest.importorskip("markdown_it")
    text = "\n".join(lines)
    assert not RAW_CONTROL.search(text)
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<img" not in html and "<a " not in html, html
    headings = re.findall(r"<h([1-6])>", html)
    assert headings == ["3"], html
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        widths = {
            row.count("<td") + row.count("<th") for row in re.findall(r"<tr>.*?</tr>", table, re.S)
        }
        assert len(widths) == 1, table  # no pipe in a value split a cell
    return html


@pytest.mark.parametrize("where", ["settings key", "config key"])
def test_the_job_summary_shows_markup_as_text(
    example_repo: Repo, tmp_path: Path, where: str
) -> None:
    (_settings_pr if where == "settings key" else _config_key_pr)(example_repo, MARKUP)
    summary = tmp_path / "summary.md"
    code, stdout, _ = _github(example_repo, env={"GITHUB_STEP_SUMMARY": str(summary)})
    html = _assert_inert_markdown(_summary_lines(summary))
    assert "&lt;img src=https://evil.example/x.png&gt;" in html  # shown, as text
    assert "# forged heading" in html
    if where == "settings key":
        assert code == 1 and "GOV802" in stdout, stdout  # an unknown key would not load


def test_results_compare_markdown_shows_markup_as_text() -> None:
    figures = Figures("throughput", 1000.0, 100.0, 10.0, 100.0)
    point = Point(MARKUP + ESCAPES, ("k",), "4 | x", figures, run_id=1, commit="c" * 40, pr=5)
    report = ComparisonReport(
        5,
        5.0,
        [Comparison(point, None)],
        unreadable=[f"run 3: {MARKUP}"],
        unverifiable=[f"run 4 {MARKUP}: unverifiable"],
        main_label=MARKUP,
    )
    html = _assert_inert_markdown(render_markdown(report).splitlines())
    assert "&lt;img src=https://evil.example/x.png&gt;" in html and "# forged heading" in html


def _assert_inert_terminal(text: str) -> None:
    assert not RAW_CONTROL.search(text.replace("\n", "").replace("\t", "")), repr(text)
    assert "\\x1b]52;c;" in text and "\\x1b[2J" in text and "\\x9b31m" in text


def test_a_pr_title_reaches_pr_list_and_prepare_merge_as_text(example_repo: Repo) -> None:
    repo = example_repo
    repo.configure_identity()
    repo.git("checkout", "-q", "-b", "bringup")
    log = repo.path / "perf-changelog.yaml"
    entry = (
        "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
        '    - "Retune"\n  pr-link: XXX\n'
    )
    repo.commit(
        ESCAPES.replace("\x9b", "\x1b["), **{"perf-changelog.yaml": log.read_text() + entry}
    )
    repo.git("checkout", "-q", "main")
    opened = run_gov("pr", "open", "--number", "12", "--branch", "bringup", cwd=repo.path)
    assert opened.exit_code == 0, opened.stderr
    listed = run_gov("pr", "list", cwd=repo.path)
    assert listed.exit_code == 0, listed.stderr
    assert not RAW_CONTROL.search(listed.stdout + opened.stdout), repr(listed.stdout)
    assert "\\x1b]52;c;" in listed.stdout and "\\x1b[2J" in listed.stdout
    merged = run_gov("prepare-merge", "--pr", "12", "--no-push", cwd=repo.path)
    assert merged.exit_code == 0, merged.stdout + merged.stderr
    assert not RAW_CONTROL.search(merged.stdout.replace("\n", "")), repr(merged.stdout)
    assert "\\x1b]52;c;" in merged.stdout


def test_a_settings_key_reaches_gov_check_as_text(example_repo: Repo) -> None:
    _settings_pr(example_repo, ESCAPES)
    done = run_gov("check", "--no-configs", cwd=example_repo.path)
    assert done.exit_code == 1, done.stdout + done.stderr  # GOV802: the key would not load
    assert "GOV801" in done.stdout and "GOV802" in done.stdout, done.stdout
    _assert_inert_terminal(done.stdout)


def test_a_config_key_reaches_gov_check_as_text(example_repo: Repo) -> None:
    _config_key_pr(example_repo, ESCAPES)
    done = run_gov("check", "--pr", "7", cwd=example_repo.path)
    assert done.exit_code == 1 and "GOV5" in done.stdout, done.stdout + done.stderr
    assert not RAW_CONTROL.search(done.stdout.replace("\n", "")), repr(done.stdout)
    assert "\\x1b]52;c;" in done.stdout


def test_an_escaped_description_reaches_gov_log_and_check_as_text(example_repo: Repo) -> None:
    example_repo.git("checkout", "-q", "-b", "pr-7")
    log = example_repo.path / "perf-changelog.yaml"
    entry = (
        "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
        '    - "x\\e]52;c;ZWNobyBoaQ==\\a \\e]8;;https://evil.example\\e\\\\l\\e]8;;\\e\\\\'
        ' \\e[2J\\x9b31m"\n  pr-link: XXX\n'
    )
    example_repo.commit("entry", **{"perf-changelog.yaml": log.read_text() + entry})
    shown = run_gov("log", "dsv4-fp8-mi300x-vllm", cwd=example_repo.path)
    assert shown.exit_code == 0, shown.stderr
    _assert_inert_terminal(shown.stdout)
    for fmt in ("text", "json", "github"):
        done = run_gov("check", "--pr", "7", "--format", fmt, cwd=example_repo.path)
        assert done.exit_code == 0, done.stdout + done.stderr
        assert not RAW_CONTROL.search(done.stdout.replace("\n", "")), repr(done.stdout)
