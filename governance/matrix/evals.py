"""Eval selection (docs/matrix.md, 'Eval selection'): which generated rows also run evals.

*mark* flags, per parallelism identity, the row to evaluate; *expand*
(`--all-evals`) merges rows that differ only in concurrency into one eval row.
Rows are plain dicts; these functions mutate them in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from governance.matrix.plan_entry import AGENTIC

MIN_EVAL_CONC = 16
# keys that do not change what is being measured (the "parallelism identity")
EVAL_KEYS = ("conc", "run-eval", "eval-only", "eval-conc", "eval-all-concs", "exp-name")


def identity(row: dict[str, Any], ignore: Iterable[str] = EVAL_KEYS) -> str:
    """Structural identity of a row without the given keys (hashable)."""
    skip = set(ignore)
    return json.dumps({k: v for k, v in row.items() if k not in skip}, sort_keys=True)


def _is_agentic(row: dict[str, Any]) -> bool:
    return row.get("scenario-type") == AGENTIC


def _is_8k1k(row: dict[str, Any]) -> bool:
    return row.get("isl") == 8192 and row.get("osl") == 1024


def mark_evals(rows: list[dict[str, Any]], *, include_agentic: bool) -> None:
    """Mark: set `run-eval` on every row; flag the chosen ones."""
    for row in rows:
        row["run-eval"] = False
    single: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    multi: list[dict[str, Any]] = []
    agentic_single: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        if _is_agentic(row):
            if not include_agentic:
                continue
            if "prefill" in row:
                multi.append(row)
            else:
                recipe = (row["model"], row["runner"], row["framework"], row["precision"])
                best = agentic_single.get(recipe)
                if best is None or row["conc"] > best["conc"]:
                    agentic_single[recipe] = row
        elif _is_8k1k(row):
            if "prefill" in row:
                multi.append(row)
            elif row["conc"] >= MIN_EVAL_CONC:
                group = (
                    row["model"],
                    row["runner"],
                    row["framework"],
                    row["precision"],
                    row["isl"],
                    row["osl"],
                    row["spec-decoding"],
                    row["dp-attn"],
                )
                single.setdefault(group, []).append(row)
    for members in single.values():
        values = sorted({row["conc"] for row in members})
        targets = {values[-1], values[len(values) // 2]}
        for row in members:
            if row["conc"] in targets:
                row["run-eval"] = True
    for row in agentic_single.values():
        row["run-eval"] = True
    _mark_multinode(multi)


def _mark_multinode(rows: list[dict[str, Any]]) -> None:
    """Per parallelism identity, the row holding the highest conc >= 16."""
    best: dict[str, tuple[int, dict[str, Any]]] = {}
    for row in rows:
        eligible = [c for c in row["conc"] if c >= MIN_EVAL_CONC]
        if not eligible:
            continue
        top = max(eligible)
        ident = identity(row)
        if ident not in best or top > best[ident][0]:
            best[ident] = (top, row)
    for top, row in best.values():
        row["run-eval"] = True
        row["eval-conc"] = top


def expand_all_evals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """All evals: every eligible point becomes an eval; multi-node rows of one
    identity merge into one row carrying all their concurrencies."""
    out: list[dict[str, Any]] = []
    merged: dict[str, dict[str, Any]] = {}
    for row in rows:
        agentic = _is_agentic(row)
        if not agentic and not _is_8k1k(row):
            out.append(row)
            continue
        if "prefill" not in row:
            row["run-eval"] = True
            out.append(row)
            continue
        ident = identity(row)
        first = merged.get(ident)
        if first is not None:
            first["conc"] = sorted(set(first["conc"]) | set(row["conc"]))
            if agentic:
                first["eval-conc"] = max(first["conc"])
            continue
        first = dict(row)
        first["conc"] = sorted(set(row["conc"]))
        first["run-eval"] = True
        if agentic:
            first["eval-conc"] = max(first["conc"])
        else:
            first["eval-all-concs"] = True
            first.pop("eval-conc", None)
        merged[ident] = first
        out.append(first)
    return out
