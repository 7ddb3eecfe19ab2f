"""`gov merge-driver` and `gov install-merge-driver`; registered in `governance.cli.app`."""

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from governance.cli.common import err, guarded, open_repo
from governance.core.diagnostics import EXIT_FINDINGS, EXIT_OK
from governance.merge.driver import AttributesFile, MainSide


@guarded
def merge_driver_command(
    ancestor: Annotated[Path, typer.Argument(help="%O: the merge-base version.")],
    current: Annotated[Path, typer.Argument(help="%A: our version; receives the result.")],
    other: Annotated[Path, typer.Argument(help="%B: their version.")],
    path: Annotated[
        str | None, typer.Argument(help="%P: the path being merged (for messages).")
    ] = None,
    pr: Annotated[
        int | None,
        typer.Option("--pr", min=1, help="Write PR N's link into its appended entries."),
    ] = None,
    main_side: Annotated[
        MainSide,
        typer.Option(
            "--main-side",
            help="Which side is main: auto (ours on the main branch or in a rebase, "
            "else theirs), ours or theirs.",
        ),
    ] = MainSide.auto,
    marker_size: Annotated[
        int, typer.Option("--marker-size", min=1, help="Conflict marker size (%L).")
    ] = 7,
) -> None:
    """Git merge driver for the changelog: `gov merge-driver %O %A %B %P`.

    When both sides only appended entries, %A becomes main's bytes followed by
    the PR's new entries (exit 0). Otherwise git's text merge runs instead and
    a conflict is left for `gov resolve-conflict` (exit 1)."""
    from governance.merge.driver import run_driver

    repo, settings = open_repo()
    shown = path or settings.changelog
    outcome = run_driver(
        repo,
        ancestor,
        current,
        other,
        path=shown,
        policy=settings.policy(),
        pr=pr,
        main_side=main_side,
        main_branch=settings.main_branch,
        marker_size=marker_size,
    )
    for line in outcome.explain(shown):
        err(line)
    raise typer.Exit(EXIT_OK if outcome.clean else EXIT_FINDINGS)


def _running_gov() -> str:
    """Absolute path of the gov executable now running, else `gov`.

    Git runs the driver with the PATH of whoever merges (an IDE, a GUI, a
    script), where a venv's `gov` is often not found; the absolute path of the
    executable that installed the driver keeps working there, and it is the
    gov whose rules installed it. The config is local to this clone, so the
    path never travels to another machine."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name in {"gov", "gov.exe"}:
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        if found and Path(found).is_file():
            return os.path.abspath(found)
    return shutil.which("gov") or "gov"


@guarded
def install_merge_driver(
    attributes: Annotated[
        AttributesFile,
        typer.Option(
            "--attributes",
            help="Where to route the changelog: gitattributes (.gitattributes, committed) "
            "or info (.git/info/attributes, this clone only).",
        ),
    ] = AttributesFile.gitattributes,
    command: Annotated[
        str | None,
        typer.Option(
            "--command",
            help="Executable git should run (default: the absolute path of this gov; "
            "pass `gov` to look it up on PATH at merge time).",
        ),
    ] = None,
    check_only: Annotated[
        bool,
        typer.Option("--check", help="Change nothing; exit 1 when something is missing."),
    ] = False,
) -> None:
    """Install the changelog merge driver in this repository (idempotent)."""
    from governance.merge.driver import install

    repo, settings = open_repo()
    report = install(
        repo,
        settings.changelog,
        command or _running_gov(),
        attributes=attributes,
        check=check_only,
    )
    for line in report.unchanged:
        sys.stdout.write(f"ok: {line}\n")
    prefix = "missing: would " if check_only else ""
    for line in report.changes:
        sys.stdout.write(f"{prefix}{line}\n")
    for line in report.warnings:
        err(f"note: {line}")
    if report.installed:
        sys.stdout.write("merge driver already installed; nothing changed\n")
    elif not check_only:
        sys.stdout.write("merge driver installed\n")
    else:
        err("  hint: run `gov install-merge-driver`")
        raise typer.Exit(EXIT_FINDINGS)
