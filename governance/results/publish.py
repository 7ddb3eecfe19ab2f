"""`gov results publish`: a landed commit's results, from the ledger to the results database.

The rows of a commit of main are the runs the ledger says stand for it
(`commit_runs`: measured for it, or reused from one of the PR's commits; or
the runs launched at it). Each row is read from its run's own folder, only
from the files the ledger recorded, checked against their sizes and SHA-256
(`service.point_of`), and must carry a row identity (recipe, concurrency,
harness): a row gov cannot vouch for stops the whole commit, so a commit is
published whole or not at all, never on a guess.

The ledger keeps the publish state per (commit, database): `pending` before
the database is written, then `published` or `failed` with the reason. A
publish killed in between stays pending; `--retry-failed` takes up every
pending or failed one, and the database's key (commit, row identity) makes a
retry of an already-written commit insert nothing.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from governance import __version__
from governance.core.crash import crash_point
from governance.core.diagnostics import GovError, UsageError
from governance.core.settings import Settings
from governance.git.mainref import main_ref
from governance.git.repo import GitRepo
from governance.results.database import ResultRow
from governance.results.reader import ResultError
from governance.results.service import Unverifiable, point_of, results_database
from governance.sweeps.ledger import Ledger, LedgerRun, Publications
from governance.sweeps.resolve import sweep_paths
from governance.sweeps.runfiles import RunFile


@dataclass(slots=True)
class Published:
    """What one publish of one commit did."""

    commit: str
    database: str
    rows: int = 0  # the commit's rows
    inserted: int = 0  # of them, new in the database (0 on a repeat)
    refused: list[str] = field(default_factory=list)  # rows gov cannot vouch for
    error: str = ""  # the database's refusal

    @property
    def ok(self) -> bool:
        return not self.refused and not self.error

    def to_dict(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "database": self.database,
            "ok": self.ok,
            "rows": self.rows,
            "inserted": self.inserted,
            "refused": list(self.refused),
            "error": self.error,
        }


def publish_commit(repo: GitRepo, settings: Settings, revision: str) -> Published:
    """Publish the results recorded for `revision`, a commit of main."""
    commit = repo.resolve(revision)
    main = main_ref(repo, settings.main_branch)
    if not repo.is_ancestor(commit, main.sha):
        raise UsageError(
            f"{revision} ({commit[:10]}) is not on {main.label}: only landed commits are published",
            f"name a commit of {settings.main_branch}, e.g. gov results publish --commit {main.ref}",
        )
    paths = sweep_paths(repo.root, repo.git_dir, settings)
    if not paths.ledger.is_file():
        raise UsageError(
            f"no run ledger at {paths.ledger}: nothing was launched here",
            "gov prepare-merge --pr N --sweep records the runs a landed commit stands on",
        )
    database = results_database(repo, settings)
    with Ledger(paths.ledger) as ledger:
        state = Publications(ledger)
        runs = ledger.for_commit(commit)
        if not runs:
            raise UsageError(
                f"the ledger records no results for {commit[:10]}",
                "publish a commit that landed with a sweep (gov prepare-merge --sweep)",
            )
        files = ledger.files(run.id for _origin, run in runs)
        outcome = Published(commit, database.label, rows=len(runs))
        rows = _rows(commit, runs, files, outcome)
        if outcome.refused:
            state.mark(commit, database.label, "failed", _now(), detail="; ".join(outcome.refused))
            return outcome
        state.mark(commit, database.label, "pending", _now(), rows=len(rows))
        crash_point("publish-pending")  # killed here: pending, nothing written
        try:
            outcome.inserted = database.publish(commit, rows, __version__)
        except GovError as exc:
            outcome.error = exc.message
            state.mark(commit, database.label, "failed", _now(), rows=len(rows), detail=exc.message)
            return outcome
        crash_point("publish-committed")  # killed here: written, still pending in the ledger
        state.mark(commit, database.label, "published", _now(), rows=len(rows))
    return outcome


def publish_landed(repo: GitRepo, settings: Settings, merged: str) -> str:
    """`publish-on-merge`: publish the commit a merge just landed; a note for
    the land step. The merge stands whatever this says: a publish that fails
    is recorded as failed (so `--retry-failed` takes it up) and reported."""
    try:
        done = publish_commit(repo, settings, merged)
    except GovError as exc:  # e.g. the commit is not on main here yet
        paths = sweep_paths(repo.root, repo.git_dir, settings)
        try:
            label = results_database(repo, settings).label
            with Ledger(paths.ledger) as ledger:
                Publications(ledger).mark(merged, label, "failed", _now(), detail=exc.message)
        except GovError:
            pass  # nothing to record it in: the note below still says so
        return f"; not published ({exc.message}): gov results publish --retry-failed"
    if not done.ok:
        why = done.error or "; ".join(done.refused)
        return f"; not published to {done.database} ({why}): gov results publish --retry-failed"
    return f"; published {done.rows} row(s) to {done.database}"


def retry_failed(repo: GitRepo, settings: Settings) -> list[Published]:
    """Publish again every commit whose publish to this database failed or never finished."""
    paths = sweep_paths(repo.root, repo.git_dir, settings)
    if not paths.ledger.is_file():
        return []
    label = results_database(repo, settings).label
    with Ledger(paths.ledger) as ledger:
        pending = Publications(ledger).unfinished(label)
    return [publish_commit(repo, settings, item.commit_sha) for item in pending]


def _rows(
    commit: str,
    runs: list[tuple[str, LedgerRun]],
    files: Mapping[int, tuple[RunFile, ...]],
    outcome: Published,
) -> list[ResultRow]:
    at = _now()
    rows: list[ResultRow] = []
    for origin, run in runs:
        where = f"run {run.id} {run.job_key}"
        if run.status != "succeeded":
            outcome.refused.append(f"{where}: {run.status}, no result to publish")
            continue
        if run.identity is None or run.recipe is None:
            outcome.refused.append(f"{where}: recorded without a row identity (harness unknown)")
            continue
        recorded = {f.name: f for f in files.get(run.id, ())}
        try:
            point = point_of(run, tuple(recorded.values()))
        except (Unverifiable, ResultError) as exc:
            outcome.refused.append(f"{where}: {exc}")
            continue
        result = recorded[posixpath.basename(Path(point.result_path).as_posix())]
        figures = point.figures
        rows.append(
            ResultRow(
                commit, run.identity, run.job_key, run.recipe, run.conc, point.config,
                figures.kind, figures.tput_per_gpu, figures.ttft_ms, figures.tpot_ms,
                figures.interactivity, json.dumps(figures.scores, sort_keys=True), origin,
                run.commit_sha, run.pr, run.id, result.name, result.sha256 or "", at,
                json.dumps(list(point.key)),
            )
        )  # fmt: skip
    return rows


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
