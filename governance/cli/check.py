"""`gov check`, `gov audit`, `gov schema`, `gov demo` and `gov version`."""

import contextlib
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from governance.cli.common import (
    IGNORE_HELP,
    CheckFormat,
    add_ignored,
    emit_check,
    err,
    format_option,
    guarded,
    main_branch_name,
    open_repo,
    state,
    warn_unknown_variables,
)
from governance.cli.gate import EVENT_HELP, LABELS_HELP, modifiers_option
from governance.cli.output import raw
from governance.core.diagnostics import EXIT_FINDINGS, EXIT_OK

NO_CACHE_HELP = "Compute the answer afresh, not from .git/gov/check-cache (also GOV_NO_CACHE=1)."


@guarded
def check(
    base_ref: Annotated[
        str | None,
        typer.Option(
            help="Compare with where head forked from this revision (their merge-base; "
            "default: the main branch)."
        ),
    ] = None,
    exact_base: Annotated[
        bool,
        typer.Option(
            "--exact-base", help="Compare with --base-ref itself (two-dot), not the merge-base."
        ),
    ] = False,
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
    output: Annotated[CheckFormat, format_option("Output format.")] = CheckFormat.text,
    repository: Annotated[
        str | None, typer.Option("--repository", help="ORG/NAME for canonical links.")
    ] = None,
    main_branch: Annotated[
        str | None, typer.Option("--main-branch", help="Main branch name.")
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", metavar="CODE", help=IGNORE_HELP)
    ] = None,
    sweep_preflight: Annotated[
        bool | None,
        typer.Option(
            "--sweep-preflight/--no-sweep-preflight",
            help="Check the launch scripts of the rows the change triggers (resolution, "
            "bash -n, engine flag values). Default: the sweep-preflight setting (auto: "
            "when the scripts folder exists).",
        ),
    ] = None,
    no_cache: Annotated[
        bool,
        typer.Option("--no-cache", help=NO_CACHE_HELP),
    ] = False,
    labels: Annotated[str | None, typer.Option("--labels", help=LABELS_HELP)] = None,
    event: Annotated[Path | None, typer.Option("--event", help=EVENT_HELP, dir_okay=False)] = None,
    summary_plan: Annotated[
        bool,
        typer.Option(
            "--summary-plan",
            help="With --format github: when the check passes, also append to "
            "$GITHUB_STEP_SUMMARY what `gov plan --format markdown --empty-ok` prints "
            "(same base, head and label modifiers), from the plan the check built.",
        ),
    ] = False,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="First fix what is mechanical in the working tree's appended entries "
            "(a placeholder spelled otherwise -> XXX, trailing and final whitespace); "
            "history is never touched.",
        ),
    ] = False,
) -> None:
    """Validate the changelog change between a base and a head."""
    from governance.changelog.modes import CheckMode
    from governance.check.answers import check_answer
    from governance.check.findings_cache import cache_disabled
    from governance.check.service import CheckOptions
    from governance.check.snapshots import HeadSource
    from governance.core.diagnostics import UsageError

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
    if exact_base and not base_ref:
        raise UsageError("--exact-base needs --base-ref", "name the commit to compare with")
    if fix and (staged or head_ref):
        raise UsageError("--fix edits the working tree", "drop --staged/--head-ref")
    if summary_plan and (worktree or staged or fix or output is not CheckFormat.github):
        raise UsageError(
            "--summary-plan needs --format github and a committed head",
            "drop --worktree/--staged/--fix, or run `gov plan --format markdown`",
        )
    worktree = worktree or fix
    mode = CheckMode.pr_mode(pr) if pr else CheckMode.main(expect_pr) if main else CheckMode()
    source = HeadSource.WORKTREE if worktree else HeadSource.STAGED if staged else HeadSource.REF
    from dataclasses import replace

    from governance.check.trusted import check_settings

    repo = state.take_repo()
    flags = {"repository": repository, "main-branch": main_branch}
    options = CheckOptions(
        mode,
        base_ref,
        head_ref,
        source,
        configs=not no_configs,
        full=full,
        exact_base=exact_base,
        sweep_preflight=sweep_preflight,
        no_cache=no_cache or cache_disabled(),
    )
    # Settings from the base revision, never from the change being judged.
    warn_unknown_variables()
    settings, base, label = check_settings(
        repo, options, main_branch_name(repo, main_branch), flags
    )
    settings = add_ignored(settings, ignore)
    plan_flags = modifiers_option(settings, labels, event).plan_flags
    options = replace(options, resolved_base=(base, label), plan_flags=plan_flags)
    if fix:
        from governance.check.authoring import fix_worktree

        fixes = fix_worktree(repo, settings, base_ref, exact_base=exact_base)
        for item in fixes:
            err(f"{settings.changelog}:{item.line}: fixed: {item.what}")
        if not fixes:
            err(f"{settings.changelog}: nothing to fix mechanically")
    # The names `gov plan --base-ref B --head-ref H` echoes in the plan's metadata.
    echo = None
    if summary_plan:
        named = base_ref if base_ref and repo.resolve(base_ref) == base else base
        echo = (named, head_ref or "HEAD")
    emit_check(check_answer(repo, settings, options, output.value, summary_plan=echo))


class AuditFormat(StrEnum):
    text = "text"
    jsonl = "jsonl"


@guarded
def audit(
    rev: Annotated[
        str,
        typer.Argument(
            help="Revision whose first-parent history to replay, or a range A..B "
            "(the commits of B that A does not have)."
        ),
    ] = "HEAD",
    no_configs: Annotated[
        bool, typer.Option("--no-configs", help="Do not resolve config keys.")
    ] = False,
    max_count: Annotated[
        int | None,
        typer.Option("--max-count", min=1, help="Replay only the newest N changelog commits."),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", help="Replay only commits after DATE (e.g. 2026-01-01, '2 weeks')."
        ),
    ] = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress", help="Progress bar on stderr (default: when a terminal)."
        ),
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", metavar="CODE", help=IGNORE_HELP)
    ] = None,
    output: Annotated[AuditFormat, format_option("Output format.")] = AuditFormat.text,
) -> None:
    """Replay history: which commits broke the changelog rules?"""
    import json

    from governance.check.audit import audit as run_audit
    from governance.check.audit import changelog_commits
    from governance.check.render import render_audit

    repo, settings = open_repo()
    settings = add_ignored(settings, ignore)
    commits = changelog_commits(repo, settings, rev, max_count=max_count, since=since)
    rows = run_audit(repo, settings, commits, configs=not no_configs)
    show = sys.stderr.isatty() if progress is None else progress
    bar = (
        typer.progressbar(rows, length=len(commits), label="auditing", file=raw(sys.stderr))
        if show
        else contextlib.nullcontext(rows)
    )
    with bar as iterated:
        if output is AuditFormat.jsonl:
            failed = False
            for row in iterated:
                failed |= not row.main.ok or (row.pr_mode is not None and not row.pr_mode.ok)
                sys.stdout.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
        else:
            text, failed = render_audit(iterated, settings.ignore)
            sys.stdout.write(text)
    raise typer.Exit(EXIT_FINDINGS if failed else EXIT_OK)


@guarded
def schema(
    write: Annotated[bool, typer.Option("--write", help="Write schemas/ from the models.")] = False,
    check_: Annotated[bool, typer.Option("--check", help="Fail when schemas/ drifted.")] = False,
    directory: Annotated[Path, typer.Option("--dir", help="Schema directory.")] = Path("schemas"),
) -> None:
    """Generate (or verify) the JSON Schemas under schemas/."""
    from governance.check import schemas
    from governance.core.diagnostics import UsageError

    if write == check_:
        raise UsageError("pass exactly one of --write or --check", "gov schema --write")
    if write:
        for path in schemas.write(directory):
            sys.stdout.write(f"wrote {path}\n")
        raise typer.Exit(EXIT_OK)
    stale = schemas.drift(directory)
    if not directory.is_dir():
        err(f"{directory}: missing (no such folder)")
    else:
        for name, why in stale.items():
            err(f"{directory / name}: {why}")
    if stale:
        err("  hint: run `gov schema --write` and commit the result")
        raise typer.Exit(EXIT_FINDINGS)
    sys.stdout.write(f"schemas in {directory} match the models\n")


@guarded
def demo(
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep",
            help="Build the example repository in this new (or empty) folder and keep it.",
        ),
    ] = None,
) -> None:
    """Run the quickstart on a throwaway copy of the shipped example repository.
    Its benchmark numbers are synthetic (a CPU checksum loop) and change from
    run to run."""
    from governance.demo.walkthrough import run_demo

    def say(text: str) -> None:
        sys.stdout.write(text.rstrip("\n") + "\n")

    ok = run_demo(say, keep)
    raise typer.Exit(EXIT_OK if ok else EXIT_FINDINGS)


def version() -> None:
    """Print gov's version."""
    from governance import __version__

    sys.stdout.write(f"gov {__version__}\n")
