"""Output rows in the output schema's order and defaults, without pydantic (pure).

A plan normalises every row it emits: keys in the output schema's order,
defaults filled in, absent optionals left out. The schema is the pydantic
models of `output`, but building them costs a plan about a tenth of a
second, and the rows come from gov's own row builder with values of exactly
the declared types. `plain_row` reorders such a row from the tables below;
a row it cannot vouch for (an unknown key, a missing field, a value of
another type) is None, and `normalise_row` hands it to the models.
The tables are the models' fields: tests/matrix/test_row_fields.py derives
them from the models and compares, and compares both normalisations on
every row of the corpus goldens.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

REQUIRED = object()
# Kinds: str, int, bool, list[int], list[str]; `worker`, `router`, `backend`
# are nested rows; `agentic` is the literal scenario type. `?` admits None.
Field = tuple[str, str, Any]  # (kebab-case key, kind, default or REQUIRED)

_HEAD: tuple[Field, ...] = (
    ("image", "str", REQUIRED),
    ("model", "str", REQUIRED),
    ("model-prefix", "str", REQUIRED),
    ("precision", "str", REQUIRED),
    ("framework", "str", REQUIRED),
)
ROUTER: tuple[Field, ...] = (("name", "str", REQUIRED), ("version", "str", REQUIRED))
BACKEND: tuple[Field, ...] = (("name", "str", REQUIRED), ("version", "str?", None))
WORKER: tuple[Field, ...] = (
    ("num-worker", "int", REQUIRED),
    ("tp", "int", REQUIRED),
    ("pp", "int", 1),
    ("dcp-size", "int", 1),
    ("pcp-size", "int", 1),
    ("ep", "int", REQUIRED),
    ("dp-attn", "bool", REQUIRED),
    ("hardware", "str?", None),
    ("additional-settings", "list[str]", ()),
)
# A single-node row's parallelism (multi-node rows give it per worker).
_TOPOLOGY: tuple[Field, ...] = (
    ("tp", "int", REQUIRED),
    ("pp", "int", REQUIRED),
    ("dcp-size", "int", REQUIRED),
    ("pcp-size", "int", REQUIRED),
    ("ep", "int", REQUIRED),
    ("dp-attn", "bool", REQUIRED),
)
# What fixed-sequence rows share before their topology, and after their concurrency.
_FIXED_HEAD: tuple[Field, ...] = (
    *_HEAD,
    ("spec-decoding", "str", REQUIRED),
    ("runner", "str", REQUIRED),
    ("isl", "int", REQUIRED),
    ("osl", "int", REQUIRED),
)
_FIXED_RUN: tuple[Field, ...] = (
    ("max-model-len", "int", REQUIRED),
    ("exp-name", "str", REQUIRED),
    ("disagg", "bool", REQUIRED),
    ("run-eval", "bool", REQUIRED),
    ("eval-only", "bool", False),
)
SINGLE_NODE: tuple[Field, ...] = (
    *_FIXED_HEAD,
    *_TOPOLOGY,
    ("conc", "int", REQUIRED),
    *_FIXED_RUN,
    ("router", "router?", None),
    ("recipe-fingerprint", "str?", None),
)
MULTI_NODE: tuple[Field, ...] = (
    *_FIXED_HEAD,
    ("prefill", "worker", REQUIRED),
    ("decode", "worker", REQUIRED),
    ("conc", "list[int]", REQUIRED),
    *_FIXED_RUN,
    ("eval-conc", "int?", None),
    ("eval-all-concs", "bool", False),
    ("router", "router?", None),
    ("kv-p2p-transfer", "str?", None),
    ("recipe-fingerprint", "str?", None),
)
AGENTIC_ROW: tuple[Field, ...] = (
    *_HEAD,
    ("runner", "str", REQUIRED),
    *_TOPOLOGY,
    ("spec-decoding", "str", REQUIRED),
    ("conc", "int", REQUIRED),
    ("kv-offloading", "str", REQUIRED),
    ("kv-offload-backend", "backend?", None),
    ("router", "router?", None),
    ("total-cpu-dram-gb", "int", REQUIRED),
    ("duration", "int", REQUIRED),
    ("exp-name", "str", REQUIRED),
    ("scenario-type", "agentic", REQUIRED),
    ("run-eval", "bool?", None),
    ("eval-only", "bool?", None),
    ("recipe-fingerprint", "str?", None),
)
MULTI_NODE_AGENTIC: tuple[Field, ...] = (
    *_HEAD,
    ("spec-decoding", "str", REQUIRED),
    ("runner", "str", REQUIRED),
    ("prefill", "worker", REQUIRED),
    ("decode", "worker", REQUIRED),
    ("conc", "list[int]", REQUIRED),
    ("kv-offloading", "str", REQUIRED),
    ("kv-offload-backend", "backend?", None),
    ("router", "router?", None),
    ("kv-p2p-transfer", "str?", None),
    ("total-cpu-dram-gb", "int", REQUIRED),
    ("duration", "int", REQUIRED),
    ("exp-name", "str", REQUIRED),
    ("disagg", "bool", REQUIRED),
    ("scenario-type", "agentic", REQUIRED),
    ("run-eval", "bool?", None),
    ("eval-only", "bool?", None),
    ("eval-conc", "int?", None),
    ("recipe-fingerprint", "str?", None),
)
_NESTED = {"worker": WORKER, "router": ROUTER, "backend": BACKEND}
_AGENTIC = "agentic-coding"


def _value(kind: str, value: Any) -> tuple[bool, Any]:
    """(vouched for, the value as the model dumps it) for a non-None value."""
    kind = kind.rstrip("?")
    if kind in _NESTED:
        nested = _plain(_NESTED[kind], value)
        return nested is not None, nested
    if kind in ("list[int]", "list[str]"):
        item = int if kind == "list[int]" else str
        ok = type(value) is list and all(type(v) is item for v in value)
        return ok, list(value) if ok else None
    if kind == "agentic":
        return value == _AGENTIC and type(value) is str, value
    return type(value) is {"str": str, "int": int, "bool": bool}[kind], value


@functools.cache
def _names(fields: tuple[Field, ...]) -> frozenset[str]:
    return frozenset(name for name, _kind, _default in fields)


def _plain(fields: tuple[Field, ...], row: Any) -> dict[str, Any] | None:
    if type(row) is not dict or not _names(fields).issuperset(row):
        return None
    out: dict[str, Any] = {}
    for name, kind, default in fields:
        if name not in row:
            if default is REQUIRED:
                return None
            if default is not None:
                out[name] = list(default) if isinstance(default, tuple) else default
            continue
        value = row[name]
        if value is None:
            if not kind.endswith("?"):
                return None
            continue  # the model leaves None out
        ok, dumped = _value(kind, value)
        if not ok:
            return None
        out[name] = dumped
    return out


def row_kind(row: Mapping[str, Any]) -> tuple[bool, bool]:
    """Which output schema a row belongs to: (agentic, multi-node)."""
    return row.get("scenario-type") == _AGENTIC, row.get("prefill") is not None


_TABLES = {
    (False, False): SINGLE_NODE,
    (False, True): MULTI_NODE,
    (True, False): AGENTIC_ROW,
    (True, True): MULTI_NODE_AGENTIC,
}


def plain_row(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """`row` in its schema's order with defaults, or None when the models must judge it."""
    return _plain(_TABLES[row_kind(row)], row) if type(row) is dict else None


def normalise_row(row: dict[str, Any]) -> dict[str, Any]:
    """The output schema's key order and defaults: the plain way when it can
    vouch for the row, else the models (which also reject a malformed one)."""
    plain = plain_row(row)
    if plain is not None:
        return plain
    from governance.matrix.output import model_row

    return model_row(row, row_kind(row))
