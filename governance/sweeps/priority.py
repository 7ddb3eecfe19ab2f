"""Launch order (pure): rows scored by the `priority` rules, canaries picked.

`prioritize` is a stable sort on the score (higher first): rows of one score
keep the plan's order, and every row comes out exactly once. A row's config
keys are found by its *config signature* (the fields one master-config block
fixes for all its rows), from the rows each key generates (`key_index`), so
the plan document itself needs no extra field. Slurm gets the order as
`--nice` (`nice_values`: the launch's top score is 0, each point below it
100 more; a non-root user can only raise nice). Docs: docs/sweeps.md,
'Priority, canary, fail-fast'.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any, TypeVar

from governance.core.settings_priority import PriorityRule

T = TypeVar("T")
NICE_PER_POINT = 100
MAX_NICE = 100_000  # far below Slurm's limit (2147483645); keeps a runaway score sane
SIGNATURE_FIELDS = (
    "image",
    "model",
    "model-prefix",
    "precision",
    "framework",
    "runner",
    "spec-decoding",
    "scenario-type",
)
Signature = tuple[str, ...]


def matches(rule: PriorityRule, keys: Collection[str], labels: Collection[str]) -> bool:
    if rule.config_keys and not any(
        fnmatchcase(key, glob) for key in keys for glob in rule.config_keys
    ):
        return False
    if rule.labels and not any(label in labels for label in rule.labels):
        return False
    return not any(label in labels for label in rule.unless_labels)


def score(keys: Collection[str], labels: Collection[str], rules: Sequence[PriorityRule]) -> float:
    """The row's score: the matching rules' `add`s, up to the first matching `set`."""
    total = 0.0
    for rule in rules:
        if not matches(rule, keys, labels):
            continue
        if rule.set is not None:
            return rule.set
        total += rule.add or 0.0
    return round(total, 6)


def prioritize(
    items: Sequence[T],
    keys_of: Callable[[T], Collection[str]],
    labels: Collection[str],
    rules: Sequence[PriorityRule],
) -> list[tuple[T, float]]:
    """`items` with their scores, highest first; ties keep their order."""
    scored = [(item, score(keys_of(item), labels, rules)) for item in items]
    return sorted(scored, key=lambda pair: -pair[1])  # sorted() is stable


def nice_values(scores: Iterable[float]) -> dict[float, int]:
    """Slurm `--nice` per score: 0 for the highest, more for lower ones."""
    distinct = set(scores)
    if not distinct:
        return {}
    top = max(distinct)
    return {s: min(MAX_NICE, round((top - s) * NICE_PER_POINT)) for s in distinct}


def canaries(items: Sequence[T], recipe_of: Callable[[T], str | None]) -> tuple[list[T], list[T]]:
    """(the first item of each recipe, the rest), both in `items`' order.
    Items without a recipe (eval rows) are never canaries: they go with the rest."""
    seen: set[str] = set()
    first: list[T] = []
    rest: list[T] = []
    for item in items:
        recipe = recipe_of(item)
        if recipe is not None and recipe not in seen:
            seen.add(recipe)
            first.append(item)
        else:
            rest.append(item)
    return first, rest


def config_signature(row: Mapping[str, Any]) -> Signature:
    return tuple(str(row.get(name, "")) for name in SIGNATURE_FIELDS)


def key_index(
    rows_by_key: Mapping[str, Iterable[Mapping[str, Any]]],
) -> dict[Signature, tuple[str, ...]]:
    """{config signature: the config keys whose rows have it}."""
    index: dict[Signature, list[str]] = {}
    for key, rows in rows_by_key.items():
        for signature in {config_signature(row) for row in rows}:
            index.setdefault(signature, []).append(key)
    return {signature: tuple(sorted(keys)) for signature, keys in index.items()}
