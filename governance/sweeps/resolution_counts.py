"""What a dry run counts: the multi-node rows of a launch by how they resolve
(a script, a repository recipe, an external recipe, or why not)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from governance.sweeps.resolve import Resolved


@dataclass(slots=True)
class MultiNodeCounts:
    """How a plan's multi-node rows resolve (what `gov launch --dry-run` counts)."""

    scripts: int = 0  # run by a script of the repository
    recipes: int = 0  # a recipe of the repository, through the recipe runner
    external: int = 0  # a recipe of the srt-slurm checkout (`recipes/…`)
    unresolvable: dict[str, int] = field(default_factory=dict)  # reason -> rows
    runner_missing: dict[str, int] = field(default_factory=dict)  # runner -> recipe rows

    @property
    def resolved(self) -> int:
        return self.scripts + self.recipes

    @property
    def total(self) -> int:
        return self.resolved + self.external + sum(self.unresolvable.values())


def multinode_counts(resolved: Sequence[Resolved]) -> MultiNodeCounts:
    counts = MultiNodeCounts()
    for item in resolved:
        if not item.row.is_multinode:
            continue
        found = item.resolution
        if not item.ok or found is None:
            reason = found.reason if found is not None and found.reason else item.problem
            counts.unresolvable[reason] = counts.unresolvable.get(reason, 0) + 1
            continue
        if found.runner_missing:
            runner = found.runner_missing
            counts.runner_missing[runner] = counts.runner_missing.get(runner, 0) + 1
        if found.kind == "external":
            counts.external += 1
        elif found.kind == "recipe":
            counts.recipes += 1
        else:
            counts.scripts += 1
    return counts
