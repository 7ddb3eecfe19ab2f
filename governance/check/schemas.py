"""JSON Schemas generated from the pydantic models (written to `schemas/`).

Editors pick them up through their own settings that map a schema to a file
(VS Code: `yaml.schemas`; README "Editor support"), never through a first line
in the changelog, which would change its history bytes. `gov schema --check`
fails when a committed schema is missing or drifts from the models.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def _changelog_schema() -> dict[str, Any]:
    from governance.changelog.model import ChangelogEntry

    entry = ChangelogEntry.model_json_schema(by_alias=True)
    defs = entry.pop("$defs", {})
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "perf-changelog.yaml",
        "description": "Append-only list of changes that affect benchmark results.",
        "type": "array",
        "items": {"$ref": "#/$defs/ChangelogEntry"},
        "$defs": {**defs, "ChangelogEntry": entry},
    }
    return schema


def _entry_schema() -> dict[str, Any]:
    from governance.changelog.model import ChangelogEntry

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **ChangelogEntry.model_json_schema(by_alias=True),
    }


def _extra_schemas() -> dict[str, Callable[[], dict[str, Any]]]:
    """Schemas of the matrix engine: master configs, runners, the plan document."""
    from governance.matrix.master_entry import (
        MultiNodeMasterConfigEntry,
        SingleNodeMasterConfigEntry,
    )
    from governance.matrix.model import RunnerConfig
    from governance.matrix.output import PlanDocument

    models: dict[str, type[BaseModel]] = {
        "matrix-master-config-single-node.schema.json": SingleNodeMasterConfigEntry,
        "matrix-master-config-multi-node.schema.json": MultiNodeMasterConfigEntry,
        "matrix-runners.schema.json": RunnerConfig,
        "matrix-plan.schema.json": PlanDocument,
    }
    return {
        name: functools.partial(model.model_json_schema, by_alias=True)
        for name, model in models.items()
    }


def generators() -> dict[str, Callable[[], dict[str, Any]]]:
    return {
        "perf-changelog.schema.json": _changelog_schema,
        "changelog-entry.schema.json": _entry_schema,
        **_extra_schemas(),
    }


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in generators().items():
        target = directory / name
        text = render(make())
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            tmp = target.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(target)  # atomic: never a half-written schema
            written.append(target)
    return written


MISSING = "missing"
OUT_OF_DATE = "out of date with the models"


def drift(directory: Path) -> dict[str, str]:
    """{name: MISSING or OUT_OF_DATE} of the schemas that are not as the models
    generate them (every one is missing when the folder is)."""
    stale = {}
    for name, make in generators().items():
        target = directory / name
        if not target.is_file():
            stale[name] = MISSING
        elif target.read_text(encoding="utf-8") != render(make()):
            stale[name] = OUT_OF_DATE
    return stale
