"""The committed JSON Schemas under schemas/ match the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.check.schemas import generators


def json_schemas() -> dict[str, dict]:
    return {name: make() for name, make in generators().items() if name.startswith("matrix-")}


SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


@pytest.mark.parametrize("name", sorted(json_schemas()))
def test_schema_file_is_current(name: str) -> None:
    committed = json.loads((SCHEMAS / name).read_text("utf-8"))
    assert committed == json_schemas()[name], f"regenerate schemas/{name}: gov schema --write"
