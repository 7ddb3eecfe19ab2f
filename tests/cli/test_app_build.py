"""`gov` builds only the command a process runs: the same options, help and
usage errors as the whole application, found past the global options."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from governance.cli.app import COMMANDS, build_app, command_named

runner = CliRunner()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "--pr", "1"], "check"),
        (["-C", "/tmp/x", "plan"], "plan"),
        (["-C/tmp/x", "--debug", "queue", "report"], "queue"),
        (["--repo=/tmp/x", "results", "compare"], "results"),
        (["--repo", "check", "plan"], "plan"),  # `check` is --repo's value here
        (["--help"], None),
        (["--version", "check"], None),
        (["chek"], None),  # the whole application suggests `check`
        ([], None),
        (["--unknown", "check"], None),
    ],
)
def test_the_command_is_found_past_the_global_options(
    argv: list[str], expected: str | None
) -> None:
    assert command_named(argv) == expected


def _leaves(name: str) -> list[list[str]]:
    """Every command line that reaches a command, `name` itself or its group's."""
    from typer.main import get_command

    group = get_command(build_app(name))
    command = group.commands[name]  # type: ignore[attr-defined]
    subcommands = getattr(command, "commands", None)
    return [[name, sub] for sub in sorted(subcommands)] if subcommands else [[name]]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_one_command_built_alone_helps_as_the_whole_application(name: str) -> None:
    whole = build_app()
    for argv in _leaves(name):
        alone = runner.invoke(build_app(name), [*argv, "--help"])
        full = runner.invoke(whole, [*argv, "--help"])
        assert alone.exit_code == full.exit_code == 0, argv
        assert alone.output == full.output, argv


def test_a_usage_error_is_the_same_through_main() -> None:
    """Through the real entry point (which builds one command), a bad value is
    a usage error, exit 2, named as the whole application names it."""
    result = subprocess.run(
        [sys.executable, "-c", "from governance.cli.app import main; main()",
         "check", "--format", "yaml"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    whole = runner.invoke(build_app(), ["check", "--format", "yaml"])
    assert result.returncode == whole.exit_code == 2
    assert "Invalid value for '--format'" in result.stderr
    assert result.stderr.splitlines()[-1] == whole.output.splitlines()[-1]
