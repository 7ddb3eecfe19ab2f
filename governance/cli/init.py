"""`gov init`: onboard a benchmark repository; registered in `governance.cli.app`."""

import sys
from typing import Annotated

import typer

from governance.cli.common import err, guarded, open_repo


@guarded
def init(
    write: Annotated[
        bool, typer.Option("--write", help="Add what is missing (default: print it).")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="With --write, also replace files whose content differs."),
    ] = False,
    action: Annotated[
        str | None,
        typer.Option(
            "--action",
            metavar="ORG/NAME@REV",
            help="gov's GitHub Action for the workflow (default: a placeholder to edit).",
        ),
    ] = None,
) -> None:
    """Detect the changelog, master configs, runner file and scripts folder;
    propose the settings (only where the defaults do not fit), the pre-commit
    config, the check-changelog workflow and the .gitattributes line."""
    from governance.core.diagnostics import UsageError
    from governance.merge import onboarding

    if force and not write:
        raise UsageError("--force needs --write", "gov init --write --force")
    repo, settings = open_repo()
    proposal = onboarding.plan(repo.root, settings, action=action or onboarding.DEFAULT_ACTION)
    written = onboarding.apply(repo.root, proposal.proposals, force=force) if write else []
    sys.stdout.write(onboarding.render(proposal, written, write=write))
    for note in proposal.notes:
        err(f"note: {note}")
    if onboarding.pending(proposal) and not write:
        err("  hint: gov init --write adds them")
