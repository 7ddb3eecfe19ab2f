"""One generator invocation: config keys -> sweep rows (docs/matrix.md, 'Row generation').

`generate()` is the `test-config` command: resolve key patterns, build rows
(`row_builder`), then apply the eval mode. Eval selection groups rows across
*all* keys of one invocation, so callers that batch keys get the reference's
grouping (docs/matrix.md, 'Eval selection').
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from governance.matrix.catalog import Catalog
from governance.matrix.errors import MatrixError
from governance.matrix.evals import expand_all_evals, mark_evals
from governance.matrix.row_builder import Filters, build_rows
from governance.matrix.rowbounds import MAX_PLAN_ROWS


class EvalMode(StrEnum):
    DEFAULT = "default"
    NO_EVALS = "no-evals"
    EVALS_ONLY = "evals-only"
    ALL_EVALS = "all-evals"


def eval_mode_from_flags(no_evals: bool, evals_only: bool, all_evals: bool) -> EvalMode:
    """The generator's eval-mode flag rules; ValueError on a bad combination."""
    if no_evals and evals_only:
        raise ValueError("argument --evals-only: not allowed with argument --no-evals")
    if no_evals and all_evals:
        raise ValueError("--all-evals cannot be combined with --no-evals")
    if all_evals:
        return EvalMode.ALL_EVALS
    if evals_only:
        return EvalMode.EVALS_ONLY
    return EvalMode.NO_EVALS if no_evals else EvalMode.DEFAULT


def generate(
    catalog: Catalog,
    patterns: Sequence[str],
    mode: EvalMode = EvalMode.DEFAULT,
    filters: Filters = Filters(),
    *,
    validate_all: bool = True,
    max_rows: int = MAX_PLAN_ROWS,
) -> list[dict[str, Any]]:
    """Rows for `patterns` (globs or exact keys) in the given eval mode.

    `validate_all=True` reproduces the reference: any invalid entry anywhere
    fails the invocation. False validates only the requested keys (cheaper;
    unrelated faults do not block). At most `max_rows` rows are built, and
    at most `rowbounds.MAX_CONFIG_ROWS` per key (GOV524 past either).
    """
    # the reference loads (and validates) the masters before resolving keys
    if validate_all:
        catalog.require_valid()
    elif problems := catalog.file_violations():
        raise MatrixError(problems)
    keys = catalog.resolve_globs(patterns)
    if not validate_all:
        catalog.require_valid(keys)
    rows = build_rows(catalog, keys, filters, max_rows)
    return apply_eval_mode(rows, mode)


def apply_eval_mode(rows: list[dict[str, Any]], mode: EvalMode) -> list[dict[str, Any]]:
    """The eval modes: mark / expand / keep eval rows. Mutates and returns rows."""
    if mode is EvalMode.NO_EVALS:
        return rows
    if mode is EvalMode.DEFAULT:
        mark_evals(rows, include_agentic=False)
        return rows
    mark_evals(rows, include_agentic=True)
    if mode is EvalMode.ALL_EVALS:
        rows = expand_all_evals(rows)
    selected = [row for row in rows if row.get("run-eval")]
    for row in selected:
        row["eval-only"] = True
    return selected
