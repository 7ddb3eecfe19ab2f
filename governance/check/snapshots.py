"""What a check judges, read from the snapshot it names: a commit, the index
or the working tree (`HeadSource`), and the master configs and runner file
as that snapshot keeps them (`core.layout`). Shared by the check service, its
sweep preflight and the audit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

from governance.core.settings import Settings
from governance.git.repo import GitRepo

if TYPE_CHECKING:
    from governance.matrix.catalog import Catalog


class HeadSource(StrEnum):
    REF = "ref"
    WORKTREE = "worktree"
    STAGED = "staged"


def config_sources(
    repo: GitRepo, settings: Settings, source: HeadSource, commit: str | None
) -> list[tuple[str, bytes | None]]:
    """(path, bytes) of the master configs, then the runner file, as they are
    in the snapshot being judged (a commit, the working tree or the index),
    where that snapshot keeps them (`Layout.at`: a branch forked before the
    masters moved is judged against its own files)."""
    read = snapshot_reader(repo, source, commit)
    listing: Callable[[], list[str]]
    if source is HeadSource.REF and commit is not None:
        listing = functools.partial(repo.file_paths, commit)
    elif source is HeadSource.STAGED:
        listing = repo.staged_paths
    else:
        listing = functools.partial(repo.file_paths, "HEAD")
    found = settings.layout().at(lambda path: read(path) is not None, listing)
    return [(path, read(path)) for path in (*found.masters, found.runners)]


def snapshot_reader(
    repo: GitRepo, source: HeadSource, commit: str | None
) -> Callable[[str], bytes | None]:
    """Read a file of the snapshot being judged: a commit, the index or the working tree."""
    if source is HeadSource.REF and commit is not None:
        return functools.partial(repo.read_blob, commit)
    if source is HeadSource.STAGED:
        return repo.read_staged
    return repo.read_worktree


def catalog_of(
    repo: GitRepo,
    files: list[tuple[str, bytes | None]],
    *,
    trusted: Catalog | None = None,
    trust_all: bool = False,
) -> Catalog:
    from governance.matrix import sources
    from governance.matrix.catalog import Catalog
    from governance.matrix.masterfile import SourceFile

    *masters, runner = (SourceFile(path, data) for path, data in files)
    cache = sources.default_cache(repo)
    return Catalog(masters, runner, cache=cache, trusted=trusted, trust_all=trust_all)


def head_catalog(
    repo: GitRepo, settings: Settings, source: HeadSource, commit: str | None
) -> Catalog:
    """The master configs and runner file of the head snapshot being judged."""
    return catalog_of(repo, config_sources(repo, settings, source, commit))
