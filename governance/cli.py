"""The `gov` command line: parse arguments, call one service, render its result.

Heavy modules (gitpython, pydantic, ruamel.yaml) are imported inside the
commands so that `gov --help` and the hook start fast. Exit codes: 0 clean,
1 findings, 2 usage error, 3 internal error, 130 interrupted.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from governance.diagnostics import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    GovError,
)

app = typer.Typer(
    name="gov",
    help="Changelog-centric merge governance for performance-benchmark repositories.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

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


@app.callback()
def main_options(
    repo: Annotated[
        Path, typer.Option("--repo", "-C", help="Run as if started in this directory.")
    ] = Path("."),
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks of crashes.")] = False,
) -> None:
    state.repo_path = repo
    state.debug = debug


def open_repo(overrides: dict[str, Any] | None = None):
    """Open the repository and load its settings (flags override)."""
    from governance.gitrepo import GitRepo
    from governance.settings import load_settings

    repo = GitRepo(state.repo_path)
    settings = load_settings(repo.root, origin_url=repo.remote_url(), overrides=overrides)
    return repo, settings


class CheckFormat(StrEnum):
    text = "text"
    json = "json"
    github = "github"


@app.command()
@guarded
def check(
    base_ref: Annotated[
        str | None,
        typer.Option(help="Base revision (default: merge-base of HEAD with the main branch)."),
    ] = None,
    head_ref: Annotated[str | None, typer.Option(help="Head revision (default: HEAD).")] = None,
    worktree: Annotated[
        bool, typer.Option("--worktree", help="Read head from the working tree.")
    ] = False,
    staged: Annotated[bool, typer.Option("--staged", help="Read head from the index.")] = False,
    pr: Annotated[
        int | None, typer.Option("--pr", min=1, help="PR mode: the change is PR N.")
    ] = None,
    main: Annotated[
        bool, typer.Option("--main", help="Main mode: appended links must be canonical.")
    ] = False,
    expect_pr: Annotated[
        int | None, typer.Option("--expect-pr", min=1, help="With --main: links must name PR N.")
    ] = None,
    no_configs: Annotated[
        bool, typer.Option("--no-configs", help="Do not resolve config keys.")
    ] = False,
    full: Annotated[bool, typer.Option("--full", help="Validate the whole base file too.")] = False,
    output: Annotated[
        CheckFormat, typer.Option("--format", help="Output format.")
    ] = CheckFormat.text,
    repository: Annotated[
        str | None, typer.Option("--repository", help="ORG/NAME for canonical links.")
    ] = None,
    main_branch: Annotated[
        str | None, typer.Option("--main-branch", help="Main branch name.")
    ] = None,
) -> None:
    """Validate the changelog change between a base and a head."""
    from governance.changelog.rules import CheckMode
    from governance.checking import CheckOptions, HeadSource, run_check
    from governance.diagnostics import UsageError
    from governance.report import render_github, render_json, render_markdown_summary, render_text

    if worktree and staged:
        raise UsageError(
            "--worktree and --staged are exclusive", "pick where the head bytes come from"
        )
    if (worktree or staged) and head_ref:
        raise UsageError(
            "--head-ref cannot be combined with --worktree/--staged", "drop one of them"
        )
    if pr is not None and main:
        raise UsageError(
            "--pr and --main are exclusive", "PR mode checks a PR's change; main mode a landed one"
        )
    if expect_pr is not None and not main:
        raise UsageError("--expect-pr needs --main", "in PR mode, --pr N already names the PR")
    mode = CheckMode.pr_mode(pr) if pr else CheckMode.main(expect_pr) if main else CheckMode()
    source = HeadSource.WORKTREE if worktree else HeadSource.STAGED if staged else HeadSource.REF
    repo, settings = open_repo({"repository": repository, "main-branch": main_branch})
    options = CheckOptions(mode, base_ref, head_ref, source, configs=not no_configs, full=full)
    result = run_check(repo, settings, options)
    if output is CheckFormat.json:
        sys.stdout.write(render_json(result))
    elif output is CheckFormat.github:
        sys.stdout.write(render_github(result))
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(render_markdown_summary(result))
    else:
        sys.stdout.write(render_text(result))
    raise typer.Exit(EXIT_OK if result.verdict.ok else EXIT_FINDINGS)


class AuditFormat(StrEnum):
    text = "text"
    jsonl = "jsonl"


@app.command()
@guarded
def audit(
    rev: Annotated[
        str, typer.Argument(help="Revision whose first-parent history to replay.")
    ] = "HEAD",
    no_configs: Annotated[
        bool, typer.Option("--no-configs", help="Do not resolve config keys.")
    ] = False,
    output: Annotated[
        AuditFormat, typer.Option("--format", help="Output format.")
    ] = AuditFormat.text,
) -> None:
    """Replay history: which commits broke the changelog rules?"""
    import json

    from governance.audit import audit as run_audit
    from governance.audit import changelog_commits
    from governance.report import render_audit

    repo, settings = open_repo()
    commits = changelog_commits(repo, settings, rev)
    rows = run_audit(repo, settings, commits, configs=not no_configs)
    if output is AuditFormat.jsonl:
        for row in rows:
            sys.stdout.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
        raise typer.Exit(EXIT_OK)
    progress = (
        typer.progressbar(rows, length=len(commits), label="auditing", file=sys.stderr)
        if sys.stderr.isatty()
        else contextlib.nullcontext(rows)
    )
    with progress as iterated:
        text, failed = render_audit(iterated)
    sys.stdout.write(text)
    raise typer.Exit(EXIT_FINDINGS if failed else EXIT_OK)


@app.command()
@guarded
def schema(
    write: Annotated[bool, typer.Option("--write", help="Write schemas/ from the models.")] = False,
    check_: Annotated[bool, typer.Option("--check", help="Fail when schemas/ drifted.")] = False,
    directory: Annotated[Path, typer.Option("--dir", help="Schema directory.")] = Path("schemas"),
) -> None:
    """Generate (or verify) the JSON Schemas under schemas/."""
    from governance import schemas
    from governance.diagnostics import UsageError

    if write == check_:
        raise UsageError("pass exactly one of --write or --check", "gov schema --write")
    if write:
        for path in schemas.write(directory):
            sys.stdout.write(f"wrote {path}\n")
        raise typer.Exit(EXIT_OK)
    stale = schemas.drift(directory)
    for name in stale:
        err(f"{directory / name}: out of date with the models")
    if stale:
        err("  hint: run `gov schema --write` and commit the result")
        raise typer.Exit(EXIT_FINDINGS)
    sys.stdout.write(f"schemas in {directory} match the models\n")


class TextOrJson(StrEnum):
    """`--format` of the commands that print either a readable text or JSON."""

    text = "text"
    json = "json"


# Command groups that live in their own modules register themselves on `app`
# when imported; keep this list short and alphabetical.
from governance import cli_driver, cli_matrix, cli_merge, cli_pr, cli_sweeps  # noqa: E402, F401  (registers commands)


@app.command()
@guarded
def demo() -> None:
    """Run the quickstart on a throwaway copy of the shipped example repository."""
    from governance.demo import run_demo

    ok = run_demo(lambda text: sys.stdout.write(text.rstrip("\n") + "\n"))
    raise typer.Exit(EXIT_OK if ok else EXIT_FINDINGS)


@app.command()
def version() -> None:
    """Print gov's version."""
    from governance import __version__

    sys.stdout.write(f"gov {__version__}\n")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
