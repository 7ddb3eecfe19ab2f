"""The forge-facing steps of prepare-merge: push, wait for checks, land,
and the tidy-up of a successful run. Each moves at most one ref on the
forge, always by compare-and-swap against what an earlier step recorded."""

from __future__ import annotations

from governance.forge.base import PullRequest
from governance.merge import journal as jr
from governance.merge.scratch import checkout_lock, drop_scratch, step_back, step_off
from governance.merge.work import LOCAL_CHECK, Work


def push(w: Work, pull: PullRequest, prepared: str) -> None:
    """Move the PR branch from the head preflight read to the prepared commit."""
    w.step("push")
    if w.options.dry_run:
        w.ok(f"would push {prepared[:12]} to {pull.head_branch}", "would")
        return
    if not w.options.push:
        scratch = w.journal.scratch_ref if w.journal else ""
        w.ok(f"not pushed (--no-push); the result is {scratch}", "skipped")
        return
    if prepared == pull.head_sha:
        w.ok(f"{pull.head_branch} is already at {prepared[:12]}", "skipped")
    else:
        if w.options.remote:
            pushed = w.repo.remotes.push_lease(
                w.options.remote, prepared, pull.head_branch, pull.head_sha
            )
            if not pushed:
                raise w.refuse(
                    f"push to {pull.head_branch} was rejected (the branch moved?)",
                    hint="re-run prepare-merge from the new head",
                )
            w.forge.require_head(w.options.pr, prepared)  # the forge sees what we pushed
        else:
            mover = w.forge.branch_mover
            if mover is None:  # its branches move by git push only
                raise w.refuse(
                    f"the {w.forge.kind} forge cannot move {pull.head_branch} itself",
                    hint="pass --remote: the branch is pushed with a lease",
                )
            with checkout_lock(w.repo):  # the PR branch may be checked out here
                step_off(w.repo, w.journal, w.journal_path, pull.head_branch)
                mover.move_branch(w.options.pr, prepared, expected_old_sha=pull.head_sha)
        if w.journal is not None:
            w.journal.pushed = True
        w.ok(f"{pull.head_branch}: {pull.head_sha[:10]} -> {prepared[:10]}")
    recorder = w.forge.check_recorder
    if recorder is not None and LOCAL_CHECK in w.options.required_checks:
        # On the local forge gov is the CI: the check it just ran is the check run.
        recorder.record_check(prepared, LOCAL_CHECK, conclusion="success")


def checks(w: Work, prepared: str) -> None:
    w.step("checks")
    if w.options.dry_run or not w.options.merge or not w.options.push:
        outcome = "would" if w.options.dry_run else "skipped"
        w.ok(f"would wait for {', '.join(w.options.required_checks) or 'no checks'}", outcome)
        return
    w.forge.wait_for_checks(
        prepared,
        w.options.required_checks,
        timeout=w.options.check_timeout,
        poll_interval=w.options.poll_interval,
    )
    w.ok(f"passed: {', '.join(w.options.required_checks) or '(none required)'}")


def land(w: Work, prepared: str) -> None:
    w.step("land")
    n = w.options.pr
    if w.options.dry_run or not w.options.merge or not w.options.push:
        outcome = "would" if w.options.dry_run else "skipped"
        w.ok(f"would squash-merge PR #{n} at {prepared[:12]}", outcome)
        return
    with checkout_lock(w.repo):  # main may be checked out here (another run re-attached it)
        step_off(w.repo, w.journal, w.journal_path, w.options.main_branch)
        result = w.forge.merge_pull(n, prepared)  # refuses if the head moved meanwhile
    w.report.merge_commit = result.sha
    if w.journal is not None:
        w.journal.merged = True
    # The run ledger records what the landed commit's results are made of.
    note = w.sweep.landed(prepared, result.sha) if w.sweep is not None else ""
    w.ok(f"squash-merged as {result.sha[:12]}{note}")


def finish(w: Work, prepared: str) -> None:
    n, report = w.options.pr, w.report
    if w.options.dry_run:
        report.status = f"dry run: PR #{n} would be prepared as shown; nothing was changed"
        return
    assert w.journal is not None
    keep = not w.options.push and prepared != w.journal.pr_head
    if not keep:
        drop_scratch(w.repo, w.journal)
    step_back(w.repo, w.journal.original_branch)
    if keep:  # remembered so a rerun can say "already prepared"
        w.journal.done = True
        jr.save(w.journal_path, w.journal)
    else:
        jr.remove(w.journal_path)
    if report.merge_commit:
        report.status = f"PR #{n} squash-merged as {report.merge_commit}"
    elif keep:
        report.status = f"PR #{n} prepared as {prepared} (not pushed)"
    else:
        report.status = f"PR #{n} prepared at {prepared} (not merged)"
