"""The local steps of prepare-merge (preflight … plan; the forge-facing ones are
in `landing.py`, the ones that make the merged changelog bytes in
`changelog_steps.py`). Each step either records its outcome in the report and
returns, or raises `Refused` carrying its failed StepReport. Steps up to
`canonicalize` only read (merges happen in memory); `commit` starts writing.
Pure decisions (what conflicts are acceptable, which labels pass, what
commit to make) live in `decisions.py`; this module does the I/O in order.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from governance.changelog import rules
from governance.changelog.move import move_inserted
from governance.changelog.rules import CheckMode, Verdict
from governance.check.service import CheckOptions, run_check
from governance.core.diagnostics import FindingsError, UsageError
from governance.core.sweep_gate import modifiers, plan_kwargs
from governance.git.mainref import main_ref
from governance.merge import decisions
from governance.merge import journal as jr
from governance.merge.report import CommitMade
from governance.merge.scratch import checkout_lock, drop_scratch
from governance.merge.sweep_seam import SweepRequest
from governance.merge.work import Work
from governance.sweeps.reuse_pin import hear

if TYPE_CHECKING:
    from governance.matrix.plan import PlanResult


# -- steps --------------------------------------------------------------------------


def preflight(w: Work, prior: jr.Journal | None) -> bool:
    """Read-only checks. False: nothing to do (already merged or prepared)."""
    w.step("preflight")
    repo, n = w.repo, w.options.pr
    pull = w.forge.get_pull(n)
    w.pull = pull
    w.report.pr_head = pull.head_sha
    if pull.state == "merged":
        w.ok(f"PR #{n} is already merged ({(pull.merge_commit_sha or '')[:12]}); nothing to do")
        w.report.merge_commit = pull.merge_commit_sha or ""
        w.report.status = f"PR #{n} is already merged"
        if prior is not None and not w.options.dry_run:  # a kept --no-push result is moot now
            drop_scratch(repo, prior)
            jr.remove(w.journal_path)
        return False
    with checkout_lock(repo):  # not while another run moves HEAD
        dirty = repo.worktree.status_porcelain()
    problems = decisions.preflight_problems(pull, dirty, w.settings, w.options.main_branch)
    if problems:
        raise w.refuse(f"PR #{n} cannot be prepared", problems)
    w.main_tip = _main_tip(w)
    w.report.main_tip = w.main_tip
    if prior is not None and _already_prepared(w, prior):
        return False
    w.ok(f"PR #{n} '{pull.title}' {pull.head_branch}@{pull.head_sha[:10]} onto {w.main_label}")
    return True


def _main_tip(w: Work) -> str:
    """Main's tip by the one rule (`governance.git.mainref`), on the side this
    forge lands on: the remote-tracking branch just fetched (GitHub) or the
    local branch (local forge)."""
    main, remote = w.options.main_branch, w.options.remote
    if remote:
        w.repo.remotes.fetch(remote, f"+refs/heads/{main}:refs/remotes/{remote}/{main}")
        if w.repo.ref_sha(w.pull.head_sha if w.pull else "") is None:
            w.repo.remotes.fetch(remote, f"refs/pull/{w.options.pr}/head")
    try:
        found = main_ref(w.repo, main, remote=remote, local=remote is None)
    except UsageError as exc:
        raise w.refuse(str(exc), hint="pass --main-branch") from exc
    w.main_label = found.label
    return found.sha


def _already_prepared(w: Work, prior: jr.Journal) -> bool:
    """A finished --no-push run for the same PR head and main tip: its result
    is still on the scratch ref, so there is nothing to redo."""
    assert w.pull is not None
    same = prior.pr_head == w.pull.head_sha and prior.main_tip == w.main_tip
    if same and prior.prepared and w.repo.ref_sha(prior.scratch_ref) == prior.prepared:
        w.report.prepared = prior.prepared
        w.ok(f"already prepared at {prior.prepared[:12]} ({prior.scratch_ref}); nothing to do")
        w.report.status = f"PR #{w.options.pr} is already prepared; nothing changed"
        return True
    if not w.options.dry_run:  # stale: the PR or main moved; this run redoes the work
        drop_scratch(w.repo, prior)
        jr.remove(w.journal_path)
    return False


def validate(w: Work) -> None:
    """The PR's own change against its merge-base, in PR mode (docs/prepare-merge.md)."""
    w.step("validate")
    assert w.pull is not None
    head = w.pull.head_sha
    w.merge_base = w.repo.merge_base(head, w.main_tip)
    verdict = _gov_check(w, w.merge_base, head, configs=False)
    repair = ""
    if not verdict.ok:
        verdict, repair = _as_repaired(w, verdict, head)
    if not verdict.ok:
        raise w.refuse(
            "the PR's own changelog change breaks the rules", verdict.violations, _fix_hint(w)
        )
    w.ok(
        f"{len(verdict.additions)} appended entr{'y' if len(verdict.additions) == 1 else 'ies'},"
        f" {len(verdict.corrections)} correction(s) since merge-base {w.merge_base[:10]}{repair}"
    )


def _as_repaired(w: Work, verdict: Verdict, head: str) -> tuple[Verdict, str]:
    """A PR whose only fault is entries inserted mid-history (GOV302) is judged
    as repaired: resolve moves them to the end (`changelog_steps`)."""
    if {v.code for v in verdict.violations} != {"GOV302"}:
        return verdict, ""
    path = w.settings.changelog
    base_bytes = w.repo.read_blob(w.merge_base, path) or b""
    moved = move_inserted(base_bytes, w.repo.read_blob(head, path) or b"")
    if moved is None:
        return verdict, ""
    mode = CheckMode.pr_mode(w.options.pr)
    repaired = rules.check(base_bytes, moved[0], w.settings.policy(), mode, path=path)
    note = f"; {len(moved[1])} entry(ies) inserted mid-history, re-appended at resolve"
    return (repaired, note) if repaired.ok else (verdict, "")


def _gov_check(w: Work, base: str, head: str, *, configs: bool) -> Verdict:
    """`gov check --pr N --base-ref BASE --head-ref HEAD [--no-configs] --labels
    <the PR's>`: judged with the modifiers its labels give its PR-time sweep."""
    mode = CheckMode.pr_mode(w.options.pr)
    labels = w.pull.labels if w.pull is not None else ()
    flags = modifiers(labels, w.settings.gate_rules()).plan_flags
    options = CheckOptions(
        mode, base_ref=base, head_ref=head, configs=configs, exact_base=True, plan_flags=flags
    )
    return run_check(w.repo, w.settings, options).verdict


def begin(w: Work) -> None:
    """The first write of the run: journal, detached HEAD, scratch ref. Every
    step before this one only reads, so a refusal there leaves nothing to undo."""
    assert w.pull is not None
    if w.options.dry_run or w.journal is not None:
        return
    repo, n, pull = w.repo, w.options.pr, w.pull
    scratch = jr.scratch_ref(n)
    if repo.ref_sha(scratch) is not None:  # no journal records it: not provably ours
        raise w.refuse(
            f"{scratch} exists but no journal records it",
            hint=f"inspect it, then `git update-ref -d {scratch}` and re-run",
        )
    with checkout_lock(repo):
        original, head = repo.worktree.current_branch(), repo.worktree.head_sha()
        w.journal = jr.Journal(
            n, original, head, scratch, pull.head_sha, w.main_tip, pid=os.getpid()
        )
        jr.save(w.journal_path, w.journal)  # before any ref moves: a crash is recoverable
        if original in (pull.head_branch, pull.base_branch, w.options.main_branch):
            repo.worktree.detach_head()  # those branches may move under a checked-out worktree
    if not repo.compare_and_swap_ref(scratch, pull.head_sha, None, f"gov: prepare PR #{n}"):
        raise w.refuse(f"cannot create {scratch}: it appeared meanwhile")


def commit(w: Work) -> None:
    w.step("commit")
    assert w.pull is not None and w.data is not None
    begin(w)
    repo, head, path = w.repo, w.pull.head_sha, w.settings.changelog
    plan = decisions.commit_plan(w.pull, w.options.main_branch, w.main_tip, w.merged, w.changed)
    if plan is None:
        w.prepared = head
        w.report.prepared = head
        w.ok(f"nothing to commit: the PR head {head[:10]} is already prepared", "skipped")
        return
    tree = plan.tree or repo.objects.tree_of(head)
    if w.changed:
        tree = repo.objects.tree_with_file(tree, path, w.data)
    w.prepared = repo.objects.commit_tree(tree, plan.parents, plan.message)
    w.report.prepared = w.prepared
    w.report.commits.append(CommitMade(w.prepared, plan.message.splitlines()[0]))
    if w.journal is not None:
        w.journal.prepared = w.prepared
        jr.save(w.journal_path, w.journal)  # the value the ref will hold, before it moves
        scratch = w.journal.scratch_ref
        if not repo.compare_and_swap_ref(scratch, w.prepared, head, "gov: prepared"):
            raise w.refuse(f"{scratch} moved while preparing")
    w.ok(f"{w.prepared[:12]} {plan.message.splitlines()[0]}")


def check(w: Work) -> None:
    """`gov check --pr N` on the prepared commit against main: never push bytes that fail."""
    w.step("check")
    verdict = _gov_check(w, w.main_tip, w.prepared, configs=True)
    if not verdict.ok:
        raise w.refuse("the prepared changelog fails gov check", verdict.violations, _fix_hint(w))
    w.additions = len(verdict.additions)
    ignoring = f" (ignoring {', '.join(w.settings.ignore)})" if w.settings.ignore else ""
    w.ok(f"gov check --pr {w.options.pr} passes on {w.prepared[:10]}{ignoring}")


def plan(w: Work) -> None:
    w.step("plan")
    if not w.options.plan:
        w.ok("not computed (--no-plan)", "skipped")
        return
    if not w.additions:  # corrections only, or no changelog change: no sweep to plan
        w.ok("the PR appends no changelog entry: nothing would run", "skipped")
        return
    from governance.matrix import sources
    from governance.matrix.render import describe

    assert w.pull is not None
    # What main's sweep of the landed commit runs: a push, which takes no
    # label modifiers (run-sweep.yml passes them to pull-request runs only).
    flags = modifiers(w.pull.labels, w.settings.gate_rules(), pull_request=False).plan_flags
    try:
        result = sources.plan_between(
            w.repo,
            w.main_tip,
            w.prepared,
            **plan_kwargs(flags),
            layout=w.settings.layout(),
            cache=sources.default_cache(w.repo),
        )
    except FindingsError as exc:
        # Main's CI would fail the same way on the pushed commit: stop before pushing.
        raise w.refuse(
            f"the post-merge plan cannot be built: {exc}", exc.violations, exc.hint
        ) from exc
    w.report.plan_rows = decisions.plan_rows(result.document, describe)
    if w.sweep is not None:
        sweep(w, result)
        return
    w.ok(
        f"{len(w.report.plan_rows)} row(s) would run after the merge; not swept here "
        "(pass --sweep, or set sweep-on-merge = true, to reuse the PR's results and launch the rest)"
    )


def sweep(w: Work, result: PlanResult) -> None:
    """Reuse what the PR's own sweeps produced, launch the rest (before the
    push: a merge never lands ahead of its benchmark results)."""
    assert w.pull is not None
    commits = tuple(w.repo.commits_between(w.main_tip, w.pull.head_sha))
    heard = hear(w.forge.list_comments(w.options.pr), w.settings.reuse_authorizers)
    request = SweepRequest(
        w.options.pr,
        result,
        commits,
        w.prepared,
        w.options.dry_run,
        pr_head=w.pull.head_sha,
        main_tip=w.main_tip,
        heard=heard,
        labels=tuple(w.pull.labels),
    )
    assert w.sweep is not None
    try:
        outcome = w.sweep(request)
    except FindingsError as exc:
        raise w.refuse(f"sweep: {exc}", exc.violations, exc.hint) from exc
    w.report.sweep = outcome.text
    w.report.sweep_data = outcome.data
    w.report.results = outcome.results
    w.report.results_data = outcome.results_data
    if outcome.problems:
        raise w.refuse(
            f"sweep: {len(outcome.problems)} row(s) did not produce a result",
            outcome.problems,
            "fix the launch script or the config, then re-run prepare-merge "
            "(rows that succeeded are reused)",
        )
    summary = outcome.text.splitlines()[0] if outcome.text.strip() else "sweep reported"
    w.ok(f"{len(w.report.plan_rows)} row(s) after the merge; {summary}")


def _fix_hint(w: Work) -> str:
    return f"fix the changelog on the PR branch, push, and re-run `gov prepare-merge --pr {w.options.pr}`"
