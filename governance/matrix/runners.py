"""The runner file (`configs/runners.yaml`): labels and hardware (docs/matrix.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governance.core import yamlsafe
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.matrix.locate import round_trip, tree_locator
from governance.matrix.masterfile import SourceFile
from governance.matrix.names import foreign_labels

_HARDWARE_FIELDS = ("available-cpu-dram-mib", "gpus-per-node")


@dataclass(frozen=True, slots=True)
class Hardware:
    """One runner label's machine (`hardware:` in the runner file)."""

    available_cpu_dram_mib: int
    gpus_per_node: int


@dataclass(frozen=True, slots=True)
class RunnerData:
    labels: dict[str, list[str]]
    hardware: dict[str, Hardware]


def parse_runner_file(source: SourceFile) -> tuple[RunnerData | None, list[Violation]]:
    """Validate the runner file. Returns the data or the violations."""
    path = source.path
    if source.data is None:
        return None, [violation("GOV520", f"Runner config file '{path}' does not exist.", path)]
    try:
        text = source.data.decode("utf-8")
        raw = yamlsafe.load(text)
    except UnicodeDecodeError as exc:
        return None, [violation("GOV520", f"{path} is not UTF-8: {exc}", path)]
    except yamlsafe.YamlLoadError as exc:
        problem = exc.problem
        return None, [
            violation("GOV520", f"{path}: {problem.message}", path, problem.line, problem.column)
        ]
    rt: Any = None

    def where(*loc: Any) -> tuple[int, int]:
        nonlocal rt
        if rt is None:
            rt = round_trip(text, path)
        return tree_locator(rt, default=(1, 1))(loc)

    labels = raw.get("labels") if isinstance(raw, dict) else None
    if not isinstance(labels, dict):
        line, column = where("labels")
        message = "Runner config must define a labels mapping"
        return None, [violation("GOV520", message, path, line, column)]
    for label, nodes in labels.items():
        message = ""
        if not isinstance(nodes, list):
            message = f"Runner config entry '{label}' must be a list, got {type(nodes).__name__}"
        elif not all(isinstance(node, str) for node in nodes):
            message = f"Runner config entry '{label}' must contain only strings"
        elif not nodes:
            message = f"Runner config entry '{label}' cannot be an empty list"
        if message:
            line, column = where("labels", label)
            return None, [violation("GOV520", message, path, line, column)]
    checked = _schema_checked(raw, text, path)
    if isinstance(checked, list):
        return None, checked
    labels_out, hardware = checked
    sections = {"labels": list(labels_out), "hardware": list(hardware)}
    found = foreign_labels(text, path, sections, where)
    if found:
        return None, found
    return RunnerData(labels_out, hardware), []


def _plain_hardware(raw: Any) -> dict[str, Hardware] | None:
    """The `hardware:` section when it is plainly valid (str labels, both
    fields positive ints, nothing else), else None: the schema judges it."""
    if type(raw) is not dict:
        return None
    out: dict[str, Hardware] = {}
    for label, machine in raw.items():
        if type(label) is not str or type(machine) is not dict:
            return None
        if set(machine) != set(_HARDWARE_FIELDS):
            return None
        values = [machine[name] for name in _HARDWARE_FIELDS]
        if not all(type(value) is int and value > 0 for value in values):
            return None
        out[label] = Hardware(*values)
    return out


def _schema_checked(
    raw: dict[Any, Any], text: str, path: str
) -> tuple[dict[str, list[str]], dict[str, Hardware]] | list[Violation]:
    """(labels, hardware) from the plain case, else from the pydantic schema,
    which words and locates what is wrong (then its violations)."""
    labels = raw["labels"]
    if set(raw) <= {"labels", "hardware"} and all(type(label) is str for label in labels):
        hardware = _plain_hardware(raw.get("hardware", {}))
        if hardware is not None:
            return dict(labels), hardware
    from pydantic import ValidationError

    from governance.matrix.locate import pydantic_violations, schema_fields
    from governance.matrix.model import RunnerConfig

    try:
        config = RunnerConfig.model_validate(raw)
    except ValidationError as exc:
        return pydantic_violations(
            exc,
            path=path,
            owner="Runner config failed validation",
            locate=tree_locator(round_trip(text, path), default=(1, 1)),
            known_fields=schema_fields(RunnerConfig),
            code="GOV520",
        )
    hardware = {
        label: Hardware(machine.available_cpu_dram_mib, machine.gpus_per_node)
        for label, machine in config.hardware.items()
    }
    return dict(config.labels), hardware
