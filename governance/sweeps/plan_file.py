"""A plan document as `gov launch --plan` reads it: JSON, shape, and rows whose
recipe fingerprints gov recomputes (docs/sweeps.md, 'Row identity')."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from governance.core.diagnostics import UsageError, line_col
from governance.sweeps.identity import (
    EVAL_SECTIONS,
    THROUGHPUT_SECTIONS,
    PlanRow,
    RowError,
    row_recipe,
)


def load_plan(path: Path) -> dict[str, Any]:
    """Read a `gov plan --format json` document; errors name file:line:column."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot read the plan: {exc.strerror}", "gov plan --format json > PLAN.json"
        ) from exc
    try:
        document = json.loads(data)
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: the plan is not UTF-8", "regenerate it with gov plan") from exc
    except json.JSONDecodeError as exc:
        line, column = line_col(data, len(exc.doc[: exc.pos].encode("utf-8")))
        raise UsageError(
            f"GOV701 plan-invalid: {exc.msg}",
            "regenerate it: gov plan --base-ref BASE --format json > PLAN.json",
            where=f"{path}:{line}:{column}",
        ) from exc
    problem = _shape_problem(document)
    if problem:
        raise UsageError(
            f"GOV701 plan-invalid: {problem}",
            "pass what `gov plan --format json` prints",
            where=str(path),
        )
    return document


def _shape_problem(document: Any) -> str:
    if not isinstance(document, dict):
        return "the plan must be a JSON object"
    if not any(key in document for key in (*THROUGHPUT_SECTIONS, *EVAL_SECTIONS)):
        return "no single_node, multi_node or evals section"
    for section in THROUGHPUT_SECTIONS:
        buckets = document.get(section, {})
        if not isinstance(buckets, dict):
            return f"`{section}` must map buckets to lists of rows"
        for bucket, rows in buckets.items():
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                return f"`{section}.{bucket}` must be a list of row objects"
    for section in EVAL_SECTIONS:
        rows = document.get(section, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            return f"`{section}` must be a list of row objects"
    return ""


def verify_fingerprints(rows: Sequence[PlanRow], where: str) -> None:
    """Refuse a plan any of whose rows does not hash to its `recipe-fingerprint`
    (exit 2, every such row named): its results would be filed under a
    recipe it is not."""
    wrong = []
    for row in rows:
        try:
            row_recipe(row)
        except RowError as exc:
            wrong.append(str(exc))
    if wrong:
        listed = "\n  ".join(wrong[:20]) + (
            f"\n  … and {len(wrong) - 20} more" if len(wrong) > 20 else ""
        )
        raise UsageError(
            f"GOV701 plan-invalid: {len(wrong)} row(s) do not match their recipe fingerprint:\n  "
            + listed,
            "regenerate the plan with `gov plan --format json` instead of editing it",
            where=where,
        )
