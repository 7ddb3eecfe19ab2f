"""`gov results compare --pr N`: the ledger and the result folders in, a comparison out.

The PR's points are its succeeded runs (`--pr N` launches and prepare-merge's
reruns). Main's points are the succeeded runs of what landed on main: runs
recorded for a PR whose squash commit is on main's first-parent history
(`(#N)` in its subject), and runs without a PR whose commit main contains.
Each run's own folder (written by that run only) holds the row
(`gov-row.json`) and the script's result file; both are read only from the
files the ledger recorded for the run, checked against their sizes and
SHA-256 (`sweeps.runfiles`). A run whose files do not verify is listed as
unverifiable and never compared. Reading is `reader`'s, pairing and deltas
`compare`'s (pure).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from governance.core import jsonsafe
from governance.core.diagnostics import UsageError
from governance.core.settings import Settings
from governance.git.mainref import main_ref
from governance.git.repo import GitRepo
from governance.results.compare import ComparisonReport, Point, compare
from governance.results.reader import MAX_RESULT_BYTES, Figures, ResultError, read_result
from governance.sweeps.identity import SLOT_FIELDS, WORKER_SLOT_FIELDS
from governance.sweeps.jobs import GOV_FILE_PREFIX, ROW_JSON_NAME
from governance.sweeps.ledger import Ledger, LedgerRun
from governance.sweeps.resolve import sweep_paths
from governance.sweeps.runfiles import FileUnverifiable, RunFile, read_verified, run_evidence

if TYPE_CHECKING:
    from governance.results.database import ResultsDatabase

MAIN_HISTORY = 5000  # first-parent commits of main searched for landed PRs
_NOT_RESULTS = {"meta_env.json"}  # and gov's own files (GOV_FILE_PREFIX)


def config_key(row: Mapping[str, Any], is_eval: bool = False) -> tuple[Any, ...]:
    """A row's config without its recipe details or concurrency (an image bump
    keeps the key: the point compares with the image before)."""

    def freeze(value: Any) -> Any:
        return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value

    parts: list[Any] = ["eval" if is_eval else "throughput"]
    parts += [freeze(row.get(name)) for name in SLOT_FIELDS]
    for role in ("prefill", "decode"):
        worker = row.get(role)
        if isinstance(worker, Mapping):
            parts += [freeze(worker.get(name)) for name in WORKER_SLOT_FIELDS]
    return tuple(parts)


def config_label(row: Mapping[str, Any], is_eval: bool = False) -> str:
    """`dsv4 fp8 mi300x vllm mtp 1k/1k tp8 ep1` and the like."""

    def k(value: Any) -> str:
        return f"{value // 1024}k" if isinstance(value, int) and value % 1024 == 0 else str(value)

    runner = str(row.get("runner", "?")).split(":", 1)[-1]
    parts = [str(row.get(n, "?")) for n in ("model-prefix", "precision")] + [runner]
    parts.append(str(row.get("framework", "?")))
    if row.get("spec-decoding") not in (None, "none"):
        parts.append(str(row["spec-decoding"]))
    if row.get("isl") is not None:
        parts.append(f"{k(row.get('isl'))}/{k(row.get('osl'))}")
    else:
        parts.append(str(row.get("scenario-type", "")))
    parts.append(f"tp{row.get('tp', '?')}")
    if row.get("ep") not in (None, 1):
        parts.append(f"ep{row['ep']}")
    if row.get("dp-attn") is True:
        parts.append("dpa")
    if is_eval:
        parts.append("eval")
    return " ".join(p for p in parts if p)


class Unverifiable(Exception):
    """A run whose recorded files are not what it left; the message says why."""


def result_name(names: Iterable[str], is_eval: bool) -> str | None:
    """The result a run left, among the names recorded for it (never a file
    added to its folder later): lm-eval's `results*.json` for evals, else the
    processed `agg_*.json` when there is one, else the script's `<RF>.json`."""
    files = sorted(
        n
        for n in names
        if "/" not in n
        and n.endswith(".json")
        and n not in _NOT_RESULTS
        and not n.startswith(GOV_FILE_PREFIX)
    )
    if is_eval:
        files = [n for n in files if n.startswith("results")]
    else:
        files = [n for n in files if not n.startswith("results")]
    aggregated = [n for n in files if n.startswith("agg_")]
    chosen = aggregated or files
    return chosen[0] if chosen else None


def _read(folder: Path, recorded: RunFile) -> bytes:
    """A recorded file's verified bytes, at most MAX_RESULT_BYTES (a bigger
    one is "too large", never read)."""
    try:
        return read_verified(folder, recorded, limit=MAX_RESULT_BYTES)
    except FileUnverifiable as exc:
        raise Unverifiable(str(exc)) from exc


def point_of(run: LedgerRun, files: Sequence[RunFile]) -> Point:
    """The point a run measured, from its own folder: Unverifiable when its
    recorded files are missing or altered (or it has no record), ResultError
    when they verify but cannot be read as a result."""
    why = run_evidence(run, files)
    if why:
        raise Unverifiable(why)
    folder = Path(run.result_path)
    recorded = {f.name: f for f in files}
    if ROW_JSON_NAME not in recorded:
        raise ResultError(f"no {ROW_JSON_NAME} recorded in {folder}")
    try:
        row = jsonsafe.loads(_read(folder, recorded[ROW_JSON_NAME]))
    except jsonsafe.JsonBoundError as exc:
        raise ResultError(f"{folder / ROW_JSON_NAME}: {exc}") from exc
    if not isinstance(row, dict):
        raise ResultError(f"{folder / ROW_JSON_NAME} is not a row")
    is_eval = run.job_key.startswith("eval-")  # eval rows carry no fingerprint
    name = result_name(recorded, is_eval)
    if name is None:
        raise ResultError(f"no result file recorded in {folder}")
    path = folder / name
    try:
        figures = read_result(_read(folder, recorded[name]), row)
    except ResultError as exc:
        raise ResultError(f"{path}: {exc}") from exc
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # a last guard
        raise ResultError(f"{path}: cannot be read ({type(exc).__name__})") from exc
    return Point(
        config_label(row, is_eval),
        config_key(row, is_eval),
        run.conc,
        figures,
        run.id,
        run.commit_sha,
        run.pr,
        run.fingerprint,
        str(path),
    )


def landed_prs(repo: GitRepo, settings: Settings, main_sha: str) -> dict[int, str]:
    """PR number -> the commit of main it landed as (the newest, if relanded)."""
    out: dict[int, str] = {}
    for commit in repo.first_parent_commits(main_sha, max_count=MAIN_HISTORY):
        number = settings.pr_from_subject(commit.subject)
        if number is not None:
            out[number] = commit.sha  # oldest first: a later landing wins
    return out


def main_runs(
    repo: GitRepo, settings: Settings, runs: Iterable[LedgerRun], pr: int, main_sha: str
) -> list[LedgerRun]:
    landed = landed_prs(repo, settings, main_sha)
    contains: dict[str, bool] = {}
    out = []
    for run in runs:
        if run.pr == pr:
            continue
        if run.pr is not None:
            if run.pr in landed:
                out.append(run)
            continue
        if run.commit_sha not in contains:
            try:
                contains[run.commit_sha] = repo.is_ancestor(run.commit_sha, main_sha)
            except Exception:  # a commit gc'd or from another clone: not main's
                contains[run.commit_sha] = False
        if contains[run.commit_sha]:
            out.append(run)
    return out


def compare_pr(
    repo: GitRepo, settings: Settings, pr: int, threshold: float | None = None
) -> ComparisonReport:
    """The comparison `gov results compare --pr N` prints."""
    percent = float(settings.results_threshold) if threshold is None else threshold
    paths = sweep_paths(repo.root, repo.git_dir, settings)
    if not paths.ledger.is_file():
        raise UsageError(
            f"no run ledger at {paths.ledger}: nothing was launched here",
            f"gov launch --plan PLAN.json --pr {pr}, or gov prepare-merge --pr {pr} --sweep",
        )
    main = main_ref(repo, settings.main_branch)
    with Ledger(paths.ledger) as ledger:
        runs = [r for r in ledger.runs() if r.status == "succeeded"]
        pr_runs = [r for r in runs if r.pr == pr]
        baseline = main_runs(repo, settings, runs, pr, main.sha)
        landed = landed_prs(repo, settings, main.sha)
        recorded = ledger.files(r.id for r in [*pr_runs, *baseline])
    report = ComparisonReport(pr, percent, main_label=main.label)
    pr_points: list[Point] = []
    main_points: list[Point] = []
    for run in pr_runs:
        try:
            pr_points.append(point_of(run, recorded.get(run.id, ())))
        except Unverifiable as exc:
            report.unverifiable.append(f"run {run.id} {run.job_key}: unverifiable ({exc})")
        except ResultError as exc:
            report.unreadable.append(f"run {run.id}: {exc}")
    if settings.results_database:  # main's side is what was published for main
        main_points, source = published_main(repo, settings, pr, main.sha)
        report.main_label = f"{main.label} ({source})"
        baseline = []
    for run in baseline:
        try:
            found = point_of(run, recorded.get(run.id, ()))
            main_points.append(replace(found, landed_as=landed.get(run.pr or 0, "")))
        except (Unverifiable, ResultError):
            continue  # main's unverifiable or unreadable results only mean no baseline
    report.comparisons = compare(pr_points, main_points, percent)
    return report


def results_database(repo: GitRepo, settings: Settings) -> ResultsDatabase:
    """The repository's results database (`results-database`; default: SQLite under .git/gov)."""
    from governance.core.state import StateLayout
    from governance.results.database import open_results_database

    default = StateLayout(repo.git_dir.resolve()).results_db
    return open_results_database(settings.results_database, default, repo.root)


def published_main(
    repo: GitRepo, settings: Settings, pr: int, main_sha: str
) -> tuple[list[Point], str]:
    """Main's points from the results database (`results-database`): the rows
    published for commits on main's first-parent history, except the PR's own;
    and the database's label. Rows of schema v1 (no config key) are no baseline."""
    database = results_database(repo, settings)
    if database.engine == "sqlite" and not Path(database.label).is_file():
        return [], f"results database {database.label}: nothing published yet"
    history = {c.sha for c in repo.first_parent_commits(main_sha, max_count=MAIN_HISTORY)}
    points = []
    for row in database.rows():
        if row.commit_sha not in history or row.pr == pr or not row.config_key:
            continue
        scores = json.loads(row.scores) if row.scores else {}
        figures = Figures(
            row.kind, row.tput_per_gpu, row.median_ttft_ms, row.median_tpot_ms,
            row.median_interactivity, {str(k): float(v) for k, v in scores.items()},
        )  # fmt: skip
        points.append(
            Point(
                row.config, tuple(json.loads(row.config_key)), row.conc, figures, row.run_id,
                row.measured_at, row.pr, row.recipe if row.kind != "eval" else None,
                row.result_file, landed_as=row.commit_sha,
            )
        )  # fmt: skip
    return points, f"results database {database.label}"
