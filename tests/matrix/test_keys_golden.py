"""Every config key of corpus `main`, every eval mode: rows equal the goldens
exactly (row order, conc order and key order inside rows)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.core import yamlsafe
from governance.matrix.catalog import Catalog, SourceFile
from governance.matrix.expand import EvalMode, generate
from tests.harness import MASTER_FILES, RUNNER_FILE

from .corpus import GOLDENS, git_show

KEY_FILES = sorted((GOLDENS / "keys").glob("*.json")) if (GOLDENS / "keys").is_dir() else []


@pytest.fixture(scope="module")
def main_catalog(catalog_at: Callable[[str], Catalog]) -> Catalog:
    catalog = catalog_at("main")
    assert catalog.violations() == []
    return catalog


def test_golden_keys_present() -> None:
    if not KEY_FILES:
        pytest.skip(f"per-key goldens not available under {GOLDENS.resolve()}")
    assert len(KEY_FILES) == 208


def test_golden_key_set_matches_master(main_catalog: Catalog) -> None:
    if not KEY_FILES:
        pytest.skip("per-key goldens not available")
    golden_keys = {json.loads(path.read_text("utf-8"))["key"] for path in KEY_FILES}
    assert golden_keys == set(main_catalog.keys)


@pytest.mark.corpus
@pytest.mark.parametrize("path", KEY_FILES, ids=[p.stem for p in KEY_FILES])
def test_key_rows_equal_golden(path: Path, main_catalog: Catalog) -> None:
    golden = json.loads(path.read_text("utf-8"))
    for mode_name, expected in golden["modes"].items():
        assert not isinstance(expected, dict), f"golden records an error: {expected}"
        rows = generate(main_catalog, [golden["key"]], EvalMode(mode_name))
        # json text equality: also pins the key order inside each row
        assert json.dumps(rows) == json.dumps(expected), f"{golden['key']} / {mode_name}"


@pytest.mark.corpus
def test_block_split_parse_equals_whole_file_parse(corpus_repo: Path) -> None:
    """The per-key byte-span split must give exactly the whole-file data."""
    for path in MASTER_FILES:
        data = git_show(corpus_repo, "main", path)
        assert data is not None
        catalog = Catalog([SourceFile(path, data)], SourceFile(RUNNER_FILE, None))
        whole = yamlsafe.load(data.decode("utf-8"))
        assert catalog.keys == list(whole)
        assert {key: catalog.raw(key) for key in catalog.keys} == whole
