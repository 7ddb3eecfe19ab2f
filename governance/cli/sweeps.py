"""`gov` commands for the sweeps area; registered on the app in `governance.cli.app`.

`gov launch` runs a plan's rows through a launcher; `gov runs` reads the run
ledger. Heavy imports stay inside the commands (the hook must start fast).
"""

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from governance.cli.common import (
    TextOrJson,
    canary_option,
    fail_fast_option,
    format_option,
    guarded,
    launcher_option,
    open_repo,
)
from governance.core.diagnostics import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:
    from governance.sweeps.ledger import LedgerRun
    from governance.sweeps.resolve import Resolved
    from governance.sweeps.schedule import Schedule


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _classes(resolved: "Sequence[Resolved]", plan: "Schedule") -> list[str]:
    """Per priority score, highest first: how many rows and their config keys."""
    from governance.sweeps.priority import score

    found: dict[float, tuple[int, set[str]]] = {}
    for item in resolved:
        keys = plan.keys_of(item.row)
        value = score(keys, plan.labels, plan.rules)
        count, names = found.get(value, (0, set()))
        found[value] = (count + 1, names | set(keys))
    return [
        f"priority {value:g}: {count} row(s) ({', '.join(sorted(names)) or 'config key unknown'})"
        for value, (count, names) in sorted(found.items(), reverse=True)
    ]


def _dry_run_text(
    resolved: "Sequence[Resolved]", scripts_root: Path, classes: Sequence[str] = ()
) -> str:
    from governance.sweeps.resolution_counts import multinode_counts

    lines = []
    root = scripts_root.resolve()
    for item in resolved:
        found = item.resolution
        via = f"  [{item.via}]" if item.via else ""
        if item.ok and found is not None and found.kind != "script":
            where = "srt-slurm checkout" if found.kind == "external" else "repository"
            runner = found.runner_missing or (_shown(item.script, root) if item.script else "")
            missing = " (missing)" if found.runner_missing else ""
            lines.append(
                f"{item.row.where}  {item.key}  -> recipe {found.recipe} ({where}) "
                f"via {runner}{missing}{via}"
            )
        elif item.ok and item.script is not None:
            lines.append(f"{item.row.where}  {item.key}  -> {_shown(item.script, root)}{via}")
        else:
            lines.append(f"{item.row.where}  {item.key}  !! {item.code} {item.problem}")
            for tried in item.tried:
                lines.append(f"      tried {tried}")
    lines.extend(classes)  # the launch order (docs/sweeps.md, 'Priority, canary, fail-fast')
    ok = sum(1 for r in resolved if r.ok)
    lines.append(f"{ok} of {len(resolved)} rows resolve to a script or recipe under {scripts_root}")
    counts = multinode_counts(resolved)
    if counts.total:
        lines.append(
            f"multi-node rows: {counts.total}: {counts.resolved} resolved ({counts.scripts} script, "
            f"{counts.recipes} repository recipe), {counts.external} external recipe, "
            f"{sum(counts.unresolvable.values())} unresolvable"
        )
        for reason, n in sorted(counts.unresolvable.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  unresolvable: {n} {reason}")
        for runner, n in sorted(counts.runner_missing.items()):
            lines.append(
                f"  note: {n} recipe rows run through {runner}, which the scripts folder lacks: "
                "they cannot be launched from here"
            )
    return "\n".join(lines) + "\n"


@guarded
def launch(
    plan_file: Annotated[
        Path, typer.Option("--plan", help="A plan document: what `gov plan --format json` prints.")
    ],
    launcher: Annotated[str | None, launcher_option("Where the rows run.")] = None,
    parallel: Annotated[int, typer.Option("--parallel", min=1, help="Rows at a time.")] = 1,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show each row's script (or why none); run nothing.")
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="Only rows whose fingerprint starts with this (repeatable)."),
    ] = None,
    pr: Annotated[int | None, typer.Option("--pr", min=1, help="Record the runs for PR N.")] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, help="Seconds per row before it is killed.")
    ] = 30000.0,
    show_env: Annotated[
        bool,
        typer.Option(
            "--show-env",
            help="With --dry-run: print the environment the first single-node and the first "
            "multi-node row would get (credentials are never printed).",
        ),
    ] = False,
    canary: Annotated[bool, canary_option()] = False,
    fail_fast: Annotated[bool, fail_fast_option("launch")] = False,
    label: Annotated[
        list[str] | None,
        typer.Option("--label", help="A label of the PR, for the priority rules (repeatable)."),
    ] = None,
) -> None:
    """Run a plan's rows with their launch scripts and record them in the run ledger."""
    from governance.cli.launch_text import runner_note, sample_env_text
    from governance.core.diagnostics import FindingsError, GovError, UsageError
    from governance.matrix.sources import catalog_in_worktree
    from governance.merge.sweep_keys import row_keys, schedule
    from governance.sweeps.dispatch import (
        Progress,
        adapt_for_launcher,
        failures,
        harness_reader,
        launch_rows,
    )
    from governance.sweeps.identity import plan_rows
    from governance.sweeps.jobs import machine_name
    from governance.sweeps.launcher import default_launcher, get_launcher
    from governance.sweeps.ledger import Ledger
    from governance.sweeps.plan_file import load_plan, verify_fingerprints
    from governance.sweeps.resolve import resolve_rows, resolver_for, select_only, sweep_paths
    from governance.sweeps.runner_jobs import refused_allocations, swept_checkout

    if show_env and not dry_run:
        raise UsageError(
            "--show-env goes with --dry-run", "add --dry-run: nothing is launched then"
        )
    document = load_plan(plan_file)
    repo, settings = open_repo()
    paths = sweep_paths(repo.root, repo.git_dir, settings)
    name = launcher or default_launcher(repo.root)
    rows = select_only(plan_rows(document), only or [])
    verify_fingerprints(rows, str(plan_file))
    try:
        keys, unknown = row_keys(catalog_in_worktree(repo, settings.layout()), document)
    except GovError as exc:
        keys, unknown = {}, str(exc)
    if unknown:
        sys.stderr.write(f"gov launch: priority by labels only, config keys unknown: {unknown}\n")
    plan = schedule(settings, keys, label or (), canary=canary, fail_fast=fail_fast)
    with swept_checkout(repo, paths, settings, name) as paths:
        resolved = adapt_for_launcher(
            resolve_rows(
                rows,
                resolver_for(paths, settings),
                paths.results,
                machine=machine_name(name),
                timeout_seconds=timeout,
                build=not dry_run,
                harness=harness_reader(paths, settings),
            ),
            name,
            paths,
            settings,
            build=not dry_run,
        )
        if dry_run:
            sys.stdout.write(_dry_run_text(resolved, paths.scripts, _classes(resolved, plan)))
            if name == "runner":
                sys.stdout.write(runner_note(resolved, paths, settings))
            if show_env:
                sys.stdout.write(sample_env_text(resolved, name, paths, settings, timeout))
            raise typer.Exit(EXIT_OK if all(r.ok for r in resolved) else EXIT_FINDINGS)
        runner = get_launcher(name, settings, paths.results)
        ready = sum(1 for r in resolved if r.ok)
        with Ledger(paths.ledger) as ledger:
            result = launch_rows(
                resolved,
                runner,
                ledger,
                commit=repo.worktree.head_sha(),
                pr=pr,
                parallel=parallel,
                on_event=Progress(ready),
                schedule=plan,
            )
    for outcome in result.outcomes:
        detail = f"  ({outcome.detail})" if outcome.detail else ""
        sys.stdout.write(
            f"{outcome.status:<10} {outcome.job.key}  run {result.run_ids[outcome.job.key]}  "
            f"{outcome.job.result_dir}{detail}\n"
        )
    sys.stdout.write(f"ledger: {paths.ledger}\n")
    if result.interrupted:
        raise KeyboardInterrupt
    refused_allocations(result.outcomes)
    findings = failures(resolved, result.outcomes)
    if findings:
        raise FindingsError(f"{len(findings)} of {len(resolved)} rows did not succeed", findings)


runs_app = typer.Typer(
    name="runs", help="The run ledger: what ran, where, with what result.", no_args_is_help=True
)


def _runs_out(runs: "Sequence[LedgerRun]", output: TextOrJson) -> None:
    if output is TextOrJson.json:
        sys.stdout.write(json.dumps([r.to_dict() for r in runs], indent=1) + "\n")
        return
    for r in runs:
        pr = f"#{r.pr}" if r.pr else "-"
        sys.stdout.write(
            f"{r.id:>5} {r.status:<10} {r.job_key:<34} {r.commit_sha[:12]} {pr:<8} "
            f"{r.launcher:<6} {r.ended_at}  {r.result_path}\n"
        )


def _checked_text(run: "LedgerRun", why: str) -> str:
    if run.status != "succeeded":
        return "-"
    return f"unverifiable ({why})" if why else "verified"


def _commit_out(
    commit: str,
    rows: "Sequence[tuple[str, LedgerRun]]",
    evidence: dict[int, str],
    output: TextOrJson,
) -> None:
    if output is TextOrJson.json:
        data = [
            {
                "origin": origin,
                **run.to_dict(),
                "verified": run.status == "succeeded" and not evidence.get(run.id, ""),
                "evidence": evidence.get(run.id, ""),
            }
            for origin, run in rows
        ]
        sys.stdout.write(json.dumps(data, indent=1) + "\n")
        return
    for origin, r in rows:
        at = "here" if r.commit_sha == commit else f"at {r.commit_sha[:12]}"
        checked = _checked_text(r, evidence.get(r.id, ""))
        sys.stdout.write(
            f"{r.job_key:<34} {origin:<8} run {r.id:<5} {at:<15} {r.status:<10} {r.result_path}"
            f"  {checked}\n"
        )
    measured = sum(1 for origin, _ in rows if origin == "measured")
    bad = sum(1 for _, run in rows if evidence.get(run.id))
    sys.stdout.write(
        f"{commit[:12]}: {len(rows)} row(s), {measured} measured, {len(rows) - measured} reused"
        + (f", {bad} unverifiable" if bad else "")
        + "\n"
    )


@runs_app.command("list")
@guarded
def runs_list(
    pr: Annotated[int | None, typer.Option("--pr", min=1, help="Only runs of PR N.")] = None,
    commit: Annotated[
        str | None,
        typer.Option(
            "--commit",
            help="What this commit's results are made of: per row its result folder, "
            "measured or reused, verified or not (exit 1 when a row's files do not verify).",
        ),
    ] = None,
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """Every recorded run, oldest first (or, with --commit, one commit's rows)."""
    from governance.core.diagnostics import UsageError
    from governance.sweeps.ledger import Ledger
    from governance.sweeps.resolve import sweep_paths
    from governance.sweeps.runfiles import evidence

    repo, settings = open_repo()
    if commit is not None and pr is not None:
        raise UsageError("--commit and --pr do not combine", "pass one of them")
    sha = repo.resolve(commit) if commit is not None else ""
    with Ledger(sweep_paths(repo.root, repo.git_dir, settings).ledger) as ledger:
        if commit is None:
            _runs_out(ledger.runs(pr=pr), output)
            return
        rows = ledger.for_commit(sha)
        checked = evidence(ledger, [run for _, run in rows if run.status == "succeeded"])
    _commit_out(sha, rows, checked, output)
    if not rows:
        sys.stderr.write(f"gov: no result of commit {sha[:12]} in the run ledger\n")
        raise typer.Exit(EXIT_FINDINGS)
    bad = sorted(run.job_key for _, run in rows if checked.get(run.id))
    if bad:
        sys.stderr.write(
            f"gov: {len(bad)} row(s) of commit {sha[:12]} have unverifiable results: "
            + ", ".join(bad)
            + "\n"
        )
        raise typer.Exit(EXIT_FINDINGS)


@runs_app.command("show")
@guarded
def runs_show(
    fingerprint: Annotated[str, typer.Argument(help="A recipe fingerprint or its hex prefix.")],
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """The runs of one recipe (all concurrencies)."""
    from governance.core.diagnostics import UsageError
    from governance.sweeps.ledger import Ledger
    from governance.sweeps.resolve import HEX_PREFIX, sweep_paths

    if not HEX_PREFIX.fullmatch(fingerprint.lower()):
        raise UsageError(
            f"{fingerprint!r} is not a hex fingerprint prefix", "e.g. gov runs show b5ed5309"
        )
    repo, settings = open_repo()
    with Ledger(sweep_paths(repo.root, repo.git_dir, settings).ledger) as ledger:
        runs = ledger.by_fingerprint(fingerprint)
    _runs_out(runs, output)
    if not runs:
        sys.stderr.write(f"gov: no run of a recipe {fingerprint}… in the ledger\n")
        raise typer.Exit(EXIT_FINDINGS)
