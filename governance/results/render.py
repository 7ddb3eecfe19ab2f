"""A comparison as text, markdown (the PR comment, the step summary) or JSON."""

from __future__ import annotations

import json

from governance.core.safe_text import markdown_text
from governance.results.compare import METRICS, Change, Comparison, ComparisonReport, Point

_MARK = {"better": "▲", "worse": "▼", "": ""}


def _value(number: float | None) -> str:
    if number is None:
        return "-"
    if abs(number) >= 1000:
        return f"{number:,.0f}"
    if abs(number) >= 10:
        return f"{number:.1f}"
    return f"{number:.3g}"


def _cell(change: Change | None, pr_only: float | None) -> str:
    if change is None:
        return _value(pr_only)
    text = f"{_value(change.pr)} vs {_value(change.main)}"
    if change.relative is not None:
        text += f" ({change.relative * 100:+.1f}%{' ' + _MARK[change.flag] if change.flag else ''})"
    return text


def _rows(report: ComparisonReport) -> tuple[list[str], list[list[str]]]:
    headers = ["config", "conc", *(label for _n, label, _h in METRICS), "main run"]
    rows = []
    for c in report.comparisons:
        if c.pr.figures.kind == "eval":
            continue
        by_name = {change.metric: change for change in c.changes}
        cells = [_cell(by_name.get(name), getattr(c.pr.figures, name)) for name, _l, _h in METRICS]
        main = _main_run(c.main) if c.main else "none: new point"
        rows.append([c.pr.config, c.pr.conc, *cells, main])
    return headers, rows


def _main_run(point: Point) -> str:
    """Main's run, named by main's commit: a landed PR's run was measured at
    the PR's commit, which is not main's."""
    if point.landed_as:
        return f"#{point.run_id} (main {point.landed_as[:10]}, measured at {point.commit[:10]})"
    return f"#{point.run_id} (main {point.commit[:10]})"


def _eval_rows(report: ComparisonReport) -> list[list[str]]:
    out = []
    for c in report.comparisons:
        if c.pr.figures.kind != "eval":
            continue
        by_name = {change.metric: change for change in c.changes}
        for name, value in sorted(c.pr.figures.scores.items()):
            out.append([c.pr.config, c.pr.conc, name, _cell(by_name.get(name), value)])
    return out


def summary(report: ComparisonReport) -> str:
    paired = sum(c.main is not None for c in report.comparisons)
    unverifiable = f", {len(report.unverifiable)} unverifiable" if report.unverifiable else ""
    return (
        f"PR #{report.pr} vs {report.main_label}: {len(report.comparisons)} point(s), "
        f"{paired} with a main result{unverifiable}; past ±{report.threshold:g}%: "
        f"{report.worse} worse, {report.better} better"
    )


def render_text(report: ComparisonReport) -> str:
    headers, rows = _rows(report)
    out = [summary(report)]
    if rows:
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        out += [fmt.format(*headers), fmt.format(*("-" * w for w in widths))]
        out += [fmt.format(*row).rstrip() for row in rows]
    for config, conc, name, cell in _eval_rows(report):
        out.append(f"eval {config} conc {conc}: {name} {cell}")
    out += [f"unreadable: {line}" for line in report.unreadable]
    out += list(report.unverifiable)
    return "\n".join(out) + "\n"


def _md(text: object) -> str:
    return markdown_text(str(text))


def render_markdown(report: ComparisonReport) -> str:
    headers, rows = _rows(report)
    out = [
        f"### Results: PR #{_md(report.pr)} compared with {_md(report.main_label)}",
        "",
        _md(summary(report)),
    ]
    out += [
        "",
        "PR value vs main value (relative change; ▲ better, ▼ worse past the threshold).",
        "",
    ]
    if rows:
        out += ["| " + " | ".join(_md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    evals = _eval_rows(report)
    if evals:
        out += ["", "| eval config | conc | score | PR vs main |", "|---|---|---|---|"]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in evals]
    if report.unreadable:
        out += ["", *(f"- unreadable: {_md(line)}" for line in report.unreadable)]
    if report.unverifiable:
        out += ["", *(f"- {_md(line)}" for line in report.unverifiable)]
    return "\n".join(out) + "\n"


def render_json(report: ComparisonReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"


def flagged(comparisons: list[Comparison]) -> list[Comparison]:
    return [c for c in comparisons if c.flags]
