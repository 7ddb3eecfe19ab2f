"""The settings of one side of a repository: the one place gov loads them.

A command reads its settings from the side it trusts for the question:

* `worktree_settings`  - the checkout's files (commands that act on the
  checkout: `gov add`, `gov init`, the merge driver, `gov launch`, results);
* `revision_settings`  - one revision's blobs (the base of a check or a plan);
* `main_settings`      - main's tip (prepare-merge: never the branch checked out).

Each applies the same layers in the same order: the settings files of that
side, then `GOV_*`, then the command's flags; and infers the `repository`
slug the same way (main's changelog links, else the `upstream` remote, else
`origin`). Domain functions take the `Settings` these return and keep no
path default of their own; where a revision keeps the files is
`Settings.layout().at(...)` (`check.snapshots.config_sources`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from governance.core.diagnostics import UsageError
from governance.core.settings import Settings, load_settings
from governance.git.mainref import main_ref
from governance.git.repo import GitRepo

Overrides = Mapping[str, Any] | None


def worktree_settings(
    repo: GitRepo, overrides: Overrides = None, *, infer_repository: bool = True
) -> Settings:
    """The checkout's settings. `infer_repository=False` skips the slug
    inference (the hook's skip decision only needs the paths)."""
    if not infer_repository:
        return load_settings(repo.root, overrides=overrides)
    return load_settings(
        repo.root,
        remote_url=repo.remotes.url,  # asked only when the changelog's links do not say
        read_changelog=lambda path, main: landed_changelog(repo, path, main),
        overrides=overrides,
    )


def revision_settings(
    repo: GitRepo, revision: str, label: str, overrides: Overrides = None
) -> Settings:
    """The settings files as `revision` has them (`label` names it in
    messages, e.g. "base 1a2b3c4d5e:"); the environment and flags still override."""
    return load_settings(
        repo.root,
        remote_url=repo.remotes.url,  # asked only when the changelog's links do not say
        read_changelog=lambda path, main: landed_changelog(repo, path, main),
        overrides=overrides,
        read_file=lambda name: repo.read_blob(revision, name),
        label=label,
    )


def main_settings(
    repo: GitRepo,
    main_branch: str,
    overrides: Overrides = None,
    *,
    remote: str | None = "origin",
    local: bool = True,
) -> Settings:
    """The settings as main's tip has them (main found by `main_ref`, with
    `remote`/`local` as it takes them); when main's files name another
    `main-branch`, main by that name."""
    main = main_ref(repo, main_branch, remote=remote, local=local)
    settings = revision_settings(repo, main.sha, f"{main.label}:", overrides)
    if settings.main_branch != main_branch:
        other = main_ref(repo, settings.main_branch, remote=remote, local=local)
        settings = revision_settings(repo, other.sha, f"{other.label}:", overrides)
    return settings


def landed_changelog(repo: GitRepo, path: str, main_branch: str) -> bytes | None:
    """The changelog as main has it (its links were written at merge time),
    else as HEAD has it; None in an empty repository."""
    try:
        commit = main_ref(repo, main_branch).sha
    except UsageError:
        commit = repo.ref_sha("HEAD") or ""
    return repo.read_blob(commit, path) if commit else None


def boot_main_branch(repo: GitRepo, named: str | None) -> str:
    """The main branch that finds the base before any trusted settings are
    read: `named` (the flag, else `GOV_MAIN_BRANCH`), else "main" when it
    exists, else the branch `origin/HEAD` names (the forge's default branch),
    else the checkout's `main-branch` when a local branch of that name exists
    and its own tip's settings name it too. Only a local branch: in CI every
    branch of the repository is remote-tracking, so a PR that names its own
    branch main finds nothing; there the base is named anyway (`--base-ref`,
    the README's command)."""
    if named:
        return named
    default = "main"
    try:
        main_ref(repo, default)
        return default
    except UsageError:
        pass
    forge_default = repo.remotes.default_branch()
    if forge_default:
        return forge_default
    try:
        claimed = load_settings(repo.root).main_branch
    except UsageError:
        return default
    if claimed == default:
        return default
    try:
        tip = main_ref(repo, claimed, remote=None)
        confirmed = revision_settings(repo, tip.sha, f"{tip.label}:").main_branch
    except UsageError:
        return default
    return claimed if confirmed == claimed else default
