"""`gov queue report`: what the queue landed and refused, how long cars waited,
what their sweeps cost, and what a sequential stop-on-first-failure run would
have left behind. Pure: the queue's cars and the ledger's rows in, a typed
report out (`queue_costs` reads them, `queue_report_render` prints it).

The processing order is the order cars finished in (`updated_at` of the
landed and refused cars): one runner lands one car at a time, so a car
finishes before the next starts.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from governance.core.diagnostics import UsageError
from governance.merge.queue_store import Car, when


@dataclass(frozen=True, slots=True)
class RowCost:
    """One row of a landed commit's results, as the ledger records it."""

    origin: str  # measured (run for this car) | reused (measured before, not run again)
    run_id: int
    started_at: str
    ended_at: str
    gpus: int | None  # None: not recorded for this run

    @property
    def gpu_hours(self) -> float | None:
        start, end = when(self.started_at), when(self.ended_at)
        if self.gpus is None or start is None or end is None:
            return None
        return max(0.0, (end - start).total_seconds()) / 3600 * self.gpus


@dataclass(frozen=True, slots=True)
class GpuHours:
    """A sum of GPU-hours; `total` is None when a row's duration or GPU count is unknown."""

    rows: int
    unknown: int  # rows whose GPU-hours are not recorded
    known: float  # the sum over the other rows

    @property
    def total(self) -> float | None:
        return None if self.unknown else self.known


def _sum(costs: Sequence[RowCost]) -> GpuHours:
    hours = [cost.gpu_hours for cost in costs]
    known = [h for h in hours if h is not None]
    return GpuHours(len(hours), len(hours) - len(known), sum(known))


@dataclass(frozen=True, slots=True)
class LandedCar:
    pr: int
    commit: str
    enqueued_at: str
    landed_at: str
    wait_seconds: float | None  # enqueue to land; None: a time cannot be read
    attempts: int
    measured: GpuHours
    reused: GpuHours


@dataclass(frozen=True, slots=True)
class RefusedCar:
    pr: int
    step: str
    reason: str
    refused_at: str


@dataclass(frozen=True, slots=True)
class StepFailures:
    step: str
    prs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class QueueReport:
    since: str  # "" for all time
    order: tuple[int, ...]  # landed and refused cars, in the order they finished
    landed: tuple[LandedCar, ...]
    refused: tuple[RefusedCar, ...]
    failures: tuple[StepFailures, ...]  # per step, most failures first
    median_wait_seconds: float | None
    max_wait_seconds: float | None
    measured: GpuHours
    reused: GpuHours
    first_refused: int | None  # where a stop-on-first-failure run would have stopped
    left_behind: tuple[int, ...]  # landed after it: a sequential run would not have


def parse_since(text: str) -> datetime:
    """`--since`: a date (midnight UTC) or an ISO 8601 time (UTC when it names no zone)."""
    moment = when(text.strip())
    if moment is None:
        raise UsageError(
            f"--since {text!r} is not a date",
            "give a date or a time in ISO 8601, e.g. --since 2026-08-15 or 2026-08-15T10:00Z",
        )
    return moment


def build_report(
    cars: Sequence[Car], costs: Mapping[str, Sequence[RowCost]], since: datetime | None = None
) -> QueueReport:
    """The report over the cars that finished at or after `since`; `costs` maps
    a landed commit to its rows (a commit absent: no rows recorded)."""
    finished = [c for c in cars if c.state in ("landed", "refused")]
    if since is not None:
        finished = [c for c in finished if (when(c.updated_at) or since) >= since]
    finished.sort(key=lambda c: (when(c.updated_at) or datetime.max.replace(tzinfo=UTC), c.pr))
    landed = tuple(_landed(car, costs.get(car.landed_commit, ())) for car in finished
                   if car.state == "landed")  # fmt: skip
    refused = tuple(RefusedCar(c.pr, c.refused_step, c.refused_reason, c.updated_at)
                    for c in finished if c.state == "refused")  # fmt: skip
    steps: dict[str, list[int]] = {}
    for car in refused:
        steps.setdefault(car.step, []).append(car.pr)
    failures = tuple(StepFailures(step, tuple(prs))
                     for step, prs in sorted(steps.items(), key=lambda kv: (-len(kv[1]), kv[0])))  # fmt: skip
    waits = [car.wait_seconds for car in landed if car.wait_seconds is not None]
    order = tuple(car.pr for car in finished)
    first = refused[0].pr if refused else None
    after = order[order.index(first) + 1 :] if first is not None else ()
    landed_prs = {car.pr for car in landed}
    return QueueReport(
        since=since.isoformat() if since is not None else "",
        order=order,
        landed=landed,
        refused=refused,
        failures=failures,
        median_wait_seconds=statistics.median(waits) if waits else None,
        max_wait_seconds=max(waits) if waits else None,
        measured=_total(car.measured for car in landed),
        reused=_total(car.reused for car in landed),
        first_refused=first,
        left_behind=tuple(pr for pr in after if pr in landed_prs),
    )


def _landed(car: Car, costs: Sequence[RowCost]) -> LandedCar:
    start, end = when(car.enqueued_at), when(car.updated_at)
    wait = (end - start).total_seconds() if start is not None and end is not None else None
    return LandedCar(
        car.pr, car.landed_commit, car.enqueued_at, car.updated_at, wait, car.attempts,
        _sum([c for c in costs if c.origin == "measured"]),
        _sum([c for c in costs if c.origin == "reused"]),
    )  # fmt: skip


def _total(parts: Iterable[GpuHours]) -> GpuHours:
    items = list(parts)
    return GpuHours(sum(p.rows for p in items), sum(p.unknown for p in items),
                    sum(p.known for p in items))  # fmt: skip
