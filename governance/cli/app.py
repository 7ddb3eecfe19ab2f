"""The `gov` application: global options and the registration of every command.

Command modules hold plain functions and never import this module, so the
table below is the one place that says which command runs what. A process
runs one command, so `main` imports and registers only that one (typer reads
every registered function's signature at each start); heavy modules
(gitpython, pydantic, ruamel.yaml) are imported inside the commands. Exit codes: 0 clean,
1 findings, 2 usage error, 3 internal error, 130 interrupted.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from governance.cli.common import GovGroup, state


def _print_version(value: bool) -> None:
    if value:
        from governance import __version__

        sys.stdout.write(f"gov {__version__}\n")
        raise typer.Exit(0)


def main_options(
    repo: Annotated[
        Path, typer.Option("--repo", "-C", help="Run as if started in this directory.")
    ] = Path("."),
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of crashes.")] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print gov's version and exit.",
        ),
    ] = False,
) -> None:
    # Before any child starts: no git, launch script or sbatch inherits the
    # forge tokens (imported only when there is something to take or forget).
    tokens = "GH_TOKEN" in os.environ or "GITHUB_TOKEN" in os.environ
    if tokens or "governance.forge.tokens" in sys.modules:
        from governance.forge.tokens import take_tokens

        take_tokens()
    state.repo_path = repo
    state.debug = debug


# Every command, alphabetical within its family: name -> (module under
# governance.cli, attribute). A function is a command, a Typer a group.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "check"),
    "add": ("author", "add"),
    "audit": ("check", "audit"),
    "schema": ("check", "schema"),
    "demo": ("check", "demo"),
    "init": ("init", "init"),
    "version": ("check", "version"),
    "matrix": ("matrix", "matrix"),
    "plan": ("matrix", "plan"),
    "log": ("matrix", "log"),
    "canonicalize": ("merge", "canonicalize"),
    "resolve-conflict": ("merge", "resolve_conflict"),
    "prepare-merge": ("merge", "prepare_merge"),
    "merge-driver": ("driver", "merge_driver_command"),
    "install-merge-driver": ("driver", "install_merge_driver"),
    "launch": ("sweeps", "launch"),
    "sweep-gate": ("gate", "sweep_gate"),
    "runs": ("sweeps", "runs_app"),
    "pr": ("pr", "pr_app"),
    "queue": ("queue", "queue_app"),
    "results": ("results", "results_app"),
}
# Commands of a group that live in another module: group -> (name, module, attribute).
GROUP_EXTRAS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "runs": (("import", "results", "runs_import"),),
    "queue": (("report", "queue_report", "queue_report"),),
}


def _target(name: str) -> Any:
    module_name, attribute = COMMANDS[name]
    target = getattr(importlib.import_module(f"governance.cli.{module_name}"), attribute)
    if isinstance(target, typer.Typer):
        have = {info.name for info in target.registered_commands}
        for command, extra_module, extra in GROUP_EXTRAS.get(name, ()):
            if command not in have:  # a group object outlives one build
                module = importlib.import_module(f"governance.cli.{extra_module}")
                target.command(command)(getattr(module, extra))
    return target


def build_app(only: str | None = None) -> typer.Typer:
    """The `gov` application with every command, or with `only` that one:
    its options, help and exit codes are the same either way, and a process
    that runs one command neither imports nor introspects the others."""
    built = typer.Typer(
        cls=GovGroup,
        name="gov",
        help="Changelog-centric merge governance for performance-benchmark repositories.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    built.callback()(main_options)
    for name in [only] if only else COMMANDS:
        target = _target(name)
        if isinstance(target, typer.Typer):
            built.add_typer(target, name=name)
        else:
            built.command(name)(target)
    return built


# The global options that take a value (everything before the command name).
_VALUE_OPTIONS = ("--repo", "-C")


def command_named(argv: list[str]) -> str | None:
    """The command `argv` runs when it is one gov knows, found past the
    global options; None for `--help`, `--version`, a typo or no command
    (the whole application answers those)."""
    items = iter(argv)
    for arg in items:
        if arg in _VALUE_OPTIONS:
            next(items, None)
        elif arg.startswith("--repo=") or (arg.startswith("-C") and len(arg) > 2):
            continue
        elif arg.startswith("-"):
            if arg not in ("--debug",):
                return None
        else:
            return arg if arg in COMMANDS else None
    return None


@functools.cache
def _whole_app() -> typer.Typer:
    return build_app()


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole application, for tests and embedding
        return _whole_app()
    raise AttributeError(name)


def main() -> None:
    build_app(command_named(sys.argv[1:]))()


if __name__ == "__main__":
    main()
