"""Append-only entries may only add points to existing curves.

The rules: docs/matrix.md, 'Append-only deltas'.
"""

from __future__ import annotations

import json
from typing import Any

from governance.core.codes import violation
from governance.core.fingerprint import CURVE_IGNORE
from governance.matrix.catalog import Catalog
from governance.matrix.errors import MatrixError
from governance.matrix.plan_entry import AGENTIC, PlanEntry


def _fail(code: str, message: str) -> MatrixError:
    return MatrixError([violation(code, message)])


def append_only_scope(
    entries: list[PlanEntry], resolved: list[list[str]], head: Catalog, base: Catalog
) -> None:
    base.require_valid()
    selected: dict[str, set[str]] = {}
    for entry, keys in zip(entries, resolved, strict=True):
        for key in keys:
            selected.setdefault(key, set()).update(entry.scenarios)
    missing = sorted(key for key in selected if key not in base)
    if missing:
        raise _fail(
            "GOV540",
            "append-only requires every selected config to exist in the base revision; "
            f"missing: {missing!r}",
        )
    all_keys = list(dict.fromkeys([*base.keys, *head.keys]))
    changed = sorted(
        key
        for key in all_keys
        if key not in selected and _raw_or_none(base, key) != _raw_or_none(head, key)
    )
    if changed:
        raise _fail(
            "GOV541",
            f"append-only PR changed configs not selected by its changelog entry: {changed!r}",
        )
    for key, kinds in selected.items():
        old, new = base.raw(key), head.raw(key)
        old_scenarios, new_scenarios = old.get("scenarios") or {}, new.get("scenarios") or {}
        if set(old_scenarios) != set(new_scenarios):
            raise _fail("GOV541", f"append-only added or removed a scenario in config {key!r}")
        outside = [kind for kind in old_scenarios if kind not in kinds]
        if outside and any(
            old.get(name) != new.get(name) for name in set(old) | set(new) if name != "scenarios"
        ):
            raise _fail(
                "GOV541",
                "append-only changed config-wide fields that can affect scenarios outside "
                f"its changelog scope: {key!r}",
            )
        for kind in outside:
            if old_scenarios.get(kind) != new_scenarios.get(kind):
                raise _fail(
                    "GOV541",
                    f"append-only changed a scenario outside its changelog scope: "
                    f"{key!r} / {kind!r}",
                )


def _raw_or_none(catalog: Catalog, key: str) -> Any:
    return catalog.raw(key) if key in catalog else None


# A curve (and a recipe) is a row without its concurrency and run name.


def _points(row: dict[str, Any]) -> set[int]:
    conc = row.get("conc")
    if isinstance(conc, list):
        if conc and all(isinstance(c, int) and not isinstance(c, bool) for c in conc):
            return set(conc)
    elif isinstance(conc, int) and not isinstance(conc, bool):
        return {conc}
    raise _fail("GOV542", f"append-only matrix entry has invalid concurrency value: {conc!r}")


def _curve(row: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in CURVE_IGNORE}, sort_keys=True)


def append_only_delta(
    base_rows: list[dict[str, Any]], head_rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Only the new points of existing (or same-series) curves."""
    base: dict[str, set[int]] = {}
    for row in base_rows:
        base.setdefault(_curve(row), set()).update(_points(row))
    head: dict[str, set[int]] = {}
    for row in head_rows:
        head.setdefault(_curve(row), set()).update(_points(row))
    if not base:
        raise _fail("GOV542", "append-only requires an existing curve in the base revision")
    for curve, points in base.items():
        if curve not in head:
            raise _fail("GOV542", "append-only may not remove or modify existing generated recipes")
        lost = points - head[curve]
        if lost:
            raise _fail(
                "GOV542",
                f"append-only may not remove existing concurrency points: {sorted(lost)!r}",
            )
    delta: list[dict[str, Any]] = []
    emitted: dict[str, set[int]] = {}
    for row in head_rows:
        curve = _curve(row)
        added = head[curve] - base.get(curve, set())
        done = emitted.setdefault(curve, set())
        if isinstance(row["conc"], list):
            keep: list[int] = []
            for value in row["conc"]:
                if value in added and value not in done:
                    keep.append(value)
                    done.add(value)
            if keep:
                delta.append({**row, "conc": keep})
        elif row["conc"] in added and row["conc"] not in done:
            done.add(row["conc"])
            delta.append(row)
    if not delta:
        raise _fail("GOV542", "append-only did not add any generated points")
    base_images: dict[tuple[Any, ...], set[Any]] = {}
    for row in base_rows:
        base_images.setdefault(_visual_series(row), set()).add(row.get("image"))
    for row in delta:
        image = row.get("image")
        if image is None or base_images.get(_visual_series(row)) != {image}:
            raise _fail(
                "GOV542",
                "append-only additions must belong to an existing visual curve with one "
                "unchanged non-null image",
            )
    return delta


def _visual_series(row: dict[str, Any]) -> tuple[Any, ...]:
    agentic = row.get("scenario-type") == AGENTIC
    offloading = row.get("kv-offloading")

    def hardware(worker: str) -> Any:
        value = row.get(worker)
        return value.get("hardware") if isinstance(value, dict) else None

    return (
        row.get("model"),
        row.get("model-prefix"),
        row.get("precision"),
        row.get("framework"),
        row.get("runner"),
        bool(row.get("disagg")),
        "agentic_traces" if agentic else "single_turn",
        None if agentic else row.get("isl"),
        None if agentic else row.get("osl"),
        "off" if offloading in (None, "", "none") else "on",
        "" if agentic else row.get("spec-decoding", "none"),
        hardware("prefill"),
        hardware("decode"),
    )
