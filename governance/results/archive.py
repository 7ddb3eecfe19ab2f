"""Each succeeded run's result, kept under its run id.

A point's result folder (`<results>/<fp16>/conc<N>/`) holds the newest launch
of that recipe and concurrency: a PR that measures main's recipe again
replaces main's files. So right after a launch, the row and the result file
of each succeeded run are copied to `<results>/by-run/<run id>/` (a few
kilobytes each), and the comparison reads a run from there: main's figures
stay main's (docs/results.md).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from governance.sweeps.jobs import ROW_JSON_NAME

ARCHIVE = "by-run"
MAX_FILE_BYTES = 16 * 1024 * 1024  # a result file larger than this is not kept


def run_folder(results_root: Path, run_id: int) -> Path:
    return results_root / ARCHIVE / str(int(run_id))


def keep(results_root: Path, runs: Iterable[tuple[int, Path]]) -> int:
    """Copy the row and JSON results of each (run id, result folder); how many kept."""
    kept = 0
    for run_id, folder in runs:
        target = run_folder(results_root, run_id)
        files = [
            p
            for p in sorted(folder.glob("*.json"))
            if p.is_file() and not p.is_symlink() and p.stat().st_size <= MAX_FILE_BYTES
        ]
        if not any(p.name == ROW_JSON_NAME for p in files):
            continue
        target.mkdir(parents=True, exist_ok=True)
        for path in files:
            shutil.copyfile(path, target / path.name)
        kept += 1
    return kept


def keep_launch(results_root: Path, outcomes: Iterable[object], run_ids: dict[str, int]) -> int:
    """`keep` for what `launch_rows` returned (its succeeded outcomes only)."""
    pairs = []
    for outcome in outcomes:
        job = getattr(outcome, "job", None)
        if job is None or str(getattr(outcome, "status", "")) != "succeeded":
            continue
        if job.key in run_ids:
            pairs.append((run_ids[job.key], Path(job.result_dir)))
    return keep(results_root, pairs)
