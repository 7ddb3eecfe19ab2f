"""`gov queue ...`: the merge queue on the local forge or GitHub (docs/queue.md);
registered in `governance.cli.app`."""

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from governance.cli import queue_github
from governance.cli.common import (
    TextOrJson,
    emit,
    emit_json,
    format_option,
    guarded,
    launcher_option,
    main_branch_name,
    state,
    warn_unknown_variables,
)

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.forge.base import Forge
    from governance.git.repo import GitRepo
    from governance.merge.queue_store import QueueStore

queue_app = typer.Typer(
    name="queue",
    help="Land queued PRs one at a time through prepare-merge (local or GitHub; docs/queue.md).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


class QueueForge(StrEnum):
    local = "local"
    github = "github"


def forge_option() -> "typer.models.OptionInfo":
    return typer.Option(
        "--forge", help="Where the PRs live (github: token from GH_TOKEN / GITHUB_TOKEN)."
    )


def remote_option() -> "typer.models.OptionInfo":
    return typer.Option("--remote", help=queue_github.REMOTE_HELP + " (--forge github)")


class PriorityChoice(StrEnum):
    high = "high"
    normal = "normal"
    low = "low"


def open_main(main_branch: str | None = None) -> "tuple[GitRepo, Settings, QueueStore]":
    """The repository, the settings read from main's tip (never from the branch
    that happens to be checked out), and its queue."""
    from governance.check.sides import main_settings
    from governance.core.state import StateLayout
    from governance.git.repo import GitRepo
    from governance.merge.queue_store import QueueStore

    repo = GitRepo(state.repo_path)
    warn_unknown_variables()
    main = main_branch_name(repo, main_branch)
    settings = main_settings(repo, main, {"main-branch": main_branch}, remote=None)
    return repo, settings, QueueStore(StateLayout(repo.git_dir))


def _open(main_branch: str | None = None) -> "tuple[GitRepo, QueueStore, Forge, str]":
    """`open_main`'s repository and queue, the local forge and main's name."""
    from governance.forge import open_forge

    repo, settings, store = open_main(main_branch)
    forge = open_forge("local", repo, settings.repository, main_branch=settings.main_branch)
    return repo, store, forge, settings.main_branch


def _stamp() -> str:
    from governance.merge.queue import utc_stamp

    return utc_stamp()


@queue_app.command("add")
@guarded
def queue_add(
    pr: Annotated[int | None, typer.Option("--pr", min=1, help="The open PR to enqueue.")] = None,
    priority: Annotated[
        PriorityChoice, typer.Option("--priority", help="Runs before lower priorities.")
    ] = PriorityChoice.normal,
    forge_kind: Annotated[QueueForge, forge_option()] = QueueForge.local,
    remote: Annotated[str, remote_option()] = "origin",
    all_green: Annotated[
        bool,
        typer.Option(
            "--all-green",
            help="Enqueue every open PR whose head checks are green (lists them and asks"
            " unless --yes).",
        ),
    ] = False,
    head_prefix: Annotated[
        str | None,
        typer.Option("--head-prefix", help="With --all-green: only head branches starting so."),
    ] = None,
    require_check: Annotated[
        list[str] | None,
        typer.Option(
            "--require-check",
            help="With --all-green: a check that must have succeeded (repeatable; default:"
            " the check prepare-merge waits for).",
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="With --all-green: enqueue without asking.")
    ] = False,
) -> None:
    """Enqueue an open PR (again, if it was refused or removed), or every green one."""
    from governance.core.diagnostics import UsageError

    if all_green == (pr is not None):
        raise UsageError(
            "gov queue add needs exactly one of --pr N and --all-green",
            "gov queue add --pr 7, or gov queue add --all-green [--yes]",
        )
    if not all_green and (head_prefix is not None or require_check or yes):
        raise UsageError(
            "--head-prefix, --require-check and --yes go with --all-green",
            "drop them, or add --all-green instead of --pr",
        )
    if forge_kind is QueueForge.github:
        if pr is None:
            raise UsageError(
                "--all-green works on the local forge only",
                "on GitHub, label the PRs or comment `/gov queue` on them; gov queue sync"
                " enqueues them",
            )
        queue_github.github_add(pr, priority.value, None, remote)
        return
    _repo, store, forge, _main = _open()
    if pr is None:  # --all-green
        _add_all_green(store, forge, priority, head_prefix or "", require_check, yes)
        return
    pull = forge.get_pull(pr)  # an unknown PR: the forge's error, exit 2
    if pull.state != "open":
        raise UsageError(
            f"PR #{pr} is {pull.state}; only an open PR can be queued",
            "gov pr list shows the open ones",
        )
    _enqueue(store, pr, priority)


def _enqueue(store: "QueueStore", pr: int, priority: PriorityChoice) -> None:
    car = store.add(pr, priority.value, _stamp())
    waiting = [c.pr for c in store.cars(("queued", "running"))]
    emit(f"queued PR #{pr} ({car.priority}), position {waiting.index(pr) + 1} of {len(waiting)}")


queue_app.command("sync")(queue_github.queue_sync)


def _add_all_green(
    store: "QueueStore",
    forge: "Forge",
    priority: PriorityChoice,
    head_prefix: str,
    require_check: list[str] | None,
    yes: bool,
) -> None:
    """List the green PRs (and why the others are not), ask, enqueue them."""
    from governance.core.diagnostics import UsageError
    from governance.merge.queue_green import green_candidates, render_candidates
    from governance.merge.work import REQUIRED_CHECKS

    required = tuple(require_check or REQUIRED_CHECKS)
    if any(not name.strip() for name in required):
        raise UsageError(
            "--require-check needs a check name", "e.g. --require-check check-changelog"
        )
    candidates = green_candidates(forge, store, required, head_prefix)
    sys.stdout.write(render_candidates(candidates, required))
    adding = [c.pr for c in candidates if c.verdict == "add"]
    if not adding:
        emit("nothing to add")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError(
                f"not adding the {len(adding)} PR(s) above without confirmation, and stdin is"
                " not a terminal to ask on",
                "review the list, then run the same command with --yes",
            )
        if not typer.confirm(f"enqueue {len(adding)} PR(s)?", default=False):
            emit("nothing added")
            return
    for number in adding:
        _enqueue(store, number, priority)


@queue_app.command("remove")
@guarded
def queue_remove(
    pr: Annotated[int, typer.Option("--pr", min=1, help="The queued PR to take out.")],
) -> None:
    """Take a waiting PR out of the queue (the PR itself stays open)."""
    _repo, _settings, store = open_main()
    store.remove(pr, _stamp())
    emit(f"removed PR #{pr} from the queue")


@queue_app.command("status")
@guarded
def queue_status(
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """The cars, waiting ones in run order (priority, then enqueue time), and the paused flag."""
    from governance.merge.queue_render import render_status, status_data

    _repo, _settings, store = open_main()
    cars, paused = store.cars(), store.paused
    if output is TextOrJson.json:
        emit_json(status_data(cars, paused))
    else:
        sys.stdout.write(render_status(cars, paused))


@queue_app.command("pause")
@guarded
def queue_pause() -> None:
    """Stop the train: `run` lands nothing (a run in progress stops after its car)."""
    _repo, _settings, store = open_main()
    store.set_paused(True)
    emit("queue paused: gov queue run lands nothing until gov queue resume")


@queue_app.command("resume")
@guarded
def queue_resume() -> None:
    """Let `run` land cars again."""
    _repo, _settings, store = open_main()
    store.set_paused(False)
    emit("queue resumed")


@queue_app.command("run")
@guarded
def queue_run(
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            help="One pass over the queue (the default).",
        ),
    ] = False,
    watch: Annotated[
        float | None,
        typer.Option(
            "--watch",
            metavar="SECONDS",
            help="Pass after pass, SECONDS apart, until Ctrl-C or SIGTERM (exit 130): what a"
            " systemd unit, cron job or CI schedule runs.",
        ),
    ] = None,
    sweep: Annotated[
        bool | None,
        typer.Option(
            "--sweep/--no-sweep",
            help="Sweep each car as prepare-merge --sweep does (default: the sweep-on-merge"
            " setting).",
        ),
    ] = None,
    launcher: Annotated[str | None, launcher_option("Where rerun rows run.")] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Prepare each waiting car against today's main and change nothing (cars are"
            " not stacked on each other).",
        ),
    ] = False,
    main_branch: Annotated[
        str | None, typer.Option("--main-branch", help="Main branch name.")
    ] = None,
    output: Annotated[TextOrJson, format_option("Report format.")] = TextOrJson.text,
    forge_kind: Annotated[QueueForge, forge_option()] = QueueForge.local,
    remote: Annotated[str, remote_option()] = "origin",
    ahead: Annotated[
        int,
        typer.Option(
            "--ahead",
            metavar="N",
            min=0,
            help="Build and check the candidates of N cars behind the front one, each on the"
            " candidate of the car before it (0: one car at a time).",
        ),
    ] = 0,
) -> None:
    """Land the waiting cars in order, each on main as the car before left it; a
    refused car is marked and the train goes on. Exit 1 when a car was refused."""
    from dataclasses import replace

    from governance.core.diagnostics import UsageError
    from governance.merge.queue import CarOptions, prepare_car, run_queue
    from governance.merge.queue_ahead import Ahead
    from governance.merge.queue_render import render_summary, run_data
    from governance.merge.sweep_step import SweepOptions

    if watch is not None and not 0 < watch < float("inf"):  # NaN fails both
        raise UsageError(
            f"--watch needs a finite number of seconds above 0, got {watch:g}",
            "gov queue run --watch 60 runs a pass a minute",
        )
    if watch is not None and (once or dry_run):
        clash = "--once" if once else "--dry-run"
        raise UsageError(
            f"--watch and {clash} cannot be combined: --watch lands cars pass after pass",
            f"drop {clash}, or drop --watch for a single pass",
        )
    if ahead and (dry_run or forge_kind is QueueForge.github):
        raise UsageError(
            "--ahead works on the local forge, in a run that lands cars",
            "drop --ahead, or run `gov queue run --ahead N` without --dry-run and --forge github",
        )
    options = CarOptions(
        main_branch or "",
        overrides={"main-branch": main_branch},
        sweep=sweep,
        sweep_options=SweepOptions(launcher or ""),
        dry_run=dry_run,
    )
    if forge_kind is QueueForge.github:
        if watch is not None:
            raise UsageError(
                "--watch works on the local forge only",
                "on GitHub, have the host run `gov queue run --forge github` on a schedule",
            )
        raise typer.Exit(queue_github.github_run(options, main_branch, remote, output))
    repo, store, forge, main = _open(main_branch)
    options = replace(options, main_branch=main)
    text = output is TextOrJson.text

    if not dry_run and store.paused and text:
        emit("the queue is paused: nothing lands (gov queue resume)")
    from governance.cli.queue_watch import sigterm_interrupts, watch_cars

    with sigterm_interrupts():
        speculate = Ahead(repo, store, forge, options, ahead) if ahead else None
        land = prepare_car(repo, options)
        if watch is not None:
            watch_cars(
                repo, store, forge, land, main, watch, text, queue_github.print_car, speculate
            )
        result = run_queue(
            repo, store, forge, land, main_branch=main, dry_run=dry_run,
            say=queue_github.print_car if text else None, speculate=speculate,
        )  # fmt: skip
    if text:
        emit(render_summary(result))
    else:
        emit_json(run_data(result))
    raise typer.Exit(result.exit_code)
