"""Settings from the trusted side: what decides the gate never comes from the change judged.

A PR controls its own tree, settings files included: had gov read
`.gov.toml` from the PR's checkout, a PR could point `changelog` at a decoy
or `ignore` a rule and pass. So `gov check` reads the settings files from its
base revision (the merge-base, or `--base-ref`), and `prepare-merge` from
main's tip. A change that edits them is still judged with the base's
settings, and the edit itself is reported (GOV801): the new settings apply
once it has landed.

    settings, base, label = check_settings(repo, options, main_branch, flags)

The settings of each side are loaded by `check.sides` (flags and `GOV_*`
still override; they come from whoever runs gov, not the PR).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from governance.check.service import CheckOptions, merge_heads, resolve_base
from governance.check.sides import Overrides, main_settings, revision_settings
from governance.check.snapshots import HeadSource, snapshot_reader
from governance.core.codes import violation
from governance.core.diagnostics import UsageError, Violation
from governance.core.settings import SETTINGS_FILES, Settings, settings_tables
from governance.git.repo import GitRepo


def check_settings(
    repo: GitRepo, options: CheckOptions, main_branch: str, overrides: Overrides = None
) -> tuple[Settings, str, str]:
    """(settings, base commit, base label) for `gov check` and `gov plan`: the
    base is found with main's settings (`main_branch` from the flags or the
    environment), then the settings are read from the base itself."""
    head = _head_commit(repo, options)
    try:
        boot = main_settings(repo, main_branch, overrides)
    except UsageError:
        if not options.base_ref:
            raise
        boot = revision_settings(
            repo, repo.resolve(options.base_ref), f"{options.base_ref}:", overrides
        )
    merging = merge_heads(repo, options)
    base, label = resolve_base(
        repo, boot, options.base_ref, head, exact=options.exact_base, merging=merging
    )
    settings = revision_settings(repo, base, f"base {base[:10]}:", overrides)
    if settings.main_branch != boot.main_branch and not options.base_ref:
        base, label = resolve_base(repo, settings, None, head, merging=merging)
        settings = revision_settings(repo, base, f"base {base[:10]}:", overrides)
    return settings, base, label


def _head_commit(repo: GitRepo, options: CheckOptions) -> str:
    if options.head_source is HeadSource.REF and options.head_ref:
        return repo.resolve(options.head_ref)
    return repo.resolve("HEAD")


def _tables(read: Callable[[str], bytes | None]) -> dict[str, Any] | str:
    try:
        values, _found = settings_tables(read, "")
    except UsageError as exc:
        return f"unreadable ({exc})"
    return values


def settings_change(
    repo: GitRepo, base: str, options: CheckOptions, head_commit: str | None
) -> Violation | None:
    """GOV801 when the change edits gov's settings (the `[tool.gov]` table or
    `.gov.toml`, compared as values, so other edits to pyproject.toml pass)."""
    commit = head_commit
    if options.head_source is HeadSource.REF and commit is None:
        commit = repo.resolve(options.head_ref or "HEAD")
    read = snapshot_reader(repo, options.head_source, commit)
    before = _tables(lambda name: repo.read_blob(base, name))
    after = _tables(read)
    if before == after:
        return None
    if isinstance(before, dict) and isinstance(after, dict):
        keys = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
        what = ", ".join(f"`{k}`" for k in keys)
    else:
        what = str(after if isinstance(after, str) else before)
    path = next((n for n in reversed(SETTINGS_FILES) if read(n) is not None), SETTINGS_FILES[0])
    return violation(
        "GOV801",
        f"settings changed by this change ({what}): checked with the base's settings; "
        "the new ones apply after it lands",
        path,
        hint="a maintainer reviews settings changes; they never relax the check of the change itself",
    )
