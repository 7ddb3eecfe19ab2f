"""`gov check` judges the plan a change triggers, not only the changelog bytes.

A change whose appended entries cannot be turned into rows (unknown key,
wildcard matching nothing, a master config that breaks the schema, an
append-only entry that changes existing points) fails check with a GOV5xx
violation located where the fault is: in the changelog or in the master config.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.changelog.rules import CheckMode
from governance.check.service import CheckOptions, CheckResult, run_check
from governance.check.snapshots import HeadSource
from governance.core.diagnostics import Violation
from governance.core.settings import load_settings
from governance.git.repo import GitRepo
from tests.harness import Repo, run_gov

AMD = "configs/amd-master.yaml"
ENTRY = (
    "\n- config-keys:\n    - {key}\n  description:\n"
    '    - "Retune MI300X DSv4"\n  pr-link: XXX\n{extra}'
)


def line_of(path: Path, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def check(repo: Repo, source: HeadSource = HeadSource.REF) -> CheckResult:
    git = GitRepo(repo.path)
    settings = load_settings(git.root)
    options = CheckOptions(CheckMode.pr_mode(2194), base_ref="main", head_source=source)
    return run_check(git, settings, options)


def only(result: CheckResult, code: str) -> Violation:
    found = [v for v in result.verdict.violations if v.code == code]
    assert len(found) == 1, result.verdict.violations
    return found[0]


@pytest.fixture
def pr(example_repo: Repo) -> Repo:
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    return example_repo


def append(repo: Repo, key: str = "dsv4-fp8-mi300x-vllm", extra: str = "") -> None:
    changelog = repo.path / "perf-changelog.yaml"
    changelog.write_text(changelog.read_text() + ENTRY.format(key=key, extra=extra))


def edit(repo: Repo, path: str, old: str, new: str) -> None:
    file = repo.path / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new, 1))


def test_a_valid_change_reports_the_keys_it_resolved(pr: Repo) -> None:
    append(pr, "dsv4-fp8-mi300x-*")
    pr.commit("retune")
    result = check(pr)
    assert result.verdict.ok, result.verdict.violations
    assert result.verdict.config_keys == ["dsv4-fp8-mi300x-vllm", "dsv4-fp8-mi300x-vllm-mtp"]


def test_schema_break_in_the_named_config_points_into_the_master_file(pr: Repo) -> None:
    edit(pr, AMD, "conc-start: 4, conc-end: 128", "conc-start: 256, conc-end: 128")
    append(pr)
    pr.commit("retune")
    found = [v for v in check(pr).verdict.violations if v.code.startswith("GOV5")]
    assert found, "a conc-start above conc-end must fail check"
    assert {v.path for v in found} == {AMD}
    assert found[0].line == line_of(pr.path / AMD, "conc-start: 256")
    assert "dsv4-fp8-mi300x-vllm" in found[0].message


def test_schema_break_in_another_config_fails_like_the_plan_would(pr: Repo) -> None:
    # The plan (like the reference processor) refuses any invalid master entry,
    # so check must too: one policy for both doors.
    edit(pr, AMD, "framework: sglang", "framework: 42")
    append(pr)
    pr.commit("retune")
    found = [v for v in check(pr).verdict.violations if v.path == AMD]
    assert found and found[0].line == line_of(pr.path / AMD, "framework: 42")


def test_duplicate_master_key_is_located_at_the_second_definition(pr: Repo) -> None:
    amd = pr.path / AMD
    amd.write_text(amd.read_text() + "\ndsv4-fp8-mi300x-vllm:\n  image: x\n")
    append(pr)
    pr.commit("retune")
    duplicate = only(check(pr), "GOV511")
    assert duplicate.path == AMD
    assert duplicate.line == len(amd.read_text().splitlines()) - 1


def test_runner_missing_from_the_runner_file_is_located_with_a_suggestion(pr: Repo) -> None:
    edit(
        pr,
        AMD,
        "runner: mi300x\n  precision: fp8\n  framework: vllm",
        "runner: mi300xx\n  precision: fp8\n  framework: vllm",
    )
    append(pr)
    pr.commit("retune")
    missing = only(check(pr), "GOV521")
    assert (missing.path, missing.line) == (AMD, line_of(pr.path / AMD, "runner: mi300xx"))
    assert "mi300x" in missing.hint


def test_unknown_key_is_located_in_the_changelog_with_did_you_mean(pr: Repo) -> None:
    append(pr, "dsv4-fp8-mi300x-sglang")
    pr.commit("retune")
    unknown = only(check(pr), "GOV501")
    assert unknown.path == "perf-changelog.yaml"
    assert unknown.line == line_of(pr.path / "perf-changelog.yaml", "dsv4-fp8-mi300x-sglang")
    assert "`dsv4-fp8-mi300x-vllm`" in unknown.hint


def test_wildcard_matching_nothing_fails(pr: Repo) -> None:
    append(pr, "glm5-*")
    pr.commit("retune")
    assert only(check(pr), "GOV502").path == "perf-changelog.yaml"


def test_append_only_entry_that_changes_an_existing_point_fails(pr: Repo) -> None:
    edit(pr, AMD, "image: vllm/vllm-openai-rocm:v0.11.2", "image: vllm/vllm-openai-rocm:v0.12.0")
    append(pr, extra="  append-only: true\n")
    pr.commit("retune")
    found = [v for v in check(pr).verdict.violations if v.code in {"GOV541", "GOV542"}]
    assert found, check(pr).verdict.violations


def test_uncommitted_master_edits_are_judged_in_worktree_mode(pr: Repo) -> None:
    append(pr)
    pr.commit("retune")
    assert check(pr, HeadSource.WORKTREE).verdict.ok
    edit(pr, AMD, "conc-start: 4, conc-end: 128", "conc-start: 256, conc-end: 128")
    assert not check(pr, HeadSource.WORKTREE).verdict.ok
    assert check(pr, HeadSource.STAGED).verdict.ok  # the index still holds the good file
    pr.git("add", AMD)
    assert not check(pr, HeadSource.STAGED).verdict.ok


def test_a_change_that_appends_nothing_does_not_plan(pr: Repo) -> None:
    # Editing a master config without an entry triggers no sweep, so no plan
    # is generated and nothing about it can fail (the reference agrees).
    edit(pr, AMD, "framework: sglang", "framework: 42")
    pr.commit("typo")
    assert check(pr).verdict.ok


def test_cli_prints_the_master_config_location(pr: Repo) -> None:
    edit(pr, AMD, "conc-start: 4, conc-end: 128", "conc-start: 256, conc-end: 128")
    append(pr)
    pr.commit("retune")
    result = run_gov("check", "--pr", "2194", "--base-ref", "main", cwd=pr.path)
    assert result.exit_code == 1
    expected = f"{AMD}:{line_of(pr.path / AMD, 'conc-start: 256')}:"
    assert expected in result.stdout, result.stdout
    assert "Traceback" not in result.stderr


def test_master_config_finding_quotes_its_own_file_and_is_counted_there(
    pr: Repo,
) -> None:
    edit(
        pr,
        AMD,
        "runner: mi300x\n  precision: fp8\n  framework: vllm",
        "runner: mi300xx\n  precision: fp8\n  framework: vllm",
    )
    append(pr, extra="")
    (pr.path / "perf-changelog.yaml").write_text(
        (pr.path / "perf-changelog.yaml").read_text().replace("pr-link: XXX\n", "pr-link: XXXX\n")
    )
    pr.commit("retune")
    result = run_gov("check", "--pr", "2194", "--base-ref", "main", cwd=pr.path)
    assert result.exit_code == 1
    line = line_of(pr.path / AMD, "runner: mi300xx")
    lines = result.stdout.splitlines()
    at = lines.index(next(x for x in lines if x.startswith(f"{AMD}:{line}:3: GOV521")))
    assert lines[at + 1] == f"{line:>6} |   runner: mi300xx"
    assert lines[-1].startswith("2 violations: 1 in perf-changelog.yaml, 1 in " + AMD + " (")


def cache_files(repo: Repo) -> list[Path]:
    return sorted((repo.path / ".git" / "gov" / "check-cache").glob("*.json"))


def test_plan_findings_are_cached_by_the_bytes_they_judged(pr: Repo) -> None:
    append(pr)
    pr.commit("retune")
    assert check(pr).verdict.ok
    [entry] = cache_files(pr)
    # A planted answer proves the second run reads the cache instead of planning.
    planted = '{"keys": ["planted"], "violations": [{"code": "GOV501", "rule": "r", "message": "m", "path": "p"}]}'
    entry.write_text(planted)
    assert [v.code for v in check(pr).verdict.violations] == ["GOV501"]
    # Any change to the inputs is a different question: a master edit misses.
    edit(pr, AMD, "conc-start: 4, conc-end: 128", "conc-start: 4, conc-end: 256")
    pr.commit("wider sweep")
    assert check(pr).verdict.ok
    assert len(cache_files(pr)) == 2


def test_a_corrupt_cache_entry_is_a_miss_not_an_error(pr: Repo) -> None:
    edit(pr, AMD, "conc-start: 4, conc-end: 128", "conc-start: 256, conc-end: 128")
    append(pr)
    pr.commit("retune")
    first = check(pr).verdict.violations
    [entry] = cache_files(pr)
    entry.write_text("{not json")
    assert check(pr).verdict.violations == first


def test_the_check_plans_once_and_its_preflight_judges_that_plan(
    sweep_repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One plan per command: the preflight and `--summary-plan` take the
    document the check's plan step built (also from the findings cache), and
    it is the document `gov plan` prints."""
    import json

    from governance.check import preflight

    pr = sweep_repo
    pr.git("checkout", "-q", "-b", "pr-2194")
    append(pr)
    pr.commit("retune")

    def plan_again(*_args: object) -> None:
        raise AssertionError("the preflight planned the change a second time")

    monkeypatch.setattr(preflight, "_plan_document", plan_again)
    first = check(pr)
    assert first.verdict.ok, first.verdict.violations
    assert first.plan is not None and first.preflight is not None and first.preflight.rows
    again = check(pr)  # the plan findings from .git/gov/check-cache, the document with them
    assert again.plan == first.plan
    assert again.preflight is not None and again.preflight.to_dict() == first.preflight.to_dict()
    planned = run_gov("plan", "--base-ref", "main", cwd=pr.path)
    assert planned.exit_code == 0, planned.stderr
    document = json.loads(planned.stdout)
    meta = {**first.plan["changelog_metadata"], "base_ref": "main", "head_ref": "HEAD"}
    assert document == {**first.plan, "changelog_metadata": meta}
