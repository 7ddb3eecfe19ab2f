"""`gov pr ...`: pull requests on the embedded local forge (SQLite under
`.git/gov/`); registered in `governance.cli.app`."""

from dataclasses import asdict
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from governance.cli.common import TextOrJson, emit, emit_json, format_option, guarded, open_repo

if TYPE_CHECKING:
    from governance.forge.local import LocalForge

pr_app = typer.Typer(
    name="pr",
    help="Pull requests on the embedded local forge (no server, no token).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


class ListState(StrEnum):
    open = "open"
    closed = "closed"
    merged = "merged"
    all = "all"


class Conclusion(StrEnum):
    success = "success"
    failure = "failure"
    neutral = "neutral"
    skipped = "skipped"
    cancelled = "cancelled"
    timed_out = "timed_out"
    action_required = "action_required"


def _forge() -> "LocalForge":
    from governance.forge.local import LocalForge

    repo, settings = open_repo()
    return LocalForge(repo, main_branch=settings.main_branch, repository_slug=settings.repository)


@pr_app.command("open")
@guarded
def pr_open_command(
    number: Annotated[
        int, typer.Option("--number", min=1, help="The PR number (the one pr-link will name).")
    ],
    branch: Annotated[str, typer.Option("--branch", help="Existing local head branch.")],
    title: Annotated[
        str | None,
        typer.Option("--title", help="Title (default: the subject of the branch's first commit)."),
    ] = None,
    label: Annotated[list[str] | None, typer.Option("--label", help="Label (repeatable).")] = None,
    base: Annotated[
        str | None, typer.Option("--base", help="Base branch (default: the main branch).")
    ] = None,
) -> None:
    """Open a pull request for a local branch."""
    from governance.forge.local import pr_open
    from governance.forge.render import render_pull

    pull = pr_open(
        _forge(), number, branch, title=title, labels=tuple(label or ()), base_branch=base
    )
    emit(render_pull(pull))


@pr_app.command("list")
@guarded
def pr_list_command(
    state: Annotated[ListState, typer.Option("--state", help="Which PRs.")] = ListState.open,
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """List pull requests, lowest number first."""
    from governance.forge.local import pr_list
    from governance.forge.render import render_pull_list

    pulls = pr_list(_forge(), state.value)
    if output is TextOrJson.json:
        emit_json([asdict(pull) for pull in pulls])
    else:
        emit(render_pull_list(pulls))


@pr_app.command("show")
@guarded
def pr_show_command(
    number: Annotated[int, typer.Argument(help="The PR number.")],
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """Show one pull request with its comments and the checks on its head."""
    from governance.forge.local import pr_show
    from governance.forge.render import render_pull

    details = pr_show(_forge(), number)
    if output is TextOrJson.json:
        data = asdict(details.pull)
        data["comments"] = [asdict(comment) for comment in details.comments]
        data["checks"] = [asdict(check) for check in details.checks]
        emit_json(data)
    else:
        emit(render_pull(details.pull, details.comments, details.checks))


@pr_app.command("check")
@guarded
def pr_check_command(
    number: Annotated[int, typer.Argument(help="The PR number.")],
    name: Annotated[str, typer.Option("--name", help="Check name, e.g. check-changelog.")],
    conclusion: Annotated[Conclusion, typer.Option("--conclusion", help="How it ended.")],
) -> None:
    """Record a completed check run on the PR's head (simulates CI locally)."""
    from governance.forge.local import pr_check

    run = pr_check(_forge(), number, name, conclusion.value)
    emit(f"recorded {run.name}: {run.conclusion} on {run.head_sha[:12]} (PR #{number})")
