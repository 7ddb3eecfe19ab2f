"""`gov queue report` as text, JSON or markdown (the report itself: `queue_report`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

from governance.core.safe_text import markdown_code
from governance.merge.queue_report import GpuHours, LandedCar, QueueReport

UNKNOWN = "unknown"


def report_data(report: QueueReport) -> dict[str, object]:
    """JSON: the report's fields; GPU-hours as {"rows", "unknown", "known",
    "total"}, `total` null when a row's cost is not recorded."""

    def hours(h: GpuHours) -> dict[str, object]:
        return {**asdict(h), "total": h.total}

    def car(c: LandedCar) -> dict[str, object]:
        return {**asdict(c), "measured": hours(c.measured), "reused": hours(c.reused)}

    data = asdict(report)
    data.update(
        landed=[car(c) for c in report.landed],
        measured=hours(report.measured),
        reused=hours(report.reused),
    )
    return data


def _hours(h: GpuHours) -> str:
    if not h.rows:
        return "0 (no rows recorded)"
    if h.total is None:
        return f"{UNKNOWN} ({h.unknown} of {h.rows} rows without a GPU count or duration)"
    return f"{h.total:.2f} ({h.rows} rows)"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return UNKNOWN
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _lines(
    report: QueueReport, bullet: str, code: str, literal: Callable[[str], str] = str
) -> list[str]:
    """The report's sentences; `bullet` and `code` mark list items and names,
    `literal` shows text a PR wrote (a refusal names its keys) as it is."""

    def prs(numbers: tuple[int, ...]) -> str:
        return ", ".join(f"{code}#{n}{code}" for n in numbers) or "none"

    window = f" since {report.since}" if report.since else ""
    out = [f"{len(report.landed)} landed, {len(report.refused)} refused{window}"]
    out.append(
        f"enqueue to land: median {_duration(report.median_wait_seconds)},"
        f" max {_duration(report.max_wait_seconds)}"
    )
    out.append(f"GPU-hours measured: {_hours(report.measured)}")
    out.append(f"GPU-hours reused (not run again): {_hours(report.reused)}")
    out.append("landed:" if report.landed else "landed: none")
    for c in report.landed:
        out.append(
            f"{bullet}{code}#{c.pr}{code} as {code}{c.commit[:12]}{code}:"
            f" waited {_duration(c.wait_seconds)}, attempts {c.attempts},"
            f" GPU-hours measured {_hours(c.measured)}, reused {_hours(c.reused)}"
        )
    out.append("failures by step:" if report.failures else "failures by step: none")
    for f in report.failures:
        out.append(f"{bullet}{f.step}: {len(f.prs)} ({prs(f.prs)})")
    if report.refused:
        out.append("refused:")
    for r in report.refused:
        out.append(f"{bullet}{code}#{r.pr}{code} at {r.step}: {literal(r.reason)}")
    if report.first_refused is None:
        out.append("against stop-on-first-failure: nothing refused, nothing left behind")
    else:
        out.append(
            f"against stop-on-first-failure: it stops at {code}#{report.first_refused}{code};"
            f" left behind {len(report.left_behind)} PR(s) the queue landed after it:"
            f" {prs(report.left_behind)}"
        )
    return out


def render_text(report: QueueReport) -> str:
    lines = _lines(report, "  ", "")
    return "gov queue report: " + "\n".join(lines) + "\n"


def render_markdown(report: QueueReport) -> str:
    out = ["## gov queue report"]
    # A refusal's reason quotes the PR's own text: a code span, so no link,
    # image or @mention it holds is rendered.
    for line in _lines(report, "- ", "`", markdown_code):
        if not line.startswith("- "):  # a sentence: its own paragraph
            out.append("")
        out.append(line)
    return "\n".join(out) + "\n"
