"""Shared fixtures for the matrix engine tests (corpus clone, caches)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.core.blockcache import BlockCache
from governance.matrix.catalog import MASTER_FILES, RUNNER_FILE, Catalog
from governance.matrix.masterfile import SourceFile

from .corpus import BUNDLE, git_show, need


@pytest.fixture(scope="session")
def corpus_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch clone of the corpus bundle with every branch fetched."""
    need(BUNDLE)
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    target = tmp_path_factory.mktemp("corpus") / "inferencex"
    subprocess.run(["git", "clone", "-q", str(BUNDLE), str(target)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(target),
            "fetch",
            "-q",
            "--update-head-ok",
            "origin",
            "+refs/heads/*:refs/heads/*",
        ],
        check=True,
    )
    return target


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
