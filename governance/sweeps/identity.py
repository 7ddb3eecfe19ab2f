"""What identifies a plan row for launching and reuse (pure: dicts in, data out).

A row's *recipe* is its fingerprint (SHA-256 of the row without conc/exp-name,
docs/matrix.md, 'Recipe fingerprints'), always recomputed from the row: a plan
document's field is checked, never trusted. An eval row is its own recipe.
A *point* is recipe + concurrency; a row's *identity* is its point plus the
digest of its harness (the files it runs, `sweeps.harness`): what reuse, the
ledger and the report compare (docs/sweeps.md, 'Row identity').
Values that end up in file names (fingerprints, exp-names, tokens of script
names) are validated here, so nothing a changelog or master config says can
steer a path.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from governance.core.fingerprint import (
    canonical_json,
    eval_recipe,
    plan_row_fingerprint,
    recipe_fingerprint,
    sha256_hex,
)

THROUGHPUT_SECTIONS = ("single_node", "multi_node")
EVAL_SECTIONS = ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals")
AGENTIC = "agentic-coding"

FINGERPRINT = re.compile(r"[0-9a-f]{64}")
# One path component: no separators, no leading dot (so never "." or ".."),
# nothing a shell or a file system would treat specially.
SAFE_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
# Fields that tell two rows of one config apart on a dashboard curve, besides
# conc: a "slot". Main can change a recipe (image, model, settings) while the
# slot stays the same; that is what "recipe changed by main" detects.
SLOT_FIELDS = (
    "model-prefix",
    "precision",
    "framework",
    "runner",
    "spec-decoding",
    "scenario-type",
    "isl",
    "osl",
    "tp",
    "pp",
    "dcp-size",
    "pcp-size",
    "ep",
    "dp-attn",
    "kv-offloading",
    "disagg",
)
WORKER_SLOT_FIELDS = ("num-worker", "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn")


class RowError(ValueError):
    """A row that cannot be launched safely; the message names the field."""


@dataclass(frozen=True, slots=True)
class PlanRow:
    """One row of a plan document and where it sits in it."""

    section: str  # single_node, multi_node, evals, ...
    bucket: str  # 1k1k, 8k1k, agentic; the section name for eval sections
    index: int  # position within its bucket (for messages)
    data: Mapping[str, Any]

    @property
    def where(self) -> str:
        if self.section in EVAL_SECTIONS:
            return f"{self.section}[{self.index}]"
        return f"{self.section}.{self.bucket}[{self.index}]"

    @property
    def is_eval(self) -> bool:
        return self.section in EVAL_SECTIONS

    @property
    def is_multinode(self) -> bool:
        return isinstance(self.data.get("prefill"), Mapping)

    @property
    def is_agentic(self) -> bool:
        return self.data.get("scenario-type") == AGENTIC or self.bucket == "agentic"

    @property
    def fingerprint(self) -> str | None:
        value = self.data.get("recipe-fingerprint")
        return value if isinstance(value, str) and value else None


def plan_rows(document: Mapping[str, Any]) -> list[PlanRow]:
    """Every row of a plan document, throughput sections first."""
    out: list[PlanRow] = []
    for section in THROUGHPUT_SECTIONS:
        buckets = document.get(section) or {}
        for bucket, rows in buckets.items():
            out.extend(PlanRow(section, bucket, i, row) for i, row in enumerate(rows))
    for section in EVAL_SECTIONS:
        out.extend(
            PlanRow(section, section, i, row) for i, row in enumerate(document.get(section) or [])
        )
    return out


def conc_label(row: PlanRow) -> str:
    """Concurrency as text: "64", or "4x8x16" for a multi-node conc list."""
    value = row.data.get("conc")
    values = value if isinstance(value, list) else [value]
    if not values or not all(type(v) is int and v > 0 for v in values):
        raise RowError(f"{row.where}: `conc` must be a positive integer (or a list of them)")
    return "x".join(str(v) for v in values)


def checked_fingerprint(row: PlanRow) -> str | None:
    """The row's fingerprint, refused unless it is 64 lowercase hex digits."""
    value = row.data.get("recipe-fingerprint")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not FINGERPRINT.fullmatch(value):
        raise RowError(
            f"{row.where}: `recipe-fingerprint` is not 64 lowercase hex digits: {value!r:.80}"
        )
    return value


@functools.lru_cache(maxsize=4096, typed=True)
def _token_text(raw: str | int | bool) -> str | None:
    """Pure on its argument, so memoised: plans repeat the same few values."""
    text = ("true" if raw else "false") if isinstance(raw, bool) else str(raw)
    return text if SAFE_TOKEN.fullmatch(text) else None


def safe_token(row: PlanRow, field: str, value: Any | None = None) -> str:
    """A row value that may become part of a file name, or RowError."""
    raw = row.data.get(field) if value is None else value
    text = _token_text(raw) if isinstance(raw, (str, int)) else None
    if text is None:
        raise RowError(
            f"{row.where}: `{field}` = {raw!r:.80} cannot be used in a file name "
            "(allowed: letters, digits, '.', '_', '+', '-'; no leading dot)"
        )
    return text


def eval_id(row: PlanRow) -> str:
    """Eval rows carry no fingerprint: name them by their content."""
    return eval_recipe(row.data)


def row_recipe(row: PlanRow) -> str:
    """The row's recipe, computed by gov: the fingerprint of a throughput row
    (RowError when the row's `recipe-fingerprint` field says otherwise: the
    row was edited after `gov plan`), the content id of an eval row."""
    if row.is_eval:
        return eval_id(row)
    given = checked_fingerprint(row)
    computed = plan_row_fingerprint(row.data, given)
    if computed is None:
        raise RowError(
            f"{row.where}: `recipe-fingerprint` {(given or '')[:16]}… does not match the "
            f"row's fields (gov computes {recipe_fingerprint(row.data)[:16]}…): the row was "
            "edited after `gov plan`, so its results would be filed under another recipe"
        )
    return computed


@dataclass(frozen=True, slots=True)
class RowIdentity:
    """Recipe + concurrency + harness digest: equal identities ran the same
    recipe, at the same point, with the same files."""

    recipe: str
    conc: str
    harness: str

    @property
    def digest(self) -> str:
        return sha256_hex(canonical_json([self.recipe, self.conc, self.harness]))


def job_key(row: PlanRow) -> str:
    """Unique within a launch; also the result folder below the results root."""
    fingerprint = checked_fingerprint(row)
    conc = conc_label(row)
    if fingerprint is None:
        return f"eval-{eval_id(row)[:16]}-conc{conc}"
    return f"{fingerprint[:16]}-conc{conc}"


def slot(row: PlanRow) -> tuple[Any, ...]:
    """The row's place on a dashboard curve, independent of its recipe details."""

    def freeze(value: Any) -> Any:
        return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value

    parts: list[Any] = [row.section, row.bucket]
    parts += [freeze(row.data.get(name)) for name in SLOT_FIELDS]
    for role in ("prefill", "decode"):
        worker = row.data.get(role)
        if isinstance(worker, Mapping):
            parts += [freeze(worker.get(name)) for name in WORKER_SLOT_FIELDS]
    parts.append(json.dumps(row.data.get("conc")))
    return tuple(parts)
