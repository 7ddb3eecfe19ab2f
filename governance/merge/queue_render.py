"""The merge queue as text and JSON: `gov queue status` and the lines of `gov queue run`."""

from __future__ import annotations

from governance.merge.queue import CarResult, RunResult
from governance.merge.queue_store import ACTIVE, Car


def status_data(cars: list[Car], paused: bool) -> dict[str, object]:
    """`gov queue status --format json`: the paused flag and every car, waiting
    ones first in run order (`position` 1, 2, ...; null once a car is done)."""
    waiting = [car for car in cars if car.state in ACTIVE]
    done = [car for car in cars if car.state not in ACTIVE]
    rows: list[dict[str, object]] = []
    for position, car in enumerate(waiting, 1):
        rows.append({"position": position, **car.to_dict()})
    rows += [{"position": None, **car.to_dict()} for car in done]
    return {"paused": paused, "waiting": len(waiting), "cars": rows}


def render_status(cars: list[Car], paused: bool) -> str:
    waiting = [car for car in cars if car.state in ACTIVE]
    head = f"gov queue: {len(waiting)} car(s) waiting"
    lines = [head + (" -- paused (gov queue resume)" if paused else "")]
    for position, car in enumerate(waiting, 1):
        tries = f", attempt {car.attempts}" if car.attempts else ""
        lines.append(
            f"  {position:>3}. PR #{car.pr:<6} {car.priority:<6} {car.state:<8}"
            f" enqueued {car.enqueued_at}{tries}{_ahead(car)}"
        )
    for car in cars:
        if car.state in ACTIVE:
            continue
        rows = f" (rows: {car.rows.text()})" if car.rows is not None else ""
        if car.state == "landed":
            note = f"as {car.landed_commit[:12]}{rows}"
        elif car.state == "refused":
            note = f"at {car.refused_step}{rows}: {car.refused_reason}"
        else:
            note = f"at {car.updated_at}"
        lines.append(f"       PR #{car.pr:<6} {car.priority:<6} {car.state:<8} {note}")
    if not cars:
        lines.append("  (empty: gov queue add --pr N)")
    return "\n".join(lines) + "\n"


def _ahead(car: Car) -> str:
    """What `--ahead` holds for a waiting car: parked, or its candidate and its base."""
    if car.blocked_by:
        return f", parked behind PR #{car.blocked_by}"
    if car.candidate:
        on = f"PR #{car.candidate_on}'s candidate" if car.candidate_on else "main"
        return f", candidate {car.candidate[:12]} on {on}"
    return ""


def render_car(car: CarResult) -> str:
    mark = {"landed": "ok", "refused": "NO", "busy": "..", "would": ".."}[car.outcome]
    rows = f" (rows: {car.rows.text()})" if car.rows is not None else ""
    if car.outcome == "landed":  # the detail says how: "landed as …", "already merged as …"
        return f"[{mark}] PR #{car.pr} {car.detail}{rows}"
    where = f" at {car.step}" if car.step and car.outcome == "refused" else ""
    return f"[{mark}] PR #{car.pr} {car.outcome}{where}{rows}: {car.detail}"


def render_summary(result: RunResult) -> str:
    counts: dict[str, int] = {}
    for car in result.cars:
        counts[car.outcome] = counts.get(car.outcome, 0) + 1
    parts = [f"{count} {outcome}" for outcome, count in counts.items()] or ["nothing to do"]
    line = "gov queue run" + (" (dry run: nothing changed)" if result.dry_run else "")
    line += ": " + ", ".join(parts)
    if result.paused:
        line += "; the queue is paused, the other cars wait (gov queue resume)"
    return line


def run_data(result: RunResult) -> dict[str, object]:
    return {
        "dry_run": result.dry_run,
        "paused": result.paused,
        "exit_code": result.exit_code,
        "cars": [car.to_dict() for car in result.cars],
    }
