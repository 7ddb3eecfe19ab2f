"""`gov canonicalize` and `gov resolve-conflict`: the merge-time edits applied
to the working tree by hand (the same functions prepare-merge uses)."""

from __future__ import annotations

from dataclasses import dataclass

from governance.changelog.conflict import resolve_conflict
from governance.changelog.edit import EditResult, canonicalize
from governance.changelog.modes import CheckMode
from governance.check.service import CheckOptions, resolve_base, run_check
from governance.check.snapshots import HeadSource
from governance.core.atomic import write_atomically
from governance.core.diagnostics import FindingsError, UsageError
from governance.core.settings import Settings
from governance.git.repo import GitRepo


@dataclass(frozen=True, slots=True)
class EditOutcome:
    path: str
    result: EditResult
    written: bool


def canonicalize_worktree(
    repo: GitRepo, settings: Settings, pr: int, base_ref: str | None
) -> EditOutcome:
    """Rewrite the placeholder links of the entries the working-tree changelog
    appends to `base_ref` (default: the merge-base with main) to PR `pr`'s link."""
    path = settings.changelog
    head = repo.read_worktree(path)
    if head is None:
        raise UsageError(f"{path} does not exist in the working tree", "run gov at the repo root")
    # Default base: the merge-base with main, like `gov check` (it is main's tip
    # once main has been merged in, as in the reference's `--base-ref origin/main`).
    base_commit, _label = resolve_base(repo, settings, base_ref)
    base = repo.read_blob(base_commit, path) or b""
    result = canonicalize(base, head, pr, settings.policy(), path=path)
    if not result.ok:
        raise FindingsError(
            f"{path}: cannot canonicalize the links for PR #{pr}", list(result.violations)
        )
    if result.changed:  # canonicalize re-checked these bytes before returning them
        write_atomically(repo.root / path, result.data)
    return EditOutcome(path, result, result.changed)


def resolve_worktree(repo: GitRepo, settings: Settings, pr: int) -> EditOutcome:
    """Resolve a conflicted changelog from the index stages of an ongoing merge
    of main into the PR branch; write it, stage it and check it."""
    path = settings.changelog
    if not repo.worktree.merge_in_progress():
        raise UsageError(
            "no merge in progress", f"run `git merge {settings.main_branch}` on the PR branch first"
        )
    ours, theirs = repo.read_stage(path, 2), repo.read_stage(path, 3)
    if ours is None or theirs is None:
        if path not in repo.worktree.unmerged_paths():
            raise UsageError(f"{path} is not conflicted", "nothing to resolve: commit the merge")
        raise UsageError(
            f"{path} was deleted on one side of the merge", "resolve this conflict by hand"
        )
    result = resolve_conflict(
        repo.read_stage(path, 1), ours, theirs, pr, settings.policy(), path=path
    )
    if not result.ok:
        raise FindingsError(f"{path}: the conflict cannot be resolved", list(result.violations))
    write_atomically(repo.root / path, result.data)
    repo.worktree.stage(path)
    options = CheckOptions(
        CheckMode.pr_mode(pr),
        base_ref="MERGE_HEAD",
        head_source=HeadSource.STAGED,
        exact_base=True,  # the staged merge result extends main's tip itself
    )
    verdict = run_check(repo, settings, options).verdict
    if not verdict.ok:
        raise FindingsError(f"{path}: the staged resolution fails gov check", verdict.violations)
    return EditOutcome(path, result, True)
