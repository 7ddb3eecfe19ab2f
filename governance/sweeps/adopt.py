"""Adopting what a dead gov launched (docs/sweeps.md, 'What survives a kill').

Before a launch, every row whose identity (recipe, concurrency, harness) an
open launch of a dead gov holds (`launches`) is looked at in its folder
(`launch_record`), once the launch is claimed:

* still running, or finished: the row's job is pointed at that folder, and
  the launcher follows it there (waits for its exit file, or collects it at
  once) instead of starting the script again;
* died without an exit status (killed, the machine restarted): recorded as a
  failed run saying so, and the row launches afresh, as any failed row would;
* never started (the gov died before the wrapper ran the script): closed
  with nothing to record, and the row launches afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from governance.sweeps.identity import RowIdentity, conc_label, row_recipe
from governance.sweeps.jobs import ROW_JSON_NAME
from governance.sweeps.launch_record import LaunchState, Phase, died, inspect
from governance.sweeps.launcher import LaunchJob, utc_now
from governance.sweeps.launches import Launches, OpenLaunch, me
from governance.sweeps.ledger import Ledger, NewRun

if TYPE_CHECKING:  # dispatch imports this module
    from governance.sweeps.resolve import Resolved


@dataclass(frozen=True, slots=True)
class Adoption:
    ready: list[Resolved]  # the rows to launch; adopted ones point at their old folder
    adopted: set[str]  # their job keys
    died: list[NewRun]  # to record as failed runs


def identity_of(item: Resolved) -> str:
    """The row identity's digest ("" when its harness was not traced: such a
    row is never adopted)."""
    if item.harness is None:
        return ""
    return RowIdentity(row_recipe(item.row), conc_label(item.row), item.harness.digest).digest


def moved(job: LaunchJob, folder: Path) -> LaunchJob:
    """`job` as the earlier launch in `folder` runs it."""
    row_json = folder / ROW_JSON_NAME
    env = {**job.env, "RESULT_DIR": str(folder), "GOV_ROW_JSON": str(row_json)}
    return replace(job, result_dir=folder, row_json=row_json, env=env)


def take_over(
    ledger: Ledger,
    ready: Sequence[Resolved],
    launcher: str,
    state_of: Callable[[Path], LaunchState] = inspect,
) -> Adoption:
    """Claim the dead gov's open launches the rows of `ready` need (see the
    module docstring); the rows as they are to be launched. `state_of` reads
    a launch's folder as the launcher recorded it (local: `inspect`)."""
    launches = Launches(ledger)
    wanted: dict[str, Resolved] = {}
    for row in ready:
        wanted.setdefault(identity_of(row), row)
    jobs: dict[str, LaunchJob] = {}  # job key -> its job, moved to the launch's folder
    dead: list[NewRun] = []
    owner = me()
    for launch in launches.unowned(wanted, launcher):
        item = wanted.get(launch.identity)
        if item is None or item.job is None or launch.job_key != item.key:
            continue
        if not launches.claim(launch, owner):
            continue  # another restarted run took it
        folder = Path(launch.result_path)
        state = state_of(folder)
        if state.phase is Phase.NEVER:
            launches.close_unstarted(launch.result_path)
        elif state.phase is Phase.DIED:
            dead.append(_died_run(item, launch, died(state), state.started_at))
        elif item.key not in jobs:  # running or finished: follow it there
            jobs[item.key] = moved(item.job, folder)
    return Adoption(
        [replace(r, job=jobs[r.key]) if r.key in jobs else r for r in ready], set(jobs), dead
    )


def _died_run(item: Resolved, launch: OpenLaunch, detail: str, started: datetime | None) -> NewRun:
    now = utc_now().isoformat(timespec="seconds")
    began = started.isoformat(timespec="seconds") if started else launch.created_at
    return NewRun(
        fingerprint=item.row.fingerprint,
        job_key=item.key,
        conc=conc_label(item.row),
        commit_sha=launch.commit_sha,
        pr=launch.pr,
        launcher=launch.launcher,
        started_at=began,
        ended_at=now,
        status="failed",
        exit_code=None,
        detail=detail,
        result_path=launch.result_path,
        script=str(item.job.script) if item.job else "",
        recipe=row_recipe(item.row),
        harness=item.harness,
    )


def opened(
    ready: Sequence[Resolved], launcher: str, commit: str, pr: int | None
) -> list[OpenLaunch]:
    """The `launches` rows for jobs about to start in new folders."""
    owner, now = me(), utc_now().isoformat(timespec="seconds")
    return [
        OpenLaunch(
            str(item.job.result_dir),
            item.job.result_dir.parent.name,
            item.key,
            identity_of(item),
            launcher,
            commit,
            pr,
            owner,
            now,
        )
        for item in ready
        if item.job is not None
    ]
