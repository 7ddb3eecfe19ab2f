"""What every command adapter shares: the global options, turning errors into
exit codes, opening the repository, and the one output helper."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from typer.core import TyperGroup

from governance.cli.output import boundary as output_boundary
from governance.cli.output import command
from governance.core.diagnostics import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    GovError,
)

if TYPE_CHECKING:
    from governance.check.answers import Answer
    from governance.core.settings import Settings
    from governance.git.repo import GitRepo

F = TypeVar("F", bound=Callable[..., Any])


class _State:
    repo_path: Path = Path(".")
    debug: bool = False
    # A repository the process already opened (the hook's skip decision) and
    # the path it was opened at, handed to the command once so git is not
    # asked again.
    opened: tuple[Path, GitRepo] | None = None

    def take_repo(self) -> GitRepo:
        """The repository at `repo_path`: the one already opened there, else a new one."""
        from governance.git.repo import GitRepo

        opened, self.opened = self.opened, None
        if opened is not None and opened[0] == self.repo_path:
            return opened[1]
        return GitRepo(self.repo_path)


state = _State()


def err(text: str) -> None:
    sys.stderr.write(text + "\n")


# The formats whose readers are programs: a failure is printed for them too.
MACHINE_FORMATS = ("json", "jsonl", "github")


def formatted_error(output: str | None, message: str, hint: str, exit_code: int) -> None:
    """Also print a failure to stdout as JSON or an annotation when that
    `--format` was asked for (the plain message always goes to stderr)."""
    if output in MACHINE_FORMATS:
        from governance.check.render import render_error

        rendered = render_error(output, message, hint, exit_code)
        if output == "github":
            command(rendered)
        else:
            sys.stdout.write(rendered)


def requested_format(args: list[str]) -> str | None:
    """The `--format` value among command-line arguments, lower-cased."""
    for index, arg in enumerate(args):
        if arg.startswith("--format="):
            return arg.partition("=")[2].lower()
        if arg == "--format" and index + 1 < len(args):
            return args[index + 1].lower()
    return None


# typer's usage error (click's, vendored or not), found without naming click.
_USAGE_ERROR: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError"
)


class GovGroup(TyperGroup):
    """The `gov` group: a usage error that the parser raises (an unknown
    option, a bad value) is also printed as JSON or an annotation when the
    command line asked for that `--format`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta.setdefault("gov.args", list(args))
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _USAGE_ERROR as exc:
            output = requested_format(ctx.meta.get("gov.args", []))
            if output not in MACHINE_FORMATS:
                raise
            exc.show()  # type: ignore[attr-defined]
            formatted_error(output, exc.format_message(), "see --help", 2)  # type: ignore[attr-defined]
            raise typer.Exit(2) from None


def guarded(func: F) -> F:
    """Turn GovError into a clean message and exit code; crashes into exit 3."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        output = str(kwargs.get("output", "") or "").lower() or None
        with output_boundary(output):
            try:
                return func(*args, **kwargs)
            except typer.Exit:
                raise
            except GovError as exc:
                findings = list(getattr(exc, "violations", ()))
                for finding in findings:
                    where = finding.located()
                    err(f"{where + ': ' if where else ''}{finding.code} {finding.message}")
                    if finding.hint:
                        err(f"  hint: {finding.hint}")
                err(f"gov: error: {exc}")
                if exc.hint and not any(exc.hint == finding.hint for finding in findings):
                    err(f"  hint: {exc.hint}")
                formatted_error(output, str(exc), exc.hint, exc.exit_code)
                raise typer.Exit(exc.exit_code) from None
            except BrokenPipeError:  # e.g. `gov log KEY | head`: the reader left, not a crash
                sys.stderr.close()
                raise typer.Exit(EXIT_OK) from None
            except KeyboardInterrupt:
                err("gov: interrupted")
                raise typer.Exit(EXIT_INTERRUPTED) from None
            except Exception as exc:
                if state.debug:
                    raise
                from governance import __version__

                err(
                    f"gov: internal error: {type(exc).__name__}: {exc}\n"
                    f"  gov {__version__}, Python {sys.version.split()[0]}; "
                    "rerun with --debug for the traceback and report it"
                )
                raise typer.Exit(EXIT_INTERNAL) from None

    return wrapper  # type: ignore[return-value]


def main_branch_name(repo: GitRepo, flag: str | None = None) -> str:
    """The main branch that finds the base before any trusted settings are
    read: the flag, else `GOV_MAIN_BRANCH` (the one place it is read), else
    `check.sides.boot_main_branch`'s rule."""
    from governance.check.sides import boot_main_branch

    return boot_main_branch(repo, flag or os.environ.get("GOV_MAIN_BRANCH"))


def open_repo(overrides: dict[str, Any] | None = None) -> tuple[GitRepo, Settings]:
    """Open the repository and load the checkout's settings (flags override;
    `check.sides` owns how settings are loaded)."""
    from governance.check.sides import worktree_settings
    from governance.git.repo import GitRepo

    repo = GitRepo(state.repo_path)
    warn_unknown_variables()
    return repo, worktree_settings(repo, overrides)


def warn_unknown_variables() -> None:
    """A `GOV_*` variable that names no setting is most likely a typo: say so."""
    from governance.core.settings import unknown_variables

    for name, hint in unknown_variables(os.environ):
        err(f"gov: warning: {name} is not a gov setting; ignored" + (f" ({hint})" if hint else ""))


def add_ignored(settings: Settings, codes: list[str] | None) -> Settings:
    """Settings with the --ignore codes added to the `ignore` setting's
    (refused with exit 2 unless each is a stricter, ignorable code)."""
    if not codes:
        return settings
    from dataclasses import replace

    from governance.core.codes import ignorable_codes

    return replace(
        settings, ignore=ignorable_codes((*settings.ignore, *codes), "command line (--ignore)")
    )


IGNORE_HELP = (
    "Turn off a rule where gov is stricter than the reference (repeatable; "
    "GOV312 GOV313 GOV314 GOV511 GOV517 GOV521). Adds to the `ignore` setting."
)


def format_option(help: str = "Output format.") -> Any:
    """The one `--format` option: its choices, case-insensitive."""
    return typer.Option("--format", help=help, case_sensitive=False)


def canary_option() -> Any:
    """`--canary`, the same on `gov launch` and `gov prepare-merge`."""
    return typer.Option(
        "--canary", help="Run each recipe's first row first; a recipe whose canary fails stops."
    )


def fail_fast_option(what: str) -> Any:
    """`--fail-fast`: stop `what` (the launch, the sweep) at the first failed row."""
    return typer.Option("--fail-fast", help=f"Stop the {what} at the first failed row.")


def launcher_option(help: str) -> Any:
    """The one `--launcher` option: its choices are the launcher registry's
    (`governance.sweeps.launcher.REGISTRY`); not given, the repository's layout
    decides (`default_launcher`: `runner` with a `runners/` folder, else `local`)."""
    from governance.sweeps.launcher import launcher_names

    names = launcher_names()

    def parse(value: str) -> str:
        if value.lower() not in names:
            choices = ", ".join(repr(name) for name in names)
            raise typer.BadParameter(f"{value!r} is not one of {choices}")
        return value.lower()

    return typer.Option(
        "--launcher",
        help=f"{help} Default: runner when the checkout has runners/launch_*.sh, else local.",
        metavar="[" + "|".join(names) + "]",
        parser=parse,
        show_default=False,
    )


class Scenario(StrEnum):
    """`--scenario-type`: the scenarios an entry or a matrix is limited to."""

    fixed_seq_len = "fixed-seq-len"
    agentic_coding = "agentic-coding"


class TextOrJson(StrEnum):
    """`--format` of the commands that print either a readable text or JSON."""

    text = "text"
    json = "json"


def emit(text: str) -> None:
    """Write `text` to stdout, ending it with exactly one newline."""
    sys.stdout.write(text.rstrip("\n") + "\n")


def emit_json(data: Any) -> None:
    """Write `data` as indented JSON (non-ASCII kept readable)."""
    emit(json.dumps(data, indent=2, ensure_ascii=False))


class CheckFormat(StrEnum):
    """`--format` of the commands that print a check result."""

    text = "text"
    json = "json"
    github = "github"


def emit_check(found: Answer) -> None:
    """Print a check's answer (and its step summary, for `github`); exit 0
    (clean) or 1 (findings)."""
    command(found.commands)
    sys.stdout.write(found.stdout)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if found.summary and summary:
        from governance.core.safe_text import terminal

        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(terminal(found.summary))
    raise typer.Exit(EXIT_OK if found.ok else EXIT_FINDINGS)
