"""`gov results compare` and `gov results publish`: what the launched rows measured, beside main, and out to the results database."""

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from governance.cli.common import (
    TextOrJson,
    emit,
    emit_json,
    err,
    format_option,
    guarded,
    open_repo,
)
from governance.core.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE

results_app = typer.Typer(
    help="Read the results the launched rows left, and compare them with main.",
    no_args_is_help=True,
)


class ResultsFormat(StrEnum):
    text = "text"
    markdown = "markdown"
    json = "json"
    html = "html"


@results_app.command("compare")
@guarded
def compare(
    pr: Annotated[int, typer.Option("--pr", min=1, help="The PR whose results to compare.")],
    output: Annotated[
        ResultsFormat, format_option("Output format (html: a page with charts).")
    ] = ResultsFormat.text,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            min=0,
            help="Flag relative changes past this many percent (default: results-threshold).",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")
    ] = None,
) -> None:
    """Per config and concurrency: the PR's throughput per GPU, median TTFT, TPOT and
    interactivity beside the newest main result of the same config, with the change."""
    from governance.results import render
    from governance.results.service import compare_pr

    repo, settings = open_repo()
    report = compare_pr(repo, settings, pr, threshold)
    nothing = not (report.comparisons or report.unverifiable or report.unreadable)
    if output is ResultsFormat.html:
        from governance.results.html import render_html

        text = render_html(report)
    elif output is ResultsFormat.markdown:
        text = render.render_markdown(report)
    elif output is ResultsFormat.json:
        text = render.render_json(report)
    else:
        text = render.render_text(report)
    if out is not None:
        from governance.cli.output import for_format

        out.write_text(for_format(output.value, text), encoding="utf-8")
        sys.stderr.write(f"wrote {out}: {render.summary(report)}\n")
    else:
        sys.stdout.write(text)
    if nothing:  # "0 point(s)" alone would read as a clean comparison
        err(
            f"gov: PR #{pr} has no succeeded run in the run ledger: nothing to compare\n"
            f"  hint: sweep it first: gov prepare-merge --pr {pr} --sweep, or "
            f"gov launch --plan PLAN.json --pr {pr}"
        )
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_OK)


@results_app.command("publish")
@guarded
def publish(
    commit: Annotated[
        str | None,
        typer.Option("--commit", help="A landed commit of main whose results to publish."),
    ] = None,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed", help="Publish again every commit whose publish failed or never ended."
        ),
    ] = False,
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """Write the results recorded for a landed commit to the results database
    (`results-database`: SQLite under .git/gov by default, or PostgreSQL), once per row."""
    from governance.core.diagnostics import UsageError
    from governance.results.publish import publish_commit
    from governance.results.publish import retry_failed as retry

    if (commit is None) == (not retry_failed):
        raise UsageError(
            "name a commit (--commit SHA) or --retry-failed, not both",
            "e.g. gov results publish --commit main",
        )
    repo, settings = open_repo()
    done = retry(repo, settings) if retry_failed else [publish_commit(repo, settings, commit or "")]
    if output is TextOrJson.json:
        emit_json([item.to_dict() for item in done])
    else:
        if retry_failed and not done:
            emit("nothing to retry: every publish finished")
        for item in done:
            status = "published" if item.ok else "NOT published"
            emit(
                f"{item.commit[:10]} -> {item.database}: {status}; {item.rows} row(s), "
                f"{item.inserted} new"
            )
            for why in item.refused:
                emit(f"  refused: {why}")
            if item.error:
                emit(f"  error: {item.error}")
    failed = [item for item in done if not item.ok]
    if failed:
        err(
            f"gov: {len(failed)} commit(s) not published: gov vouches for every row or publishes none\n"
            "  hint: fix the cause above, then: gov results publish --retry-failed"
        )
        raise typer.Exit(EXIT_FINDINGS if any(i.refused for i in failed) else EXIT_USAGE)
    raise typer.Exit(EXIT_OK)


@guarded
def runs_import(
    artifacts: Annotated[
        Path | None,
        typer.Option("--artifacts", help="A folder holding a sweep run's downloaded artifacts."),
    ] = None,
    github_run: Annotated[
        int | None,
        typer.Option(
            "--github-run", min=1, help="A GitHub Actions run id: its artifacts are downloaded."
        ),
    ] = None,
    commit: Annotated[
        str | None,
        typer.Option("--commit", help="The commit the run swept (default: the GitHub run's head)."),
    ] = None,
    pr: Annotated[int | None, typer.Option("--pr", min=1, help="The PR the run swept.")] = None,
    ci_run: Annotated[
        str | None,
        typer.Option("--ci-run", help="With --artifacts: the CI run's id, for provenance."),
    ] = None,
    base_ref: Annotated[
        str | None,
        typer.Option(
            "--base-ref", help="Plan against this base (default: where it forked from main)."
        ),
    ] = None,
    include_unsuccessful: Annotated[
        bool,
        typer.Option(
            "--include-unsuccessful", help="Import a GitHub run that failed or was cancelled."
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check and map the points; record nothing.")
    ] = False,
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """Record a sweep run the repository already ran (its artifacts) in the run
    ledger: checked for consistency, each point mapped to its plan row's identity
    at the commit, so prepare-merge can reuse it (docs/results.md, 'Importing')."""
    from governance.core.diagnostics import UsageError
    from governance.results.importer import download_run, import_run, read_download

    if (artifacts is None) == (github_run is None):
        raise UsageError(
            "name the run: --artifacts DIR or --github-run RUN_ID (one of them)",
            "e.g. gov runs import --github-run 123456789",
        )
    repo, settings = open_repo()
    if github_run is not None:
        got = download_run(repo, settings, github_run, unsuccessful=include_unsuccessful)
        files, source = got.files, f"CI run {github_run}"
        commit = commit or got.head_sha
        if pr is None and len(got.pulls) == 1:
            pr = got.pulls[0]
    else:
        assert artifacts is not None
        if commit is None:
            raise UsageError("--artifacts needs --commit SHA (the commit the run swept)",
                             "e.g. --commit $(git rev-parse origin/my-branch)")  # fmt: skip
        files = read_download(artifacts)
        source = f"CI run {ci_run}" if ci_run else f"artifacts {artifacts.resolve()}"
    done = import_run(
        repo,
        settings,
        files,
        commit=commit,
        pr=pr,
        source=source,
        base=base_ref,
        dry_run=dry_run,
    )
    if output is TextOrJson.json:
        emit_json(done.to_dict())
    else:
        for why in done.refused:
            emit(f"refused: {why}")
        for note in done.dropped:
            emit(f"dropped: {note}")
        for key in done.already:
            emit(f"already imported: {key}")
        for key, artifact in done.planned:
            emit(f"would record {key} <- {artifact}")
        for key, artifact, run in done.recorded:
            emit(f"recorded run {run}: {key} <- {artifact}")
        verb = "would record" if dry_run else "recorded"
        count = len(done.planned) if dry_run else len(done.recorded)
        status = "refused: nothing recorded" if done.refused else f"{verb} {count} run(s)"
        emit(f"{source} at {done.commit[:10]}: {status}")
    if done.refused:
        err(
            f"gov: {len(done.refused)} point(s) gov cannot vouch for: the import records none\n"
            "  hint: fix or re-download the artifacts, or name the commit the run swept (--commit)"
        )
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_OK)
