"""Thin adapter: read the matrix engine's inputs from git and call the core.

This is the only matrix module that does I/O (git reads, the on-disk parse
cache). The CLI calls these functions; tests may call the core directly.
"""

from __future__ import annotations

from collections.abc import Sequence

from governance.core.blockcache import BlockCache, BlockPack
from governance.core.layout import Layout
from governance.core.state import StateLayout
from governance.git.repo import GitRepo
from governance.matrix.catalog import Catalog
from governance.matrix.expand import EvalMode, generate
from governance.matrix.masterfile import SourceFile
from governance.matrix.plan import PlanOptions, PlanResult, build_plan
from governance.matrix.row_builder import Filters


def default_cache(repo: GitRepo) -> BlockCache:
    """Parse cache inside the repository's git directory (never committed)."""
    return BlockPack(StateLayout(repo.git_dir).matrix_cache)


def layout_at(repo: GitRepo, commit: str, layout: Layout) -> Layout:
    """`layout` as `commit` keeps it (`Layout.at`: moved files followed)."""
    return layout.at(
        lambda path: repo.blob_id(commit, path) is not None, lambda: repo.file_paths(commit)
    )


def catalog_at(
    repo: GitRepo,
    rev: str,
    layout: Layout,
    cache: BlockCache | None = None,
    *,
    trusted: Catalog | None = None,
    trust_all: bool = False,
) -> Catalog:
    """Master configs and runner file as committed at `rev`, where `rev` keeps them."""
    commit = repo.resolve(rev)
    found = layout_at(repo, commit, layout)
    files = [SourceFile(path, repo.read_blob(commit, path)) for path in found.masters]
    return Catalog(
        files,
        SourceFile(found.runners, repo.read_blob(commit, found.runners)),
        cache=cache,
        trusted=trusted,
        trust_all=trust_all,
    )


def catalog_in_worktree(
    repo: GitRepo,
    layout: Layout,
    cache: BlockCache | None = None,
    *,
    staged: bool = False,
) -> Catalog:
    """Master configs and runner file as they are on disk (uncommitted edits),
    or as staged in the index (what the pre-commit hook must judge)."""
    read = repo.read_staged if staged else repo.read_worktree
    listing = repo.staged_paths if staged else lambda: repo.file_paths("HEAD")
    found = layout.at(lambda path: read(path) is not None, listing)
    sources = [SourceFile(path, read(path)) for path in found.masters]
    return Catalog(sources, SourceFile(found.runners, read(found.runners)), cache=cache)


def matrix_rows(
    catalog: Catalog,
    config_keys: Sequence[str],
    mode: EvalMode = EvalMode.DEFAULT,
    scenario_types: Sequence[str] | None = None,
) -> list[dict[str, object]]:
    """`gov matrix`: rows for the given keys/globs (raises MatrixError)."""
    filters = Filters(scenario_types=tuple(scenario_types) if scenario_types else None)
    return generate(catalog, config_keys, mode, filters)


def plan_between(
    repo: GitRepo,
    base_ref: str,
    head_ref: str,
    *,
    trim_conc: bool = False,
    evals_only: bool = False,
    all_evals: bool = False,
    layout: Layout,
    cache: BlockCache | None = None,
    validate_all: bool = True,
    trust_base: bool = False,
) -> PlanResult:
    """`gov plan`: the sweep for the changelog entries appended between two
    refs (`trust_base`: blocks unchanged since the base are not re-validated). Refs are echoed in `changelog_metadata` as given (like the
    reference); inputs are read at the resolved commits."""
    base = repo.resolve(base_ref)
    head = repo.resolve(head_ref)
    changelog_path = layout.changelog
    # The changelog's blobs, not `git diff` text: the same bytes `gov check`
    # reads, untouched by the repository's attributes, textconv or diff drivers.
    changelog = (repo.read_blob(base, changelog_path), repo.read_blob(head, changelog_path))
    options = PlanOptions(
        base_ref=base_ref,
        head_ref=head_ref,
        trim_conc=trim_conc,
        evals_only=evals_only,
        all_evals=all_evals,
        changelog_path=changelog_path,
        validate_all=validate_all,
    )
    # With trust_base, blocks unchanged since the base (validated when they
    # landed) are not re-validated; the default keeps the reference's rule
    # that one invalid block anywhere refuses the plan.
    # Each side as its own revision keeps the files: a branch forked before the
    # master configs moved is planned from where it has them.
    old = catalog_at(repo, base, layout, cache, trust_all=trust_base)
    new = catalog_at(repo, head, layout, cache, trusted=old if trust_base else None)
    return build_plan(changelog, new, options, old)
