"""The runner file (`configs/runners.yaml`): labels and hardware (docs/matrix.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from governance.core import yamlsafe
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.matrix.locate import pydantic_violations, round_trip, schema_fields, tree_locator
from governance.matrix.masterfile import SourceFile
from governance.matrix.model import RunnerConfig, RunnerHardware
from governance.matrix.names import foreign_labels


@dataclass(frozen=True, slots=True)
class RunnerData:
    labels: dict[str, list[str]]
    hardware: dict[str, RunnerHardware]


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
    try:
        config = RunnerConfig.model_validate(raw)
    except ValidationError as exc:
        found = pydantic_violations(
            exc,
            path=path,
            owner="Runner config failed validation",
            locate=tree_locator(round_trip(text, path), default=(1, 1)),
            known_fields=schema_fields(RunnerConfig),
            code="GOV520",
        )
        return None, found
    sections = {"labels": list(config.labels), "hardware": list(config.hardware)}
    found = foreign_labels(text, path, sections, where)
    if found:
        return None, found
    return RunnerData(dict(config.labels), dict(config.hardware)), []
