"""Phasing in the stricter rules: `ignore` in settings and --ignore turn off
only the codes where gov is stricter than the reference, and say so."""

from __future__ import annotations

import json

import pytest

from governance.core.codes import IGNORABLE_CODES, RULES
from tests.check.test_check_configs import AMD, edit
from tests.conftest import Repo
from tests.harness import run_gov

ENTRY = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
    '    - "Retune MI300X DSv4"   \n  pr-link: XXX\n'
)


@pytest.fixture
def stricter_only(example_repo: Repo) -> Repo:
    """A PR whose only faults are stricter-than-reference ones: a trailing
    space (GOV312) and a runner label missing from the runner file (GOV521)."""
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    edit(
        example_repo,
        AMD,
        "runner: mi300x\n  precision: fp8\n  framework: vllm",
        "runner: mi300x-tw\n  precision: fp8\n  framework: vllm",
    )
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_text(changelog.read_text() + ENTRY)
    example_repo.commit("retune")
    return example_repo


def settings_on_base(repo: Repo, text: str) -> None:
    """Commit `.gov.toml` on main and move the PR onto it: settings come from the base."""
    repo.git("checkout", "-q", "main")
    repo.commit("settings", **{".gov.toml": text})
    repo.git("checkout", "-q", "pr-2194")
    repo.git("rebase", "-q", "main")


def test_the_ignorable_codes_are_exactly_documented_stricter_ones() -> None:
    assert {"GOV312", "GOV313", "GOV314", "GOV511", "GOV517", "GOV521"} == IGNORABLE_CODES
    assert all(RULES[code].stricter for code in IGNORABLE_CODES)


def test_without_ignore_both_stricter_findings_fail(stricter_only: Repo) -> None:
    result = run_gov("check", "--pr", "2194", cwd=stricter_only.path)
    assert result.exit_code == 1
    assert (
        ": GOV312 " in result.stdout and f"{AMD}:" in result.stdout and ": GOV521 " in result.stdout
    )
    assert "ignored" not in result.stdout


def test_command_line_and_setting_ignore_add_up_and_are_reported(stricter_only: Repo) -> None:
    settings_on_base(stricter_only, 'ignore = ["GOV521"]\n')
    half = run_gov("check", "--pr", "2194", cwd=stricter_only.path)
    assert half.exit_code == 1 and f"{AMD}:" not in half.stdout and ": GOV312 " in half.stdout
    assert half.stdout.rstrip().endswith("GOV521 (1 finding)")
    both = run_gov("check", "--pr", "2194", "--ignore", "gov312", cwd=stricter_only.path)
    assert both.exit_code == 0, both.stdout
    assert "ignored (stricter than the reference" in both.stdout
    assert "GOV521 (1 finding), GOV312 (1 finding)" in both.stdout
    data = json.loads(
        run_gov("check", "--pr", "2194", "--format", "json", cwd=stricter_only.path).stdout
    )
    assert data["ignore"] == ["GOV521"] and [v["code"] for v in data["ignored"]] == ["GOV521"]
    github = run_gov("check", "--pr", "2194", "--format", "github", cwd=stricter_only.path)
    assert "::notice title=gov::ignored" in github.stdout


@pytest.mark.parametrize("code", ["GOV301", "GOV401", "GOV207", "GOV703", "GOV999"])
def test_rules_the_reference_enforces_cannot_be_ignored(stricter_only: Repo, code: str) -> None:
    flag = run_gov("check", "--pr", "2194", "--ignore", code, cwd=stricter_only.path)
    assert flag.exit_code == 2 and code in flag.stderr and "--ignore" in flag.stderr
    settings_on_base(stricter_only, f'ignore = ["{code}"]\n')
    setting = run_gov("check", "--pr", "2194", cwd=stricter_only.path)
    assert setting.exit_code == 2 and ".gov.toml" in setting.stderr
    assert "GOV312" in setting.stderr  # the hint lists what can be ignored
