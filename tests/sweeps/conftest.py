"""Fixtures for the sweeps tests: plan rows, scripts folders, example repos."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from governance.core.fingerprint import recipe_fingerprint
from tests.harness import PROJECT

SCRIPTS = PROJECT / "launch" / "benchmarks"


def fingerprint_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _with_changes(row: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`row` with `changes`, fingerprinted from its recipe (everything but
    `conc` and `exp-name`) unless the changes name a fingerprint."""
    row.update(changes)
    if "recipe-fingerprint" not in changes:
        row.pop("recipe-fingerprint", None)
        row["recipe-fingerprint"] = recipe_fingerprint(row)
    return row


def make_row(**changes: Any) -> dict[str, Any]:
    """A single-node fixed-seq row shaped like the plan's (fingerprint from `recipe`)."""
    row: dict[str, Any] = {
        "image": "lmsysorg/sglang:v0.5.12",
        "model": "deepseek-ai/DeepSeek-R1-0528",
        "model-prefix": "dsr1",
        "precision": "fp8",
        "framework": "sglang",
        "spec-decoding": "none",
        "runner": "mi300x",
        "isl": 1024,
        "osl": 1024,
        "tp": 8,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 1,
        "dp-attn": False,
        "conc": 4,
        "max-model-len": 2304,
        "exp-name": "dsr1_1k1k",
        "disagg": False,
        "run-eval": False,
    }
    return _with_changes(row, changes)


def plan_of(
    rows: list[dict[str, Any]], evals: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "single_node": {"1k1k": rows} if rows else {},
        "multi_node": {},
        "evals": evals or [],
        "agentic_evals": [],
        "multinode_evals": [],
        "multinode_agentic_evals": [],
        "changelog_metadata": {"base_ref": "a", "head_ref": "b", "entries": []},
    }


def write_script(folder: Path, relative: str, body: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nset -eu\n" + body)
    path.chmod(0o755)
    return path


@pytest.fixture
def scripts_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "scripts"
    folder.mkdir()
    return folder


def make_multinode_row(
    prefill: list[str] | None = None, decode: list[str] | None = None, **changes: Any
) -> dict[str, Any]:
    """A disaggregated multi-node row shaped like the plan's: one prefill and
    one decode worker of TP8, `additional-settings` per role, a conc list."""

    def worker(settings: list[str] | None) -> dict[str, Any]:
        return {
            "num-worker": 1,
            "tp": 8,
            "pp": 1,
            "dcp-size": 1,
            "pcp-size": 1,
            "ep": 1,
            "dp-attn": False,
            "additional-settings": settings or [],
        }

    row: dict[str, Any] = {
        "image": "lmsysorg/sglang:v0.5.16-rocm720-mi35x",
        "model": "deepseek-ai/DeepSeek-R1-0528",
        "model-prefix": "dsr1",
        "precision": "fp8",
        "framework": "sglang-disagg",
        "spec-decoding": "none",
        "runner": "mi355x-disagg",
        "isl": 1024,
        "osl": 1024,
        "prefill": worker(prefill),
        "decode": worker(decode),
        "conc": [4, 8],
        "max-model-len": 2304,
        "exp-name": "dsr1_1k1k",
        "disagg": True,
        "run-eval": False,
    }
    return _with_changes(row, changes)
