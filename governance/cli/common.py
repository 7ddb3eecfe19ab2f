"""What every command adapter shares: the global options, turning errors into
exit codes, opening the repository, and the one output helper."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from governance.core.diagnostics import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    GovError,
)

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.git.repo import GitRepo

F = TypeVar("F", bound=Callable[..., Any])


class _State:
    repo_path: Path = Path(".")
    debug: bool = False


state = _State()


def err(text: str) -> None:
    sys.stderr.write(text + "\n")


def guarded(func: F) -> F:
    """Turn GovError into a clean message and exit code; crashes into exit 3."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
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


def open_repo(overrides: dict[str, Any] | None = None) -> tuple[GitRepo, Settings]:
    """Open the repository and load its settings (flags override)."""
    from governance.core.settings import load_settings
    from governance.git.repo import GitRepo

    repo = GitRepo(state.repo_path)
    settings = load_settings(
        repo.root,
        origin_url=repo.remotes.url(),
        upstream_url=repo.remotes.url("upstream"),
        read_changelog=lambda path, main: _landed_changelog(repo, path, main),
        overrides=overrides,
    )
    return repo, settings


def settings_at(
    repo: GitRepo, revision: str, label: str, overrides: dict[str, Any] | None
) -> Settings:
    """The settings files as `revision` has them (a trusted side: the base of
    a check, main for prepare-merge); the environment and flags still override."""
    from governance.core.settings import load_settings

    return load_settings(
        repo.root,
        origin_url=repo.remotes.url(),
        upstream_url=repo.remotes.url("upstream"),
        read_changelog=lambda path, main: _landed_changelog(repo, path, main),
        overrides=overrides,
        read_file=lambda name: repo.read_blob(revision, name),
        label=label,
    )


def _landed_changelog(repo: GitRepo, path: str, main_branch: str) -> bytes | None:
    """The changelog as main has it (its links were written at merge time),
    else as HEAD has it; None in an empty repository."""
    from governance.core.diagnostics import UsageError
    from governance.git.mainref import main_ref

    try:
        commit = main_ref(repo, main_branch).sha
    except UsageError:
        commit = repo.ref_sha("HEAD") or ""
    return repo.read_blob(commit, path) if commit else None


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
