"""The config keys of a plan's rows, for the `priority` rules.

A plan row does not name its master-config key (the reference's document has
no such field), so the keys its entries select are expanded again in the
tree the rows run from and indexed by config signature
(`sweeps.priority.key_index`). Then the launch schedule of `gov launch` and
of prepare-merge's sweep (docs/sweeps.md, 'Priority, canary, fail-fast').
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from governance.core.diagnostics import GovError
from governance.core.settings import Settings
from governance.matrix.catalog import Catalog
from governance.matrix.expand import EvalMode, generate
from governance.sweeps.priority import Signature, key_index
from governance.sweeps.schedule import Schedule

MAX_PATTERNS = 10_000


def entry_patterns(document: Mapping[str, Any]) -> list[str]:
    """The config-key patterns of the entries a plan was made from."""
    meta = document.get("changelog_metadata")
    entries = meta.get("entries") if isinstance(meta, Mapping) else None
    out: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        keys = entry.get("config-keys") if isinstance(entry, Mapping) else None
        out.extend(k for k in keys or [] if isinstance(k, str))
    return list(dict.fromkeys(out))[:MAX_PATTERNS]


def row_keys(
    catalog: Catalog, document: Mapping[str, Any]
) -> tuple[dict[Signature, tuple[str, ...]], str]:
    """({config signature: keys}, "") or ({}, why the keys are unknown)."""
    try:
        keys = catalog.resolve_globs(entry_patterns(document))
        rows = {
            key: generate(catalog, [key], EvalMode.NO_EVALS, validate_all=False) for key in keys
        }
    except GovError as exc:
        return {}, str(exc)
    return key_index(rows), ""


def schedule(
    settings: Settings,
    keys: Mapping[Signature, tuple[str, ...]],
    labels: Collection[str] = (),
    *,
    canary: bool = False,
    fail_fast: bool = False,
) -> Schedule:
    """The launch schedule the settings' `priority` rules and the flags ask for."""
    return Schedule(
        tuple(settings.priority), frozenset(labels), dict(keys), canary=canary, fail_fast=fail_fast
    )
