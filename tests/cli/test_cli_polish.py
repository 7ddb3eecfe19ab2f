"""What a user notices in the first hour: `gov --version`, help on every
option, choices shown as choices, one `--format` everywhere (and usage errors
in the format asked for), misspelled GOV_* variables, `gov plan` without a
changelog."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from typer.main import get_command

from governance import __version__
from governance.cli.app import app
from tests.harness import Repo, run_gov


def commands() -> Iterator[tuple[str, Any]]:
    """Every command of the app, with its full name (`pr open`)."""

    def walk(prefix: str, command: Any) -> Iterator[tuple[str, Any]]:
        if hasattr(command, "commands"):  # a group
            for name, sub in command.commands.items():
                yield from walk(f"{prefix} {name}".strip(), sub)
        else:
            yield prefix, command

    yield from walk("", get_command(app))


def test_the_walk_finds_every_command() -> None:
    names = {name for name, _ in commands()}
    assert {"check", "add", "plan", "matrix", "prepare-merge", "pr open", "runs list"} <= names


def test_every_option_and_argument_has_help() -> None:
    missing = [
        f"gov {name} {param.opts[0]}"
        for name, command in commands()
        for param in command.params
        if not getattr(param, "help", None) and param.name != "help"
    ]
    assert missing == []


def _case_sensitive(param: Any) -> bool:
    """Whether a choice option matches case (typer's own parameter types, or click's)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        return bool(descriptor.parameter_info.case_sensitive)
    return bool(param.type.case_sensitive)


def test_every_format_option_is_a_case_insensitive_choice() -> None:
    formats = [
        (name, param)
        for name, command in commands()
        for param in command.params
        if "--format" in param.opts
    ]
    assert len(formats) >= 10
    for name, param in formats:
        assert not _case_sensitive(param), f"gov {name} --format"
        help_text = run_gov(*name.split(), "--help").stdout
        (line,) = [x for x in help_text.splitlines() if x.strip().startswith("--format")]
        assert re.search(r"<[\w-]+(\|[\w-]+)+>", line), f"gov {name}: {line}"


@pytest.mark.parametrize(
    ("command", "option", "choices"),
    [
        ("prepare-merge", "--launcher", "local|slurm"),
        ("launch", "--launcher", "local|slurm"),
        ("check", "--format", "text|json|github"),
        ("add", "--scenario-type", "fixed-seq-len|agentic-coding"),
        ("matrix", "--scenario-type", "fixed-seq-len|agentic-coding"),
    ],
)
def test_choices_are_shown_as_choices(command: str, option: str, choices: str) -> None:
    result = run_gov(*command.split(), "--help")
    assert result.exit_code == 0
    (line,) = [line for line in result.stdout.splitlines() if line.strip().startswith(option)]
    assert choices in line and "str>" not in line and "str]" not in line, line


def test_version_flag_and_command() -> None:
    for args in (("--version",), ("version",)):
        result = run_gov(*args)
        assert result.exit_code == 0 and result.stdout == f"gov {__version__}\n"


def test_format_is_accepted_the_same_way_everywhere(example_repo: Repo) -> None:
    for args in (("check", "--format", "JSON"), ("check", "--format=json")):
        result = run_gov(*args, cwd=example_repo.path)
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["ok"] is True


def test_usage_errors_in_json_when_json_was_asked(example_repo: Repo) -> None:
    result = run_gov("check", "--base-ref", "nope", "--format", "json", cwd=example_repo.path)
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["exit_code"] == 2 and "nope" in error["message"] and error["hint"]
    bad_option = run_gov("check", "--format", "json", "--pr", "x", cwd=example_repo.path)
    assert bad_option.exit_code == 2
    assert "--pr" in json.loads(bad_option.stdout)["error"]["message"]


def test_usage_errors_as_one_json_line_for_jsonl(example_repo: Repo) -> None:
    result = run_gov("audit", "nope..main", "--format", "jsonl", cwd=example_repo.path)
    assert result.exit_code == 2, result.stdout + result.stderr
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["error"]["exit_code"] == 2


def test_usage_errors_as_annotations_when_github_was_asked(example_repo: Repo) -> None:
    result = run_gov("check", "--format", "github", "--base-ref", "nope", cwd=example_repo.path)
    assert result.exit_code == 2
    assert result.stdout.startswith("::error title=gov::"), result.stdout
    unknown = run_gov("check", "--format", "github", "--bogus", cwd=example_repo.path)
    assert unknown.exit_code == 2 and unknown.stdout.startswith("::error title=gov::")


def test_misspelled_gov_variable_is_warned_about(example_repo: Repo) -> None:
    result = run_gov("check", cwd=example_repo.path, env={"GOV_MAIN_BRANC": "main"})
    assert result.exit_code == 0
    assert "GOV_MAIN_BRANC is not a gov setting" in result.stderr
    assert "did you mean `GOV_MAIN_BRANCH`?" in result.stderr
    quiet = run_gov("check", cwd=example_repo.path, env={"GOV_MAIN_BRANCH": "main"})
    assert "not a gov setting" not in quiet.stderr


def test_plan_without_a_changelog_is_a_usage_error(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("bare")
    repo.commit("no changelog here", **{"README": "x"})
    result = run_gov("plan", cwd=repo.path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "perf-changelog.yaml does not exist at HEAD" in result.stderr
