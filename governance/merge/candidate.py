"""One car's candidate for `gov queue run --ahead N` (docs/queue.md,
'Speculative trains'): the PR merged in memory onto a base (main's tip, or
the candidate of the car ahead), its changelog resolved by construction,
then checked and planned, by prepare-merge's own steps run dry (no journal,
no scratch ref, no sweep). The only thing written is the candidate commit
object; the queue keeps it with `refs/gov/queue/pr-N`, which its database
records before the ref is made, and lets it go with `release` (the ref
deleted only at the recorded value, then forgotten).
"""

from __future__ import annotations

from dataclasses import dataclass

from governance.core.settings import Settings
from governance.forge.base import Forge, PullRequest
from governance.git.repo import GitRepo
from governance.merge import changelog_steps, decisions, steps
from governance.merge import journal as jr
from governance.merge.queue_store import QueueStore
from governance.merge.report import MergeReport
from governance.merge.work import Fetched, PrepareOptions, Refused, Work

REF_PREFIX = "refs/gov/queue/"


@dataclass(frozen=True, slots=True)
class Built:
    commit: str
    tree: str


@dataclass(frozen=True, slots=True)
class NotBuilt:
    """The step that refused the car on that base, and prepare-merge's report of it."""

    step: str
    report: MergeReport

    @property
    def conflict(self) -> bool:
        """Refused for conflicts outside the changelog (the only reason to park)."""
        return self.step == "merge"


def build(
    repo: GitRepo, settings: Settings, forge: Forge, pull: PullRequest, base: str, main: str
) -> Built | NotBuilt:
    """Validate, merge onto `base`, resolve, canonicalize, commit, check and plan."""
    options = PrepareOptions(pull.number, dry_run=True, main_branch=main)
    report = MergeReport(pull.number, forge.kind, True)
    path = jr.journal_path(repo.git_dir, pull.number)  # never written: a dry run has no journal
    work = Work(repo, settings, forge, options, report, path, None, lambda _text: None)
    report.pr_head, report.main_tip = pull.head_sha, base
    try:
        steps.validate(work, pull, base)
        merged = changelog_steps.merge(work, pull, base)
        resolved = changelog_steps.canonicalize(work, base, merged)
        commit = steps.commit(work, Fetched(pull, base), resolved)
        prepared = steps.check(work, pull, base, commit)
        steps.plan(work, pull, base, prepared)
    except Refused as refusal:
        report.add(refusal.step)
        report.status = f"refused at {refusal.step.name}: {refusal.step.detail}"
        return NotBuilt(refusal.step.name, report)
    return Built(commit, repo.objects.tree_of(commit))


def conflicts_on(repo: GitRepo, settings: Settings, pull: PullRequest, base: str) -> bool:
    """Does merging the PR onto `base` conflict outside the changelog? (the
    merge step's own test, without the rest of the steps)"""
    if repo.is_ancestor(base, pull.head_sha):
        return False
    tree = repo.objects.merge_tree(pull.head_sha, base)
    return bool(decisions.blocking_conflicts(repo, tree, settings.changelog))


def candidate_ref(pr: int) -> str:
    return f"{REF_PREFIX}pr-{int(pr)}"


def release(repo: GitRepo, store: QueueStore, pr: int) -> None:
    """Delete the car's candidate ref (only at a value the database recorded), then forget it."""
    for held in store.candidates(pr, held=True):
        current = repo.ref_sha(held.ref)
        if current == held.sha:
            repo.delete_ref(held.ref, current)
    store.release_candidates(pr)


def release_all(repo: GitRepo, store: QueueStore) -> None:
    """Every candidate the database holds a ref for (a killed `--ahead` run's, at
    the start of any pass; this pass's, at its end)."""
    for pr in sorted({held.pr for held in store.candidates(held=True)}):
        release(repo, store, pr)
