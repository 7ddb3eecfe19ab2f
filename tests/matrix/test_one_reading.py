"""One reading of the changelog: `gov check`, `gov plan` and `gov prepare-merge`
see the same appended entries and the same rows, whatever the repository does
to `git diff` (issue 21, 'One reading of the changelog').

The PR appends two entries. The first one's description is a quoted scalar
whose continuation line begins with `++`: in diff text that line reads
`+++"`, a file header, and a reader of `+` lines drops it; the quote then
runs on into the second entry, which disappears (check: two entries, plan:
one). The repository may also mark the changelog `-diff` (the diff says
"Binary files differ") or give it a textconv driver (the diff shows another
text). Every door reads the blobs, so all three agree in every case.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from governance.matrix.render import describe
from governance.merge.decisions import plan_rows
from tests.harness import Repo, run_gov

PR = 7
KEYS = ["dsr1-fp8-mi300x-sglang", "dsr1-fp4-b200-sglang"]
TWO_ENTRIES = (
    "\n- config-keys:\n"
    f"    - {KEYS[0]}\n"
    "  description:\n"
    '    - "Tune A\n'
    '++"\n'  # diff text: `+++"`, read as a header by a `+`-line scanner
    "  pr-link: XXX\n"
    "\n- config-keys:\n"
    f"    - {KEYS[1]}\n"
    "  description:\n"
    '    - Tune B "\n'  # where the first entry's runaway quote would end
    "  pr-link: XXX\n"
)
DESCRIPTIONS = [["Tune A ++"], ['Tune B "']]


def plain(repo: Repo) -> None:
    """Only the `++` line."""


def no_diff_attribute(repo: Repo) -> None:
    """A committed `.gitattributes` that turns the changelog's diff into
    "Binary files differ"."""
    repo.commit("Changelog diffs are binary", **{".gitattributes": "perf-changelog.yaml -diff\n"})


def textconv(repo: Repo) -> None:
    """A textconv driver in the repository's own git config (and its
    attribute in .git/info/attributes) that hides the description lines."""
    repo.write(".git/info/attributes", "perf-changelog.yaml diff=hide\n")
    repo.git("config", "diff.hide.textconv", "sed -e /Tune/d")


def external_diff(repo: Repo) -> None:
    """An external diff program in the repository's git config."""
    repo.git("config", "diff.external", "true")


SETUPS = [plain, no_diff_attribute, textconv, external_diff]


@pytest.fixture(params=SETUPS, ids=[setup.__name__ for setup in SETUPS])
def pr_repo(request: pytest.FixtureRequest, sweep_repo: Repo) -> Repo:
    """PR 7 appends TWO_ENTRIES; main stays where the PR forked."""
    repo = sweep_repo
    repo.configure_identity()
    setup: Callable[[Repo], None] = request.param
    setup(repo)
    repo.git("checkout", "-q", "-b", "pr")
    changelog = repo.path / "perf-changelog.yaml"
    repo.commit("Tune A and B", **{"perf-changelog.yaml": changelog.read_text() + TWO_ENTRIES})
    repo.git("checkout", "-q", "main")
    opened = run_gov("pr", "open", "--number", str(PR), "--branch", "pr", cwd=repo.path)
    assert opened.exit_code == 0, opened.stderr
    return repo


def gov_json(repo: Repo, *args: str, code: int = 0) -> dict[str, Any]:
    result = run_gov(*args, "--format", "json", cwd=repo.path)
    assert result.exit_code == code, result.stdout + result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def plan_document(repo: Repo) -> dict[str, Any]:
    return gov_json(repo, "plan", "--base-ref", "main", "--head-ref", "pr")


def row_count(document: dict[str, Any]) -> int:
    return len(plan_rows(document, describe))


def test_a_reader_of_diff_text_would_see_other_lines(pr_repo: Repo) -> None:
    """The premise: scanning `git diff`'s `+` lines (as plan did) does not
    read what the PR appended; the blobs do."""
    diff = pr_repo.git("diff", "main", "pr", "--", "perf-changelog.yaml")
    plus = [line[1:] for line in diff.split("\n") if line[:1] == "+" and line[:3] != "+++"]
    assert plus != TWO_ENTRIES.removesuffix("\n").split("\n")


def test_check_reads_both_entries_and_preflights_every_row(pr_repo: Repo) -> None:
    found = gov_json(pr_repo, "check", "--base-ref", "main", "--head-ref", "pr")
    assert found["ok"], found["violations"]
    assert [entry["config-keys"] for entry in found["additions"]] == [[KEYS[0]], [KEYS[1]]]
    assert found["config_keys"] == KEYS
    # the check door's rows: its sweep preflight resolves the script of every
    # row of the plan it builds from the same reading
    assert found["preflight"]["rows"] == row_count(plan_document(pr_repo)) > 0


def test_plan_reads_the_same_two_entries(pr_repo: Repo) -> None:
    document = plan_document(pr_repo)
    entries = document["changelog_metadata"]["entries"]
    assert [entry["config-keys"] for entry in entries] == [[KEYS[0]], [KEYS[1]]]
    assert [entry["description"] for entry in entries] == DESCRIPTIONS
    prefixes = {row["runner"] for rows in document["single_node"].values() for row in rows}
    assert prefixes == {"mi300x", "b200"}  # both entries' configs are swept


def test_prepare_merge_plans_the_same_rows(pr_repo: Repo) -> None:
    expected = plan_rows(plan_document(pr_repo), describe)
    report = gov_json(pr_repo, "prepare-merge", "--pr", str(PR), "--dry-run")
    assert report["ok"], report["steps"]
    assert report["plan_rows"] == expected
    assert any(" b200 " in row for row in expected) and any(" mi300x " in row for row in expected)


# -- a change to history: every door refuses it, at the same line --------------------


@pytest.fixture
def rewriting_repo(sweep_repo: Repo) -> tuple[Repo, int]:
    """A PR that rewrites a historical description line (a line starting with
    `--` once deleted, `---` in diff text) and appends an entry."""
    repo = sweep_repo
    repo.configure_identity()
    repo.git("checkout", "-q", "-b", "pr")
    changelog = repo.path / "perf-changelog.yaml"
    text = changelog.read_text()
    old = '    - "Add DeepSeek-R1 FP4 B200 SGLang at TP4 and TP8"\n'
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    rewritten = text.replace(old, '    - "Add DeepSeek-R1 FP4 B200 SGLang at TP8 only"\n')
    repo.commit("Rewrite history", **{"perf-changelog.yaml": rewritten + TWO_ENTRIES})
    repo.git("checkout", "-q", "main")
    opened = run_gov("pr", "open", "--number", str(PR), "--branch", "pr", cwd=repo.path)
    assert opened.exit_code == 0, opened.stderr
    return repo, line


def test_a_rewritten_history_line_is_refused_by_every_door_at_that_line(
    rewriting_repo: tuple[Repo, int],
) -> None:
    repo, line = rewriting_repo
    checked = gov_json(repo, "check", "--base-ref", "main", "--head-ref", "pr", code=1)
    assert [(v["code"], v["line"]) for v in checked["violations"]] == [("GOV302", line)]
    planned = run_gov("plan", "--base-ref", "main", "--head-ref", "pr", cwd=repo.path)
    assert planned.exit_code == 1
    assert f"perf-changelog.yaml:{line}:1: GOV530" in planned.stderr, planned.stderr
    report = gov_json(repo, "prepare-merge", "--pr", str(PR), "--dry-run", code=1)
    assert not report["ok"] and report["plan_rows"] == []
    refused = report["steps"][-1]
    assert [(v["code"], v["line"]) for v in refused["violations"]] == [("GOV302", line)], refused
