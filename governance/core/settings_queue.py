"""The `queue` setting: `[tool.gov.queue]`, how `gov queue` runs on GitHub (docs/queue.md).

Read like every setting from main's tip (a PR cannot change how it is queued)
and validated when read: an unknown key, a priority that is not high, normal
or low, or a negative `max-cars` is a usage error naming the file and the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from governance.core.diagnostics import UsageError
from governance.core.suggest import did_you_mean

QueuePriority = Literal["high", "normal", "low"]
_PRIORITIES: tuple[QueuePriority, ...] = ("high", "normal", "low")
_EXAMPLE = (
    '[tool.gov.queue] label = "gov-queue", max-cars = 5, required-checks = ["check-changelog"],'
    ' dequeue-on-push = true, priorities = {queue-high = "high"}'
)


@dataclass(frozen=True, slots=True)
class QueueSettings:
    label: str = "gov-queue"  # the label that asks for a PR to be queued
    # (label, priority) pairs: a queued PR carrying the label gets that priority.
    priorities: tuple[tuple[str, QueuePriority], ...] = ()
    max_cars: int = 0  # cars one `gov queue run` pass lands at most (0: no limit)
    required_checks: tuple[str, ...] = ("check-changelog",)
    dequeue_on_push: bool = True  # a push after enqueue takes the car out

    def priority_of(self, labels: tuple[str, ...]) -> QueuePriority | None:
        """The highest priority the PR's labels map to (None: no such label)."""
        found = [p for label, p in self.priorities if label in labels]
        return min(found, key=_PRIORITIES.index) if found else None


_KEYS = ("label", "priorities", "max-cars", "required-checks", "dequeue-on-push")


def parse_queue(value: Any, key: str, where: str) -> QueueSettings:
    """`[tool.gov.queue]` (a `GOV_QUEUE` variable: the same table as JSON)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = None
    if not isinstance(value, dict):
        raise UsageError(f"{where}: `{key}` must be a table", f"e.g. {_EXAMPLE}")
    for name in value:
        if name not in _KEYS:
            hint = did_you_mean(name, _KEYS, limit=1) or "known keys: " + ", ".join(_KEYS)
            raise UsageError(f"{where}: unknown setting `{key}.{name}`", hint)

    def fail(name: str, why: str, example: str) -> UsageError:
        return UsageError(f"{where}: `{key}.{name}` {why}", f"e.g. {name} = {example}")

    default = QueueSettings()
    label = value.get("label", default.label)
    if not isinstance(label, str) or not label.strip() or any(ord(c) < 32 for c in label):
        raise fail("label", "must be a non-empty label name", '"gov-queue"')
    table = value.get("priorities", {})
    if not isinstance(table, dict):
        raise fail("priorities", "must be a table of label = priority", '{queue-high = "high"}')
    priorities: list[tuple[str, QueuePriority]] = []
    for name, level in table.items():
        if level not in _PRIORITIES:
            raise fail(f"priorities.{name}", "must be high, normal or low", '"high"')
        priorities.append((str(name), level))
    cars = value.get("max-cars", 0)
    if type(cars) is not int or cars < 0:
        raise fail("max-cars", "must be a whole number >= 0 (0: no limit)", "5")
    checks = value.get("required-checks", list(default.required_checks))
    if not isinstance(checks, list) or not all(isinstance(c, str) and c for c in checks):
        raise fail("required-checks", "must be a list of check names", '["check-changelog"]')
    dequeue = value.get("dequeue-on-push", True)
    if not isinstance(dequeue, bool):
        raise fail("dequeue-on-push", "must be true or false", "true")
    return QueueSettings(label, tuple(priorities), cars, tuple(checks), dequeue)
