"""Content identities of plan rows: the one owner of the formulas.

`gov plan` writes a throughput row's `recipe-fingerprint` with
`recipe_fingerprint`; the launcher and reuse recompute it with the same
function and never trust the field (docs/sweeps.md, 'Row identity'). Eval
rows carry no fingerprint: their recipe is the whole row (`eval_recipe`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

# Fields that place a row on its curve rather than define its recipe
# (docs/matrix.md, 'Recipe fingerprints').
CURVE_IGNORE = ("conc", "exp-name", "recipe-fingerprint")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def recipe_fingerprint(row: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the row without conc/exp-name (docs/matrix.md)."""
    return sha256_hex(canonical_json({k: v for k, v in row.items() if k not in CURVE_IGNORE}))


# What the plan's output normalisation adds to a generator row after it was
# fingerprinted (docs/matrix.md, 'Output normalisation'): a default it fills
# could also have been written by the config, so both readings are tried.
_FILLED_TOP: tuple[tuple[str, Any], ...] = (("eval-only", False), ("eval-all-concs", False))
_FILLED_WORKER: tuple[tuple[str, Any], ...] = (("additional-settings", []),)


def _readings(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The generator rows a normalised plan row can have come from (<= 16)."""
    readings: list[dict[str, Any]] = [dict(row)]
    for key, default in _FILLED_TOP:
        if key in row and row[key] == default and type(row[key]) is type(default):
            readings += [{k: v for k, v in r.items() if k != key} for r in readings]
    for role in ("prefill", "decode"):
        for key, default in _FILLED_WORKER:
            worker = row.get(role)
            if isinstance(worker, Mapping) and worker.get(key) == default:
                stripped = {k: v for k, v in worker.items() if k != key}
                readings += [{**r, role: stripped} for r in readings]
    return readings


def plan_row_fingerprint(row: Mapping[str, Any], given: str | None) -> str | None:
    """The fingerprint of a row as `gov plan --format json` printed it: `given`
    when one generator reading of the row hashes to it, None when none does
    (the row was edited). Without `given`, the row's own hash."""
    if given is None:
        return recipe_fingerprint(row)
    for reading in _readings(row):
        if recipe_fingerprint(reading) == given:
            return given
    return None


def eval_recipe(row: Mapping[str, Any]) -> str:
    """An eval row is its own recipe: SHA-256 of the whole row's canonical JSON."""
    return sha256_hex(canonical_json(dict(row)))


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob (SHA-1 object format), so a file
    on disk and the same file in a commit name each other."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
