"""`gov queue sync`, and `gov queue add|run --forge github`: the merge queue on
GitHub (docs/queue.md, "On GitHub"). The token comes from GH_TOKEN / GITHUB_TOKEN,
the API root from GITHUB_API_URL, as for `gov prepare-merge --forge github`."""

import sys
from typing import TYPE_CHECKING, Annotated, cast

import typer

from governance.cli.common import (
    TextOrJson,
    emit,
    emit_json,
    err,
    format_option,
    guarded,
    main_branch_name,
    state,
    warn_unknown_variables,
)

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.merge.queue import CarOptions, CarResult
    from governance.merge.queue_github import SyncResult
    from governance.merge.queue_github_run import GitHubSide
    from governance.merge.queue_store import Car, Priority, QueueStore

REMOTE_HELP = "Git remote of the GitHub repository."


def print_car(car: "CarResult") -> None:
    """A car as `gov queue run` prints it: prepare-merge's report, then its line."""
    from governance.merge.queue_render import render_car
    from governance.merge.report import render_text

    if car.report is not None:
        sys.stdout.write(render_text(car.report))
    emit(render_car(car))
    sys.stdout.flush()


def open_github(main_branch: str | None, remote: str) -> "tuple[GitHubSide, QueueStore, Settings]":
    """The GitHub side (main fetched, its settings read from its tip), the queue."""
    from governance.core.state import StateLayout
    from governance.forge import open_forge
    from governance.forge.github import GitHubForge
    from governance.git.repo import GitRepo
    from governance.merge.queue_github_run import GitHubSide, github_settings
    from governance.merge.queue_store import QueueStore

    repo = GitRepo(state.repo_path)
    warn_unknown_variables()
    main = main_branch_name(repo, main_branch)
    settings = github_settings(repo, remote, main, {"main-branch": main_branch})
    forge = open_forge("github", repo, settings.repository, main_branch=settings.main_branch)
    assert isinstance(forge, GitHubForge)
    side = GitHubSide(repo, forge, remote, settings.main_branch)
    return side, QueueStore(StateLayout(repo.git_dir)), settings


def tell(side: "GitHubSide", store: "QueueStore", settings: "Settings", pr: int) -> None:
    """Report a car on its PR. Best effort: the queue database is the record,
    so a comment GitHub refuses is a warning, never a stopped train."""
    from governance.forge.base import ForgeError
    from governance.merge.queue_github_run import report

    try:
        report(side, store, pr, settings.queue.label)
    except ForgeError as exc:
        err(f"warning: PR #{pr}: the queue's status was not reported on GitHub: {exc}")


def _synced(side: "GitHubSide", store: "QueueStore", settings: "Settings") -> "SyncResult":
    """Read the asks on GitHub into the queue, and tell each PR touched."""
    from governance.merge.queue import utc_stamp
    from governance.merge.queue_github import sync

    result = sync(side.forge, store, settings.queue, utc_stamp)
    for pr, _why in result.enqueued + result.refused + result.dequeued:
        tell(side, store, settings, pr)
    return result


@guarded
def queue_sync(
    main_branch: Annotated[
        str | None, typer.Option("--main-branch", help="Main branch name.")
    ] = None,
    remote: Annotated[str, typer.Option("--remote", help=REMOTE_HELP)] = "origin",
    output: Annotated[TextOrJson, format_option()] = TextOrJson.text,
) -> None:
    """Queue the open GitHub PRs a writer asked for (the queue label, or a
    `/gov queue [high|normal|low]` comment); refuse forks and non-writers, with
    why; dequeue waiting PRs pushed since (dequeue-on-push). `run --forge github`
    syncs first too."""
    side, store, settings = open_github(main_branch, remote)
    result = _synced(side, store, settings)
    if output is TextOrJson.json:
        emit_json(result.to_dict())
        return
    emit("\n".join(result.lines()) or "gov queue sync: no new request")


def github_add(pr: int, priority: str, main_branch: str | None, remote: str) -> None:
    """`gov queue add --forge github`: the caller's token vouches for the ask."""
    from governance.core.diagnostics import UsageError
    from governance.merge.queue import utc_stamp
    from governance.merge.queue_store import GitHubCar

    side, store, settings = open_github(main_branch, remote)
    pull = side.forge.get_pull(pr)
    if pull.state != "open":
        raise UsageError(f"PR #{pr} is {pull.state}; only an open PR can be queued", "")
    if pull.is_fork:
        raise UsageError(
            f"PR #{pr}'s head is in a fork, not in {side.forge.slug}: the queue refuses forks",
            "push the branch to this repository and open a PR from it",
        )
    car = store.add(pr, cast("Priority", priority), utc_stamp())
    store.set_github(GitHubCar(pr, pull.head_sha, "gov queue add"))
    tell(side, store, settings, pr)
    waiting = [c.pr for c in store.cars(("queued", "running"))]
    emit(f"queued PR #{pr} ({car.priority}), position {waiting.index(pr) + 1} of {len(waiting)}")


def github_run(
    options: "CarOptions", main_branch: str | None, remote: str, output: TextOrJson
) -> int:
    """`gov queue run --forge github`: sync, then one pass; the exit code."""
    from governance.merge.queue import run_queue
    from governance.merge.queue_github import SyncResult
    from governance.merge.queue_github_run import admit, land_car, verify
    from governance.merge.queue_render import render_summary, run_data

    side, store, settings = open_github(main_branch, remote)
    # A dry run changes nothing: no sync into the queue, no comment on GitHub.
    synced = SyncResult() if options.dry_run else _synced(side, store, settings)
    text = output is TextOrJson.text
    if text:
        for line in synced.lines():
            emit(line)

    def say(car: "CarResult") -> None:
        if not options.dry_run:
            tell(side, store, settings, car.pr)
        if text:
            print_car(car)

    look_again = admit(side, store, settings)

    def admitted(car: "Car") -> str:
        why = look_again(car)
        if why:
            tell(side, store, settings, car.pr)
            if text:
                emit(f"[--] PR #{car.pr} taken out before its turn: {why}")
        return why

    if not options.dry_run and store.paused and text:
        emit("the queue is paused: nothing lands (gov queue resume)")
    result = run_queue(
        side.repo, store, side.forge, land_car(side, options), main_branch=side.main_branch,
        dry_run=options.dry_run, say=say, admit=admitted,
        verify=verify(side), max_cars=settings.queue.max_cars,
    )  # fmt: skip
    if text:
        emit(render_summary(result))
    else:
        emit_json({"sync": synced.to_dict(), **run_data(result)})
    return result.exit_code
