"""`gov results compare --pr N`: the ledger and the result folders in, a comparison out.

The PR's points are its succeeded runs (`--pr N` launches and prepare-merge's
reruns). Main's points are the succeeded runs of what landed on main: runs
recorded for a PR whose squash commit is on main's first-parent history
(`(#N)` in its subject), and runs without a PR whose commit main contains.
Each run's folder holds the row (`gov-row.json`) and the script's result file,
read by `reader`; pairing and deltas are `compare`'s (pure).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from governance.core.diagnostics import UsageError
from governance.core.settings import Settings
from governance.git.mainref import main_ref
from governance.git.repo import GitRepo
from governance.results.archive import run_folder
from governance.results.compare import ComparisonReport, Point, compare
from governance.results.reader import ResultError, read_result
from governance.sweeps.dispatch import sweep_paths
from governance.sweeps.identity import SLOT_FIELDS, WORKER_SLOT_FIELDS
from governance.sweeps.jobs import ROW_JSON_NAME
from governance.sweeps.ledger import Ledger, LedgerRun

MAIN_HISTORY = 5000  # first-parent commits of main searched for landed PRs
_NOT_RESULTS = {ROW_JSON_NAME, "meta_env.json"}


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


def result_file(folder: Path, is_eval: bool) -> Path | None:
    """The result a run left: lm-eval's `results*.json` for evals, else the
    processed `agg_*.json` when there is one, else the script's `<RF>.json`."""
    files = sorted(p for p in folder.glob("*.json") if p.name not in _NOT_RESULTS)
    if is_eval:
        files = [p for p in files if p.name.startswith("results")]
    else:
        files = [p for p in files if not p.name.startswith("results")]
    aggregated = [p for p in files if p.name.startswith("agg_")]
    chosen = aggregated or files
    return chosen[0] if chosen else None


def point_of(run: LedgerRun, results_root: Path) -> Point:
    """The point a run measured (ResultError when its files cannot be read):
    from the copy kept under its run id, else its result folder when no later
    run replaced it."""
    folder = run_folder(results_root, run.id)
    if not folder.is_dir():
        folder = Path(run.result_path)
    try:
        row = json.loads((folder / ROW_JSON_NAME).read_bytes())
    except (OSError, ValueError) as exc:
        raise ResultError(f"no readable {ROW_JSON_NAME} in {folder}") from exc
    if not isinstance(row, dict):
        raise ResultError(f"{folder / ROW_JSON_NAME} is not a row")
    is_eval = run.job_key.startswith("eval-")  # eval rows carry no fingerprint
    path = result_file(folder, is_eval)
    if path is None:
        raise ResultError(f"no result file in {folder}")
    try:
        figures = read_result(path.read_bytes(), row)
    except ResultError as exc:
        raise ResultError(f"{path}: {exc}") from exc
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


def landed_prs(repo: GitRepo, settings: Settings, main_sha: str) -> set[int]:
    out = set()
    for commit in repo.first_parent_commits(main_sha, max_count=MAIN_HISTORY):
        number = settings.pr_from_subject(commit.subject)
        if number is not None:
            out.add(number)
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
    report = ComparisonReport(pr, percent, main_label=main.label)
    # A result folder holds its newest launch only; an older run without a
    # kept copy is readable there only if no later run replaced it.
    newest_in: dict[str, int] = {}
    for run in runs:
        newest_in[run.result_path] = max(run.id, newest_in.get(run.result_path, 0))
    pr_points, main_points = [], []

    def readable(run: LedgerRun) -> bool:
        kept = run_folder(paths.results, run.id).is_dir()
        return kept or newest_in.get(run.result_path) == run.id

    for run in runs:
        if run.pr != pr:
            continue
        try:
            pr_points.append(point_of(run, paths.results))
        except ResultError as exc:
            report.unreadable.append(f"run {run.id}: {exc}")
    for run in main_runs(repo, settings, runs, pr, main.sha):
        if not readable(run):
            continue  # its files were replaced by a later launch: no baseline
        try:
            main_points.append(point_of(run, paths.results))
        except ResultError:
            continue  # main's unreadable results only mean no baseline
    report.comparisons = compare(pr_points, main_points, percent)
    return report
