"""`gov add`: append one well-formed changelog entry, then check;
registered in `governance.cli.app`."""

import sys
from typing import Annotated

import typer

from governance.cli.common import (
    CheckFormat,
    Scenario,
    emit_check,
    format_option,
    guarded,
    open_repo,
)


@guarded
def add(
    config_key: Annotated[
        list[str],
        typer.Option(
            "--config-key",
            metavar="KEY",
            help="A master config key or `*` pattern the change affects (repeatable).",
        ),
    ],
    description: Annotated[
        list[str],
        typer.Option("--description", metavar="TEXT", help="One description line (repeatable)."),
    ],
    scenario_type: Annotated[
        list[Scenario] | None,
        typer.Option("--scenario-type", help="Restrict the entry to a scenario (repeatable)."),
    ] = None,
    pr: Annotated[
        int | None,
        typer.Option("--pr", min=1, help="Check the result in PR mode for PR N (default: draft)."),
    ] = None,
    no_configs: Annotated[
        bool, typer.Option("--no-configs", help="Do not resolve the keys first (nor in the check).")
    ] = False,
    output: Annotated[
        CheckFormat, format_option("Format of the check that follows.")
    ] = CheckFormat.text,
) -> None:
    """Append one entry (`pr-link: XXX`) to the working tree's changelog, then check it.

    Keys are resolved (with did-you-mean) before anything is written; the
    existing bytes are kept exactly and the file is replaced atomically."""
    from governance.changelog.modes import CheckMode
    from governance.check.answers import check_answer
    from governance.check.authoring import AddRequest, add_entry
    from governance.check.service import CheckOptions
    from governance.check.snapshots import HeadSource

    repo, settings = open_repo()
    request = AddRequest(
        tuple(config_key),
        tuple(description),
        tuple(s.value for s in scenario_type or ()),
        resolve=not no_configs,
    )
    outcome = add_entry(repo, settings, request)
    sys.stderr.write(f"{outcome.path}:{outcome.line}: appended an entry (pr-link: XXX)\n")
    mode = CheckMode.pr_mode(pr) if pr else CheckMode()
    options = CheckOptions(mode, head_source=HeadSource.WORKTREE, configs=not no_configs)
    emit_check(check_answer(repo, settings, options, output.value))
