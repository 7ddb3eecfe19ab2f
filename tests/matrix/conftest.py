"""Shared fixtures for the matrix engine tests (corpus clone, caches)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from governance.core.blockcache import BlockCache
from governance.matrix.catalog import Catalog
from governance.matrix.masterfile import SourceFile
from tests.harness import MASTER_FILES, RUNNER_FILE

from .corpus import git_show


@pytest.fixture(scope="session")
def corpus_repo(corpus_clone: Path) -> Path:
    """The session's read-only corpus clone (every branch local)."""
    return corpus_clone


@pytest.fixture(scope="session")
def block_cache(tmp_path_factory: pytest.TempPathFactory) -> BlockCache:
    return BlockCache(tmp_path_factory.mktemp("matrix-cache"))


@pytest.fixture(scope="session")
def catalog_at(corpus_repo: Path, block_cache: BlockCache) -> Callable[[str], Catalog]:
    """Catalog of the corpus at a revision (memoised per revision)."""
    memo: dict[str, Catalog] = {}

    def build(rev: str) -> Catalog:
        if rev not in memo:
            masters = [SourceFile(p, git_show(corpus_repo, rev, p)) for p in MASTER_FILES]
            runner = SourceFile(RUNNER_FILE, git_show(corpus_repo, rev, RUNNER_FILE))
            memo[rev] = Catalog(masters, runner, cache=block_cache)
        return memo[rev]

    return build
