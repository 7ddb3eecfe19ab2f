"""`gov queue report`: what the queue landed and refused, and what it cost
(docs/queue.md); registered on the queue group in `governance.cli.app`."""

import sys
from enum import StrEnum
from typing import Annotated

import typer

from governance.cli.common import emit_json, format_option, guarded
from governance.cli.queue import open_main


class ReportFormat(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"


@guarded
def queue_report(
    since: Annotated[
        str | None,
        typer.Option("--since", metavar="DATE", help="Only cars finished since (ISO 8601, UTC)."),
    ] = None,
    output: Annotated[ReportFormat, format_option("Report format.")] = ReportFormat.text,
) -> None:
    """Landed PRs, enqueue-to-land times, failures by step, GPU-hours measured
    and reused, and what stop-on-first-failure would have left behind."""
    from governance.merge.queue_costs import landed_costs
    from governance.merge.queue_report import build_report, parse_since
    from governance.merge.queue_report_render import render_markdown, render_text, report_data
    from governance.sweeps.resolve import sweep_paths

    moment = parse_since(since) if since is not None else None
    repo, settings, store = open_main()  # `ledger` as main has it
    cars = store.cars()
    ledger = sweep_paths(repo.root, repo.git_dir, settings).ledger
    costs = landed_costs(ledger, (c.landed_commit for c in cars if c.state == "landed"), repo.root)
    report = build_report(cars, costs, moment)
    if output is ReportFormat.json:
        emit_json(report_data(report))
    else:
        sys.stdout.write(
            (render_markdown if output is ReportFormat.markdown else render_text)(report)
        )
