"""Multi-node rows -> what runs them: the reference's per-family selection as data
(docs/sweeps.md, 'Multi-node rows').

The reference spreads this over its launcher scripts: srt-slurm launchers
submit the recipe a row's `CONFIG_FILE` names, `gb200` has an llm-d wrapper
(and a legacy script when no `CONFIG_FILE` is set), `mi355x` runs its
disaggregated frameworks through `multi_node[/agentic]/…` scripts, `tilert` on
B200 has a script of its own. Here each family is one `MultiNodeRule`, the
first rule matching the row's hardware token and framework decides, and the
answer is known before anything launches.

Also here: how many nodes a row's prefill and decode workers need.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from governance.sweeps.identity import PlanRow, RowError

_NAME = "{model}_{precision}_{hw}"


@dataclass(frozen=True, slots=True)
class MultiNodeRule:
    """One launcher family's multi-node selection.

    `scripts` are name templates below the scripts folder (the single-node
    placeholders, first existing wins). A `recipe` rule runs the recipe the
    row's `CONFIG_FILE` names through `runner`; its `scripts`, if any, are
    what runs when the row sets no `CONFIG_FILE`. A script rule with a
    `recipe_folder` requires a `CONFIG_FILE` it names to exist there.
    """

    name: str
    hardware: str  # glob on the hardware token (`cluster:b200-dgxc` -> `b200`)
    framework: str = "*"  # glob on the row's framework
    scripts: tuple[str, ...] = ()
    recipe: bool = False
    runner: str = ""
    recipe_folder: str = ""

    def matches(self, hw: str, framework: str) -> bool:
        return fnmatch.fnmatchcase(hw, self.hardware) and fnmatch.fnmatchcase(
            framework, self.framework
        )


# The script a recipe row runs: the part of the reference's srt-slurm
# launchers that checks out srt-slurm and runs `srtctl apply` on CONFIG_FILE.
RECIPE_RUNNER = "multi_node/srt-slurm.sh"
SRT_SLURM = ("b200", "b300", "gb300", "h100", "h200")

DEFAULT_MULTINODE_RULES: tuple[MultiNodeRule, ...] = (
    MultiNodeRule(
        "b200-tilert", "b200", "tilert", scripts=(f"multi_node/{_NAME}_tilert-disagg.sh",)
    ),
    MultiNodeRule(
        "gb200-llm-d",
        "gb200",
        "llmd-*",
        scripts=(f"multi_node/{_NAME}_llmd-vllm-disagg.sh",),
        recipe_folder="multi_node/llm-d-recipes",
    ),
    MultiNodeRule(
        "gb200-srt-slurm",
        "gb200",
        recipe=True,
        runner=RECIPE_RUNNER,
        scripts=(f"multi_node/{_NAME}_{{framework}}.sh",),  # the legacy script, no CONFIG_FILE
    ),
    MultiNodeRule(
        "mi355x-disagg",
        "mi355x",
        "*-disagg",
        scripts=(f"multi_node/{{scenario=agentic:agentic/}}{_NAME}_{{framework}}.sh",),
    ),
    *(MultiNodeRule(f"{hw}-srt-slurm", hw, recipe=True, runner=RECIPE_RUNNER) for hw in SRT_SLURM),
)

# GPUs per node where a row does not say (GPUS_PER_NODE in additional-settings):
# Grace-Blackwell trays hold 4, the other machines 8 (configs/runners.yaml).
GPUS_PER_NODE: tuple[tuple[str, int], ...] = (("gb*", 4), ("*", 8))
EXTERNAL_PREFIX = "recipes/"  # the srt-slurm checkout's own recipes


def rule_for(rules: Sequence[MultiNodeRule], hw: str, framework: str) -> MultiNodeRule | None:
    return next((rule for rule in rules if rule.matches(hw, framework)), None)


def settings_of(row: PlanRow) -> dict[str, str]:
    """`KEY=VALUE` strings of both workers' additional-settings, prefill first
    (what the reference exports; the first of a name wins, as in `jobs`)."""
    out: dict[str, str] = {}
    for role in ("prefill", "decode"):
        worker = row.data.get(role)
        values = worker.get("additional-settings") if isinstance(worker, Mapping) else None
        for setting in values or []:
            name, sep, value = str(setting).partition("=")
            if sep:
                out.setdefault(name, value)
    return out


def recipe_problem(value: str) -> str:
    """Why a CONFIG_FILE value cannot name a file, or empty."""
    parts = value.split("/")
    if not value or value.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return f"CONFIG_FILE {value!r:.120} is not a relative path without '..'"
    if any(c in value for c in "\\\0\n"):
        return f"CONFIG_FILE {value!r:.120} holds a backslash, NUL or newline"
    return ""


def _int(row: PlanRow, what: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise RowError(f"{row.where}: {what} = {value!r:.40} is not a whole number")
    text = str(value)
    if not text.isdigit() or len(text) > 6:
        raise RowError(f"{row.where}: {what} = {value!r:.40} is not a whole number")
    return int(text)


def gpus_per_node(row: PlanRow, hw: str) -> int:
    given = settings_of(row).get("GPUS_PER_NODE")
    if given is not None:
        value = _int(row, "GPUS_PER_NODE", given)
        if value > 0:
            return value
    return next(n for pattern, n in GPUS_PER_NODE if fnmatch.fnmatchcase(hw, pattern))


def role_nodes(row: PlanRow, role: str, per_node: int) -> int:
    """Nodes one role needs: `<ROLE>_NODES` when the row sets it, else its
    workers' GPUs (max(TP x PP, EP) each) packed onto nodes."""
    given = settings_of(row).get(f"{role.upper()}_NODES")
    if given is not None:
        return _int(row, f"{role.upper()}_NODES", given)
    worker = row.data.get(role)
    if not isinstance(worker, Mapping):
        return 0
    workers = _int(row, f"{role}.num-worker", worker.get("num-worker", 1))
    tp = _int(row, f"{role}.tp", worker.get("tp", 1))
    pp = _int(row, f"{role}.pp", worker.get("pp", 1))
    ep = _int(row, f"{role}.ep", worker.get("ep", 1))
    return math.ceil(workers * max(tp * pp, ep) / per_node)


def node_count(row: PlanRow, hw: str) -> int:
    """Nodes the row's prefill and decode workers need together (at least 1)."""
    per_node = gpus_per_node(row, hw)
    return max(1, sum(role_nodes(row, role, per_node) for role in ("prefill", "decode")))
