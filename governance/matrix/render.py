"""Text, markdown and JSON views of matrix rows and plans (pure: str out).

JSON output follows the reference tools byte for byte: generator rows with
`", "`/`": "` separators and ASCII escapes, the plan document compact with
UTF-8 kept. Text and markdown are for people: one line per row with the
fields that tell rows apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from governance.core.diagnostics import Violation
from governance.core.safe_text import html_text, markdown_code, markdown_text
from governance.matrix.plan import PlanResult
from governance.matrix.row_builder import worker_tag

COLUMNS = ("config", "runner", "framework", "prec", "seq", "parallelism", "spec", "conc", "eval")
EVAL_SECTIONS = ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals")


def rows_json(rows: Sequence[dict[str, Any]]) -> str:
    """Exactly what the reference generator prints."""
    return json.dumps(list(rows))


def plan_json(result: PlanResult) -> str:
    """Exactly what the reference processor prints (warnings are not part of it)."""
    return json.dumps(result.document, ensure_ascii=False, separators=(",", ":"))


def describe(row: dict[str, Any]) -> tuple[str, ...]:
    """The cells of one row, in COLUMNS order."""
    if row.get("scenario-type") == "agentic-coding":
        seq = "agentic"
    else:
        seq = f"{row.get('isl')}/{row.get('osl')}"
    if isinstance(row.get("prefill"), dict):
        parallel = f"{worker_tag('P', row['prefill'])}/{worker_tag('D', row['decode'])}"
    else:
        parallel = f"tp{row.get('tp')}"
        if row.get("ep", 1) != 1:
            parallel += f" ep{row['ep']}"
        if row.get("dp-attn"):
            parallel += " dpa"
        for name in ("pp", "dcp-size", "pcp-size"):
            if row.get(name, 1) != 1:
                parallel += f" {name}{row[name]}"
    if row.get("kv-offloading") not in (None, "none"):
        parallel += f" kv:{row['kv-offloading']}"
    conc = row.get("conc")
    conc_text = ",".join(str(c) for c in conc) if isinstance(conc, list) else str(conc)
    marks = []
    if row.get("run-eval"):
        marks.append("eval" + (f"@{row['eval-conc']}" if "eval-conc" in row else ""))
    if row.get("eval-all-concs"):
        marks.append("all-concs")
    return (
        str(row.get("model-prefix", "")),
        str(row.get("runner", "")),
        str(row.get("framework", "")),
        str(row.get("precision", "")),
        seq,
        parallel,
        str(row.get("spec-decoding", "none")),
        conc_text,
        " ".join(marks),
    )


def _table(rows: Iterable[tuple[str, ...]], header: Sequence[str]) -> list[str]:
    cells = [tuple(header), *rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


def rows_text(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "no rows\n"
    lines = _table((describe(row) for row in rows), COLUMNS)
    lines.append(f"{len(rows)} row(s)")
    return "\n".join(lines) + "\n"


def _sections(document: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    sections: list[tuple[str, list[dict[str, Any]]]] = []
    for kind in ("single_node", "multi_node"):
        for bucket, rows in document[kind].items():
            sections.append((f"{kind}[{bucket}]", rows))
    for name in EVAL_SECTIONS:
        if document[name]:
            sections.append((name, document[name]))
    return sections


def _warning_lines(warnings: Sequence[Violation]) -> list[str]:
    return [f"warning {w.code}: {w.message}" + (f" ({w.hint})" if w.hint else "") for w in warnings]


def plan_text(result: PlanResult) -> str:
    document = result.document
    meta = document["changelog_metadata"]
    lines = [
        f"plan {meta['base_ref']}..{meta['head_ref']}: {len(meta['entries'])} entr"
        f"{'y' if len(meta['entries']) == 1 else 'ies'}"
    ]
    sections = _sections(document)
    if not sections:
        lines.append("nothing to run")
    for title, rows in sections:
        lines += ["", f"{title}: {len(rows)} row(s)"]
        lines += _table((describe(row) for row in rows), COLUMNS)
    warnings = _warning_lines(result.warnings)
    if warnings:
        lines += ["", *warnings]
    return "\n".join(lines) + "\n"


def _md_cell(text: object) -> str:
    return markdown_text(str(text)) or " "


def plan_markdown(result: PlanResult) -> str:
    """A pull-request comment: summary table, then one table per section."""
    document = result.document
    meta = document["changelog_metadata"]
    sections = _sections(document)
    span = f"{markdown_code(str(meta['base_ref']))}..{markdown_code(str(meta['head_ref']))}"
    lines = [f"### Sweep plan {span}", ""]
    if result.warnings:
        lines += [f"> **Warning:** {markdown_text(w.message)}" for w in result.warnings] + [""]
    lines += ["| section | rows |", "|---|---:|"]
    lines += [f"| {_md_cell(title)} | {len(rows)} |" for title, rows in sections] or [
        "| (none) | 0 |"
    ]
    for title, rows in sections:
        lines += ["", f"<details><summary>{html_text(title)} ({len(rows)})</summary>", ""]
        lines.append("| " + " | ".join(COLUMNS) + " |")
        lines.append("|" + "---|" * len(COLUMNS))
        for row in rows:
            lines.append("| " + " | ".join(_md_cell(c) for c in describe(row)) + " |")
        lines += ["", "</details>"]
    lines += ["", "**Changelog entries**", ""]
    for entry in meta["entries"]:
        keys = ", ".join(markdown_code(str(k)) for k in entry["config-keys"])
        flags = [name for name in ("evals-only", "all-evals", "append-only") if entry.get(name)]
        suffix = f" ({', '.join(flags)})" if flags else ""
        lines.append(f"- {keys}{suffix}: {markdown_text(str(entry['pr-link']))}")
    return "\n".join(lines) + "\n"
