"""Where the shared corpus lives and small helpers to read it.

The corpus (`../shared/corpus` next to the repository) is read in place and
never copied into the project; tests that need it skip when it is absent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from governance.matrix.catalog import Catalog, SourceFile
from tests.harness import CORPUS, MASTER_FILES, RUNNER_FILE

GOLDENS = CORPUS / "goldens" / "matrix"
BUNDLE = CORPUS / "inferencex.bundle"


def need(path: Path) -> Path:
    """Skip the calling test when a corpus file is missing."""
    if not path.exists():
        pytest.skip(f"corpus file not available: {path.resolve()}")
    return path


def load_json(path: Path) -> Any:
    return json.loads(need(path).read_text("utf-8"))


def git_show(repo: Path, rev: str, path: str) -> bytes | None:
    done = subprocess.run(
        ["git", "-C", str(repo), "show", f"{rev}:{path}"], capture_output=True, check=False
    )
    return done.stdout if done.returncode == 0 else None


def catalog_from_texts(files: dict[str, str]) -> Catalog:
    """Catalog from inline file texts (synthetic cases); absent files are missing."""

    def source(path: str) -> SourceFile:
        text = files.get(path)
        return SourceFile(path, None if text is None else text.encode("utf-8"))

    return Catalog([source(p) for p in MASTER_FILES], source(RUNNER_FILE))
