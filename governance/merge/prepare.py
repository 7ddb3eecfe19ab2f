"""`gov prepare-merge --pr N` as an explicit state machine with rollback.

Steps, in order (each one named in the report, the journal and the crash hook):
preflight → validate → merge → resolve → canonicalize → commit → check → plan
→ push → checks → land. Nothing is written before preflight passes.

Main is merged in memory (`git merge-tree`), the result is committed on a
scratch ref `refs/gov/prepare-merge/pr-N` (outside `refs/heads/`: never a
user branch), and the PR branch itself only moves at `push`, through the
forge's compare-and-swap. So a refusal or a crash before `push` leaves every
branch where it was; `rollback` deletes the scratch ref (only at a value the
journal says gov set) and checks the original branch out again. A kernel
lock per PR is held from before the first read to the end, and one on the
shared checkout around every step that touches it. See docs/prepare-merge.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from governance.core import locks
from governance.core.diagnostics import EXIT_OK, GovError, UsageError
from governance.core.settings import Settings
from governance.forge.base import Forge
from governance.git.repo import GitRepo
from governance.merge import changelog_steps, landing, steps
from governance.merge import journal as jr
from governance.merge.report import MergeReport, StepReport
from governance.merge.scratch import clean_litter, drop_scratch, step_back
from governance.merge.sweep_seam import SweepFunction, SweepHook, as_hook
from governance.merge.work import PrepareOptions, Refused, Work


def prepare_merge(
    repo: GitRepo,
    settings: Settings,
    forge: Forge,
    options: PrepareOptions,
    *,
    sweep: SweepHook | SweepFunction | None = None,
    say: Callable[[str], None] | None = None,
) -> MergeReport:
    """Run the state machine; the report says what happened. Refusals and
    forge/git failures become a failed step (after rollback); only a live
    concurrent run (UsageError) and crashes (after rollback) raise."""
    purpose = f"prepare-merge --pr {options.pr}"
    with locks.hold(jr.lock_path(repo.git_dir, options.pr), purpose):
        return _prepare_locked(repo, settings, forge, options, as_hook(sweep), say)


def _prepare_locked(
    repo: GitRepo,
    settings: Settings,
    forge: Forge,
    options: PrepareOptions,
    sweep: SweepHook | None,
    say: Callable[[str], None] | None,
) -> MergeReport:
    report = MergeReport(options.pr, forge.kind, options.dry_run)
    path = jr.journal_path(repo.git_dir, options.pr)
    prior = jr.load(path)
    if prior is not None and jr.owner_alive(prior):
        raise UsageError(
            f"another prepare-merge --pr {options.pr} is running (pid {prior.pid})",
            f"wait for it to finish; if it is stuck, stop it, then re-run ({path})",
        )
    litter = [] if options.dry_run else clean_litter(repo, _results_root(repo, settings))
    if prior is not None and not prior.done and not options.dry_run:
        note = "; ".join([*litter, rollback(repo, prior, path)])
        report.add(StepReport("recover", "ok", note))
        prior = None
    elif litter:
        report.add(StepReport("recover", "ok", "; ".join(litter)))
    work = Work(repo, settings, forge, options, report, path, sweep, say or (lambda _t: None))
    try:
        run_steps(work, prior)
    except Refused as refusal:
        report.add(refusal.step)
        report.status = f"refused at {refusal.step.name}: {refusal.step.detail}"
    except GovError as exc:  # a forge or git failure: same cleanup, its own exit code
        report.add(StepReport(work.current, "failed", str(exc), hint=exc.hint))
        report.exit_code = exc.exit_code
        report.status = f"failed at {work.current}: {exc}"
    except BaseException:
        if work.journal is not None:
            rollback(repo, work.journal, path)
        raise
    if report.failed_step is not None:
        if work.journal is not None:
            note = rollback(repo, work.journal, path)
            report.add(StepReport("rollback", "ok", note))
        if report.exit_code == EXIT_OK:  # pragma: no cover - add() sets it
            report.exit_code = 1
    return report


def _results_root(repo: GitRepo, settings: Settings) -> Path:
    from governance.sweeps.resolve import sweep_paths

    return sweep_paths(repo.root, repo.git_dir, settings).results


def rollback(repo: GitRepo, journal: jr.Journal, path: Path) -> str:
    """Undo a run's local traces: the scratch ref, a detached HEAD, the
    journal. Pushes and merges already done are facts on the forge and stay
    (the next run re-reads them); everything before `push` is undone."""
    done: list[str] = []
    if drop_scratch(repo, journal):
        done.append(f"deleted {journal.scratch_ref}")
    if step_back(repo, journal.original_branch):
        done.append(f"checked out {journal.original_branch} again")
    jr.remove(path)
    return "; ".join(done) or "nothing to undo"


def run_steps(w: Work, prior: jr.Journal | None) -> None:
    """The steps in order, each handed what the ones before it produced."""
    fetched = steps.preflight(w, prior)
    if fetched is None:
        return
    pull, base = fetched.pull, fetched.main_tip  # the PR is merged onto main's tip
    steps.validate(w, pull, base)
    merged = changelog_steps.merge(w, pull, base)
    resolved = changelog_steps.canonicalize(w, base, merged)
    commit = steps.commit(w, fetched, resolved)
    prepared = steps.check(w, pull, base, commit)
    steps.plan(w, pull, base, prepared)
    landing.push(w, pull, prepared.commit)
    landing.checks(w, prepared.commit)
    landing.land(w, prepared.commit)
    landing.finish(w, prepared.commit)
