"""The author's services: `gov add` (append one well-formed entry) and
`gov check --fix` (the mechanical fixes of what a change appended).

Both write the working tree's changelog once, atomically
(`governance.core.atomic`), and only after everything was validated: an
unknown config key stops `gov add` before a byte is written. The bytes come
from the pure `governance.changelog.author`; history is never touched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from governance.changelog.author import Fix, append_entry, fix_appended, render_entry
from governance.changelog.keys import resolve_pattern, unresolved_violation
from governance.check.service import resolve_base
from governance.check.snapshots import HeadSource, head_catalog
from governance.core.atomic import write_atomically
from governance.core.diagnostics import UsageError
from governance.core.settings import Settings
from governance.git.repo import GitRepo


@dataclass(frozen=True, slots=True)
class AddRequest:
    config_keys: tuple[str, ...]
    descriptions: tuple[str, ...]
    scenario_types: tuple[str, ...] = ()
    resolve: bool = True  # resolve the keys against the master configs first


@dataclass(frozen=True, slots=True)
class AddOutcome:
    path: str
    line: int  # 1-based line of the new entry's `- config-keys:`
    entry: bytes


def _worktree_changelog(repo: GitRepo, settings: Settings) -> bytes:
    data = repo.read_worktree(settings.changelog)
    if data is None:
        raise UsageError(
            f"{settings.changelog} does not exist in the working tree",
            "run gov at the root of the benchmark repository, or set `changelog` in [tool.gov]",
        )
    return data


def check_keys(repo: GitRepo, settings: Settings, keys: Sequence[str]) -> None:
    """Every key (or `*` pattern) names a master config key of the working
    tree; else a usage error with the closest spellings."""
    catalog = head_catalog(repo, settings, HeadSource.WORKTREE, None)
    known = list(catalog.keys)
    if not known:
        raise UsageError(
            "none of the master config files exist: " + ", ".join(settings.master_configs),
            "set master-configs in [tool.gov], or pass --no-configs",
        )
    problems = [
        unresolved_violation(key, known, catalog.files_label, "--config-key", 0, 0)
        for key in keys
        if not resolve_pattern(key, known)
    ]
    if problems:
        error = UsageError(
            "; ".join(p.message for p in problems),
            " ".join(f"{p.hint}" for p in problems if p.hint),
        )
        raise error


def add_entry(repo: GitRepo, settings: Settings, request: AddRequest) -> AddOutcome:
    """Append the entry to the working tree's changelog (history's bytes kept)."""
    if not request.descriptions or not all(d.strip() for d in request.descriptions):
        raise UsageError("every --description needs text", 'e.g. --description "Retune TP8"')
    data = _worktree_changelog(repo, settings)
    if request.resolve:
        check_keys(repo, settings, request.config_keys)
    entry = render_entry(
        request.config_keys, request.descriptions, scenario_types=request.scenario_types
    )
    new = append_entry(data, entry)
    assert new.startswith(data)
    write_atomically(repo.root / settings.changelog, new)
    return AddOutcome(settings.changelog, new[: len(new) - len(entry)].count(b"\n") + 1, entry)


def fix_worktree(
    repo: GitRepo, settings: Settings, base_ref: str | None, *, exact_base: bool = False
) -> tuple[Fix, ...]:
    """Apply the mechanical fixes to what the working tree's changelog
    appends to the base; the fixes made (none: the file is unchanged)."""
    data = _worktree_changelog(repo, settings)
    base_commit, _label = resolve_base(repo, settings, base_ref, None, exact=exact_base)
    base = repo.read_blob(base_commit, settings.changelog)
    fixed, fixes = fix_appended(base, data, settings.policy(), path=settings.changelog)
    if fixed != data:
        write_atomically(repo.root / settings.changelog, fixed)
    return fixes
