"""The `gov` application: global options and the registration of every command.

Command modules hold plain functions and never import this module, so the
registration below is the one place that says which command runs what.
Heavy modules (gitpython, pydantic, ruamel.yaml) are imported inside the
commands so that `gov --help` and the hook start fast. Exit codes: 0 clean,
1 findings, 2 usage error, 3 internal error, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from governance.cli import (
    author,
    check,
    driver,
    gate,
    init,
    matrix,
    merge,
    pr,
    queue,
    queue_report,
    results,
    sweeps,
)
from governance.cli.common import GovGroup, state

app = typer.Typer(
    cls=GovGroup,
    name="gov",
    help="Changelog-centric merge governance for performance-benchmark repositories.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from governance import __version__

        sys.stdout.write(f"gov {__version__}\n")
        raise typer.Exit(0)


@app.callback()
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


# Every command, alphabetical within its family.
app.command("check")(check.check)
app.command("add")(author.add)
app.command("audit")(check.audit)
app.command("schema")(check.schema)
app.command("demo")(check.demo)
app.command("init")(init.init)
app.command("version")(check.version)
app.command("matrix")(matrix.matrix)
app.command("plan")(matrix.plan)
app.command("log")(matrix.log)
app.command("canonicalize")(merge.canonicalize)
app.command("resolve-conflict")(merge.resolve_conflict)
app.command("prepare-merge")(merge.prepare_merge)
app.command("merge-driver")(driver.merge_driver_command)
app.command("install-merge-driver")(driver.install_merge_driver)
app.command("launch")(sweeps.launch)
app.command("sweep-gate")(gate.sweep_gate)
sweeps.runs_app.command("import")(results.runs_import)
app.add_typer(sweeps.runs_app, name="runs")
app.add_typer(pr.pr_app, name="pr")
queue.queue_app.command("report")(queue_report.queue_report)
app.add_typer(queue.queue_app, name="queue")
app.add_typer(results.results_app, name="results")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
