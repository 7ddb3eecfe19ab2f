"""`gov matrix`, `gov plan` and `gov log`: the matrix engine's commands;
registered in `governance.cli.app`."""

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from governance.cli.common import (
    Scenario,
    TextOrJson,
    err,
    format_option,
    guarded,
    main_branch_name,
    open_repo,
    state,
    warn_unknown_variables,
)
from governance.cli.gate import EVENT_HELP, LABELS_HELP, modifiers_option
from governance.core.diagnostics import EXIT_FINDINGS


@guarded
def matrix(
    config_key: Annotated[
        list[str], typer.Option("--config-key", help="Config key or glob (repeatable).")
    ],
    no_evals: Annotated[
        bool, typer.Option("--no-evals", help="Mark no row as an eval (throughput rows only).")
    ] = False,
    evals_only: Annotated[
        bool,
        typer.Option("--evals-only", help="Keep only the rows marked as evals (eval-only: true)."),
    ] = False,
    all_evals: Annotated[
        bool,
        typer.Option(
            "--all-evals",
            help="Every 8k1k single-node and agentic row is an eval; keep only those.",
        ),
    ] = False,
    scenario_type: Annotated[
        list[Scenario] | None,
        typer.Option("--scenario-type", help="Only rows of this scenario (repeatable)."),
    ] = None,
    rev: Annotated[
        str | None,
        typer.Option("--rev", help="Read master configs at REV (default: working tree)."),
    ] = None,
    output: Annotated[TextOrJson, format_option()] = TextOrJson.json,
) -> None:
    """The benchmark rows of the named configs (the reference generator's test-config)."""
    from governance.core.diagnostics import UsageError
    from governance.matrix import expand, render, sources

    try:
        mode = expand.eval_mode_from_flags(no_evals, evals_only, all_evals)
    except ValueError as exc:
        raise UsageError(str(exc), "pick one eval mode") from exc
    repo, settings = open_repo()
    cache = sources.default_cache(repo)
    layout = settings.layout()
    catalog = (
        sources.catalog_at(repo, rev, layout, cache)
        if rev
        else sources.catalog_in_worktree(repo, layout, cache)
    )
    scenarios = [s.value for s in scenario_type] if scenario_type else None
    rows = sources.matrix_rows(catalog, config_key, mode, scenarios)
    sys.stdout.write(
        render.rows_json(rows) if output is TextOrJson.json else render.rows_text(rows)
    )


class PlanFormat(StrEnum):
    json = "json"
    text = "text"
    markdown = "markdown"


@guarded
def plan(
    base_ref: Annotated[
        str | None,
        typer.Option(
            help="Plan what head appended since it forked from this revision (their "
            "merge-base; default: the main branch)."
        ),
    ] = None,
    head_ref: Annotated[str, typer.Option(help="Head revision.")] = "HEAD",
    exact_base: Annotated[
        bool,
        typer.Option(
            "--exact-base", help="Diff from --base-ref itself (two-dot), not the merge-base."
        ),
    ] = False,
    trim_conc: Annotated[
        bool,
        typer.Option(
            "--trim-conc", help="Throughput rows at the lowest concurrency of each recipe only."
        ),
    ] = False,
    evals_only: Annotated[
        bool,
        typer.Option("--evals-only", help="Plan as if every entry were evals-only."),
    ] = False,
    all_evals: Annotated[
        bool, typer.Option("--all-evals", help="Plan as if every entry were all-evals.")
    ] = False,
    labels: Annotated[str | None, typer.Option("--labels", help=LABELS_HELP)] = None,
    event: Annotated[Path | None, typer.Option("--event", help=EVENT_HELP, dir_okay=False)] = None,
    output: Annotated[PlanFormat, format_option()] = PlanFormat.json,
    empty_ok: Annotated[
        bool,
        typer.Option(
            "--empty-ok",
            help="A change that appends nothing to the changelog plans no sweep: say so "
            "(text, markdown) and exit 0 instead of GOV531.",
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Compute the plan afresh, not from .git/gov/check-cache (also GOV_NO_CACHE=1).",
        ),
    ] = False,
) -> None:
    """The whole sweep a change triggers: appended entries -> bucketed rows."""
    from governance.changelog.modes import CheckMode
    from governance.check.answers import appends_nothing, nothing_markdown, plan_answer
    from governance.check.service import CheckOptions
    from governance.check.trusted import check_settings
    from governance.core.diagnostics import UsageError
    from governance.git.repo import GitRepo

    if exact_base and not base_ref:
        raise UsageError("--exact-base needs --base-ref", "name the commit to diff from")
    repo = GitRepo(state.repo_path)
    warn_unknown_variables()
    # Like gov check: the settings (which files make the plan) come from the
    # base revision, never from the change being planned.
    settings, base, label = check_settings(
        repo,
        CheckOptions(CheckMode(), base_ref, head_ref, exact_base=exact_base),
        main_branch_name(repo),
    )
    head = repo.resolve(head_ref)
    if repo.blob_id(head, settings.changelog) is None:
        raise UsageError(
            f"{settings.changelog} does not exist at {head_ref}",
            "run gov at the root of the benchmark repository, or set `changelog` in [tool.gov]",
        )
    err(f"gov plan: base {label}")
    if empty_ok and appends_nothing(repo, settings.changelog, base, head):
        err("gov plan: nothing appended: no sweep")
        if output is PlanFormat.markdown:  # the Action's job summary
            sys.stdout.write(nothing_markdown(settings.changelog))
        elif output is not PlanFormat.json:
            sys.stdout.write(f"nothing appended to {settings.changelog}: no sweep\n")
        return
    # echoed in changelog_metadata: the name given when it is the base itself
    echo = (base_ref if base_ref and repo.resolve(base_ref) == base else base, head_ref)
    flags = (
        frozenset(
            name
            for name, on in (
                ("trim-conc", trim_conc),
                ("evals-only", evals_only),
                ("all-evals", all_evals),
            )
            if on
        )
        | modifiers_option(settings, labels, event).plan_flags
    )
    from governance.check.findings_cache import cache_disabled

    answer = plan_answer(
        repo, settings, base, head, echo, flags, output.value, no_cache=no_cache or cache_disabled()
    )
    sys.stdout.write(answer.stdout)


@guarded
def log(
    config_key: Annotated[str, typer.Argument(help="The config key whose history to show.")],
    rev: Annotated[str, typer.Option("--rev", help="Read the changelog at REV.")] = "HEAD",
) -> None:
    """Every changelog entry that named a config key, oldest first."""
    from governance.core.diagnostics import UsageError
    from governance.core.yamlsafe import YamlLoadError, load
    from governance.matrix.plan import history

    repo, settings = open_repo()
    data = repo.read_blob(repo.resolve(rev), settings.changelog)
    if data is None:
        raise UsageError(f"{settings.changelog} does not exist at {rev}", "pass --rev")
    try:
        entries = load(data.decode("utf-8")) or []
    except (YamlLoadError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{settings.changelog} at {rev} does not parse: {exc}", "run gov check"
        ) from exc
    items = history(config_key, entries)
    for item in items:
        entry = item.entry
        via = "" if item.patterns == (config_key,) else f"  (via {', '.join(item.patterns)})"
        sys.stdout.write(f"entry {item.index + 1}: {entry.get('pr-link')}{via}\n")
        for line in entry.get("description") or []:
            sys.stdout.write(f"    {line}\n")
    if not items:
        sys.stdout.write(f"no changelog entry names {config_key}\n")
        raise typer.Exit(EXIT_FINDINGS)
