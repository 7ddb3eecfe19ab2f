"""A comparison as one self-contained HTML page: a table and, per config,
throughput per GPU against interactivity for the PR and main (plotly, its
JavaScript embedded once, so the page opens offline).

plotly is the optional extra `report` (`pip install 'gov[report]'`); without
it the HTML format is a usage error that says so.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any

from governance.core.diagnostics import UsageError
from governance.core.safe_text import json_text
from governance.results.compare import Comparison, ComparisonReport
from governance.results.render import _eval_rows, _rows, summary

DATA_ID = "gov-results-data"


def _plotly() -> Any:
    try:
        import plotly.graph_objects as go
    except ImportError as exc:
        raise UsageError(
            "--format html needs plotly, gov's optional `report` extra",
            "pip install 'gov[report]' (or: pip install plotly), or use --format markdown",
        ) from exc
    return go


def _series(
    comparisons: Iterable[Comparison], side: str
) -> tuple[list[float], list[float], list[str]]:
    xs, ys, text = [], [], []
    for c in comparisons:
        point = c.pr if side == "pr" else c.main
        if point is None:
            continue
        x, y = point.figures.interactivity, point.figures.tput_per_gpu
        if x is None or y is None:
            continue
        xs.append(x)
        ys.append(y)
        text.append(f"conc {point.conc} · run {point.run_id} · {point.commit[:10]}")
    return xs, ys, text


def figures(report: ComparisonReport) -> list[tuple[str, Any]]:
    """(config, plotly figure) per config with throughput points."""
    go = _plotly()
    groups: dict[str, list[Comparison]] = {}
    for c in report.comparisons:
        if c.pr.figures.kind == "throughput":
            groups.setdefault(c.pr.config, []).append(c)
    out = []
    for config, items in groups.items():
        figure = go.Figure()
        for side, name, dash in (
            ("main", report.main_label, "dot"),
            ("pr", f"PR #{report.pr}", "solid"),
        ):
            xs, ys, text = _series(items, side)
            if xs:
                figure.add_trace(
                    go.Scatter(
                        x=xs,
                        y=ys,
                        text=text,
                        name=name,
                        mode="lines+markers",
                        line={"dash": dash},
                        hovertemplate="%{text}<br>%{x:.4g} tok/s/user, "
                        "%{y:.4g} tok/s/GPU<extra></extra>",
                    )
                )
        figure.update_layout(
            title=config,
            xaxis_title="median interactivity (tok/s/user)",
            yaxis_title="throughput per GPU (tok/s)",
            height=420,
            margin={"l": 60, "r": 20, "t": 50, "b": 50},
        )
        out.append((config, figure))
    return out


def render_html(report: ComparisonReport) -> str:
    charts = figures(report)
    headers, rows = _rows(report)
    table = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    evals = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
        for row in _eval_rows(report)
    )
    plots = []
    for index, (_config, figure) in enumerate(charts):
        plots.append(
            figure.to_html(
                full_html=False,
                include_plotlyjs=index == 0,  # plotly.js once, inline: no network needed
                div_id=f"plot-{index}",
                config={"displaylogo": False},
            )
        )
    # No `<` at all in the inline script: neither `</script>` nor `<!--` can end or hide it.
    # Controls as JSON escapes, so the text boundary leaves the document valid.
    data = json_text(json.dumps(report.to_dict(), ensure_ascii=False)).replace("<", "\\u003c")
    title = f"PR #{report.pr} results compared with {report.main_label}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }}
td, th {{ border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; }}
th {{ background: #f3f3f3; }}
</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p>{html.escape(summary(report))}. PR value vs main value (relative change;
▲ better, ▼ worse past the threshold).</p>
<table><thead><tr>{table}</tr></thead><tbody>{body}</tbody></table>
{"<table><thead><tr><th>eval config</th><th>conc</th><th>score</th><th>PR vs main</th></tr></thead><tbody>" + evals + "</tbody></table>" if evals else ""}
{"".join(plots)}
<script type="application/json" id="{DATA_ID}">{data}</script>
</body>
</html>
"""
