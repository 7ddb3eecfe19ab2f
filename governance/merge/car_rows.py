"""A queue car's sweep rows by decision (pure: prepare-merge's sweep report in,
counts out): measured by the PR itself, by a car ahead (or on main since the
PR forked), or run by the car, of which some failed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

# Statuses of a rerun row that are no failure: measured, or only planned (dry run).
_NOT_FAILED = ("succeeded", "dry-run")


@dataclass(frozen=True, slots=True)
class RowCounts:
    pr: int = 0  # reused: measured by the PR itself
    ahead: int = 0  # reused: measured by a car ahead, or on main since the PR forked
    run: int = 0  # launched by the car (in a dry run: would be)
    failed: int = 0  # of `run`: no result (failed, timed out, stopped, not launched)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    def text(self) -> str:
        parts = [f"{self.pr} by the PR", f"{self.ahead} by a car ahead", f"{self.run} run"]
        return ", ".join(parts + ([f"{self.failed} of them failed"] if self.failed else []))


def rows_by_decision(sweep: Mapping[str, Any] | None) -> RowCounts | None:
    """The counts of a `MergeReport.sweep_data` (None: the car did not sweep)."""
    if sweep is None:
        return None
    pr = ahead = run = failed = 0
    for row in sweep.get("rows", ()):
        if row.get("action") == "reused":
            if row.get("origin") == "ahead":
                ahead += 1
            else:
                pr += 1
        else:
            run += 1
            failed += row.get("status") not in _NOT_FAILED
    return RowCounts(pr, ahead, run, failed)
