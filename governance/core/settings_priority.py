"""The `priority` setting: ordered rules over config-key globs and PR labels
(docs/sweeps.md, 'Priority, canary, fail-fast').

A rule matches a row when one of the row's config keys matches one of its
`config-keys` globs (no `config-keys`: every row), the PR carries one of its
`labels` (none given: no condition) and none of its `unless-labels`. Rules
apply in order: a matching rule with `add` adds to the row's score, a matching
rule with `set` fixes the score and ends the walk. Higher scores run sooner.

The defaults are InferenceX's `configs/ci-priority.yaml` (base score 1.0,
adjustments per model family, precision, speculative decoding, framework,
multi-node and agentic; patchwork labels score 0 unless waived), read over
config keys: see DEFAULT_PRIORITY_RULES.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from governance.core.diagnostics import UsageError

MAX_RULES = 256
MAX_SCORE = 1e6
RULE_KEYS = {"config-keys", "labels", "unless-labels", "add", "set", "name"}
EXAMPLE = '[[tool.gov.priority]] config-keys = ["kimik3-*"], add = 1.5'


@dataclass(frozen=True, slots=True)
class PriorityRule:
    """One rule; exactly one of `add` / `set` is given."""

    name: str
    config_keys: tuple[str, ...] = ()  # globs; empty: every row
    labels: tuple[str, ...] = ()  # one of them must be on the PR; empty: no condition
    unless_labels: tuple[str, ...] = ()  # none of them may be on the PR
    add: float | None = None
    set: float | None = None


def _rule(name: str, keys: tuple[str, ...] = (), add: float = 0.0) -> PriorityRule:
    return PriorityRule(name, config_keys=keys, add=add)


# InferenceX configs/ci-priority.yaml (runners bundle, main 2026-08-21), in order:
# `labels.patchwork` (score 0 unless waived) first, then `base-score` and each
# adjustment a config key shows. Multi-node is a disaggregated config
# (`*-disagg*`), agentic an `*-agentic*` key; the `push` event and
# `checklist-complete` label adjustments are the CI event's, not a row's.
DEFAULT_PRIORITY_RULES: tuple[PriorityRule, ...] = (
    PriorityRule(
        "patchwork",
        labels=("ci-patchwork", "engine-patch"),
        unless_labels=("ci-patchwork-waived",),
        set=0.0,
    ),
    _rule("base-score", add=1.0),
    _rule("multi-node", ("*-disagg*",), 1.25),
    _rule("agentic", ("*-agentic*",), 1.0),
    _rule("fp4", ("*-fp4-*",), 0.75),
    _rule("spec-decoding", ("*-mtp", "*-mtp-*", "*-eagle*"), 0.75),
    _rule("framework", ("*-sglang*", "*-vllm*", "*-dynamo-sglang*", "*-dynamo-vllm*"), 0.5),
    _rule("kimik3", ("kimik3-*",), 1.5),
    _rule(
        "model-family",
        tuple(
            f"{family}-*"
            for family in ("glm5", "glm5.1", "kimik2.5", "dsv4", "minimaxm3", "qwen3.5", "dsr1")
        ),
        0.75,
    ),
)


def _strings(value: Any, key: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"{where}: `priority.{key}` must be a list of strings", EXAMPLE)
    return tuple(value)


def _number(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"{where}: `priority.{key}` must be a number", EXAMPLE)
    number = float(value)
    if not math.isfinite(number) or abs(number) > MAX_SCORE:
        raise UsageError(f"{where}: `priority.{key}` must be a finite number", EXAMPLE)
    return number


def parse_rules(value: Any, key: str, where: str) -> tuple[PriorityRule, ...]:
    """A list of tables (from the environment: the same as JSON) as rules."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = None
    if not isinstance(value, list) or len(value) > MAX_RULES:
        raise UsageError(
            f"{where}: `{key}` must be a list of tables (at most {MAX_RULES})", EXAMPLE
        )
    rules = []
    for number, table in enumerate(value, 1):
        if not isinstance(table, dict):
            raise UsageError(f"{where}: `{key}` rule {number} must be a table", EXAMPLE)
        unknown = sorted(set(table) - RULE_KEYS)
        if unknown:
            raise UsageError(
                f"{where}: `{key}` rule {number}: unknown field {unknown[0]!r}",
                "fields: " + ", ".join(sorted(RULE_KEYS)),
            )
        if ("add" in table) == ("set" in table):
            raise UsageError(
                f"{where}: `{key}` rule {number} needs exactly one of add, set", EXAMPLE
            )
        name = table.get("name", f"rule {number}")
        if not isinstance(name, str) or not name:
            raise UsageError(f"{where}: `{key}` rule {number}: name must be a string", EXAMPLE)
        rules.append(
            PriorityRule(
                name,
                config_keys=_strings(table.get("config-keys", []), "config-keys", where),
                labels=_strings(table.get("labels", []), "labels", where),
                unless_labels=_strings(table.get("unless-labels", []), "unless-labels", where),
                add=_number(table["add"], "add", where) if "add" in table else None,
                set=_number(table["set"], "set", where) if "set" in table else None,
            )
        )
    return tuple(rules)
