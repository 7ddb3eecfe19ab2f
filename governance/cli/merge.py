"""`gov` commands for the merge area; registered on the app in `governance.cli.app`:
`canonicalize`, `resolve-conflict` and `prepare-merge` (docs/prepare-merge.md)."""

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from governance.cli.common import (
    TextOrJson,
    canary_option,
    fail_fast_option,
    format_option,
    guarded,
    launcher_option,
    main_branch_name,
    open_repo,
    state,
    warn_unknown_variables,
)

if TYPE_CHECKING:
    from governance.merge.worktree_edits import EditOutcome


class ForgeKind(StrEnum):
    local = "local"
    github = "github"


def _say_rewrites(outcome: "EditOutcome") -> None:
    for rewrite in outcome.result.rewrites:
        sys.stdout.write(f"{outcome.path}:{rewrite.line}: pr-link {rewrite.old} -> {rewrite.new}\n")


@guarded
def canonicalize(
    pr: Annotated[int, typer.Option("--pr", min=1, help="The PR whose link to write.")],
    base_ref: Annotated[
        str | None, typer.Option(help="Base revision (default: the merge-base with main).")
    ] = None,
) -> None:
    """Rewrite the placeholder links of the entries this PR appended."""
    from governance.merge.worktree_edits import canonicalize_worktree

    repo, settings = open_repo()
    outcome = canonicalize_worktree(repo, settings, pr, base_ref)
    _say_rewrites(outcome)
    if not outcome.written:
        sys.stdout.write(f"{outcome.path}: links already final; nothing changed\n")


@guarded
def resolve_conflict(
    pr: Annotated[int, typer.Option("--pr", min=1, help="The PR being merged with main.")],
) -> None:
    """Resolve a conflicted changelog while merging main into the PR branch."""
    from governance.merge.worktree_edits import resolve_worktree

    repo, settings = open_repo()
    outcome = resolve_worktree(repo, settings, pr)
    _say_rewrites(outcome)
    for dropped in outcome.result.dropped:
        sys.stdout.write(
            f"{outcome.path}: dropped PR entry {dropped.pr_entry}: main gained it as entry"
            f" {dropped.main_entry}\n"
        )
    sys.stdout.write(f"{outcome.path}: resolved, staged and checked; commit the merge\n")


@guarded
def prepare_merge(
    pr: Annotated[int, typer.Option("--pr", min=1, help="The PR to prepare and merge.")],
    forge: Annotated[ForgeKind, typer.Option("--forge", help="Where the PR lives.")] = (
        ForgeKind.local
    ),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would happen; change nothing.")
    ] = False,
    no_push: Annotated[
        bool, typer.Option("--no-push", help="Prepare and check, but do not push (or merge).")
    ] = False,
    no_merge: Annotated[
        bool, typer.Option("--no-merge", help="Push the prepared branch, but do not merge.")
    ] = False,
    main_branch: Annotated[
        str | None, typer.Option("--main-branch", help="Main branch name.")
    ] = None,
    remote: Annotated[
        str, typer.Option("--remote", help="Git remote of the GitHub repository.")
    ] = "origin",
    check_timeout: Annotated[
        float, typer.Option("--check-timeout", help="Seconds to wait for required checks.")
    ] = 900.0,
    required_check: Annotated[
        list[str] | None,
        typer.Option("--required-check", help="Check that must pass (repeatable)."),
    ] = None,
    output: Annotated[TextOrJson, format_option("Report format.")] = TextOrJson.text,
    sweep: Annotated[
        bool | None,
        typer.Option(
            "--sweep/--no-sweep",
            help="Reuse the PR's results and launch the other rows on this machine before "
            "pushing (default: the sweep-on-merge setting, false: plan and report only).",
        ),
    ] = None,
    launcher: Annotated[str | None, launcher_option("Where rerun rows run.")] = None,
    parallel: Annotated[int, typer.Option("--parallel", min=1, help="Rows at a time.")] = 1,
    rerun_all: Annotated[
        bool, typer.Option("--rerun-all", help="Reuse nothing: run every row again.")
    ] = False,
    reuse_only: Annotated[
        bool, typer.Option("--reuse-only", help="Refuse if any row would have to run.")
    ] = False,
    canary: Annotated[bool, canary_option()] = False,
    fail_fast: Annotated[bool, fail_fast_option("sweep")] = False,
) -> None:
    """Merge main into PR N, resolve and canonicalize the changelog, check,
    plan, reuse or launch the sweep, push, wait for checks and squash-merge
    (with rollback on any failure)."""

    from governance.check.sides import main_settings
    from governance.forge import open_forge
    from governance.git.repo import GitRepo
    from governance.merge.prepare import PrepareOptions
    from governance.merge.prepare import prepare_merge as run
    from governance.merge.report import render_json, render_text
    from governance.merge.sweep_step import SweepOptions, reuse_mode, sweep_hook
    from governance.merge.work import REQUIRED_CHECKS

    repo = GitRepo(state.repo_path)
    warn_unknown_variables()
    main = main_branch_name(repo, main_branch)
    on_github = forge is ForgeKind.github
    if on_github:  # main as the forge has it now: its settings decide
        repo.remotes.fetch(remote, f"+refs/heads/{main}:refs/remotes/{remote}/{main}")
    # Settings from main's tip, never from the branch that happens to be checked out.
    settings = main_settings(
        repo,
        main,
        {"main-branch": main_branch},
        remote=remote if on_github else None,
        local=not on_github,
    )
    the_forge = open_forge(forge.value, repo, settings.repository, main_branch=settings.main_branch)
    options = PrepareOptions(
        pr,
        dry_run=dry_run,
        push=not no_push,
        merge=not no_merge,
        main_branch=settings.main_branch,
        remote=remote if forge is ForgeKind.github else None,
        required_checks=tuple(required_check or REQUIRED_CHECKS),
        check_timeout=check_timeout,
    )
    mode = reuse_mode(rerun_all=rerun_all, reuse_only=reuse_only)
    hook = sweep_hook(
        repo,
        settings,
        sweep,
        SweepOptions(launcher or "", mode, parallel, canary=canary, fail_fast=fail_fast),
    )
    report = run(repo, settings, the_forge, options, sweep=hook)
    render = render_json if output is TextOrJson.json else render_text
    sys.stdout.write(render(report))
    raise typer.Exit(report.exit_code)
