"""What each landed car's rows cost, read for `gov queue report`: the ledger's
rows of the landed commit (measured for it, or reused) with their start and
end times, and the GPUs each run spanned.

The ledger records no GPU count, so it is read from the plan row the run ran
(`gov-row.json`, which the launcher writes in the run's result folder),
counted as results count GPUs for throughput per GPU (`results.reader.gpu_count`).
A run whose folder is gone, or whose row file cannot be read, has no GPU count:
the report says unknown rather than guessing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from governance.merge.queue_report import RowCost
from governance.results.reader import gpu_count
from governance.sweeps.jobs import ROW_JSON_NAME
from governance.sweeps.ledger import Ledger

MAX_ROW_BYTES = 1 << 20  # a plan row is a few hundred bytes; anything bigger is not one


def landed_costs(ledger_path: Path, commits: Iterable[str], root: Path) -> dict[str, list[RowCost]]:
    """Each commit's rows; an absent ledger (nothing was ever swept) has none,
    and is not created by reading it. Relative result folders are under `root`."""
    wanted = [commit for commit in commits if commit]
    if not wanted or not ledger_path.is_file():
        return {}
    out: dict[str, list[RowCost]] = {}
    with Ledger(ledger_path) as ledger:
        for commit in wanted:
            out[commit] = [
                RowCost(origin, run.id, run.started_at, run.ended_at, _gpus(root / run.result_path))
                for origin, run in ledger.for_commit(commit)
            ]
    return out


def _gpus(result_dir: Path) -> int | None:
    path = result_dir / ROW_JSON_NAME
    try:
        if path.stat().st_size > MAX_ROW_BYTES:
            return None
        row = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return gpu_count(row) if isinstance(row, dict) else None
