"""The local steps of prepare-merge (preflight … plan; the forge-facing ones are
in `landing.py`, the ones that make the merged changelog bytes in
`changelog_steps.py`). Each step takes its inputs (the PR, the base commit
it is merged onto, the results of the steps before) and either records its
outcome in the report and returns its result (`merge.work`), or raises
`Refused` carrying its failed StepReport. Steps up to
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
from governance.forge.base import PullRequest
from governance.git.mainref import MainRef, main_ref
from governance.merge import decisions
from governance.merge import journal as jr
from governance.merge.report import CommitMade
from governance.merge.scratch import checkout_lock, drop_scratch
from governance.merge.sweep_seam import SweepHook, SweepRequest
from governance.merge.work import Fetched, Prepared, Resolved, Work
from governance.sweeps.reuse_pin import hear

if TYPE_CHECKING:
    from governance.matrix.plan import PlanResult


# -- steps --------------------------------------------------------------------------


def preflight(w: Work, prior: jr.Journal | None) -> Fetched | None:
    """Read-only checks. None: nothing to do (already merged or prepared)."""
    w.step("preflight")
    repo, n = w.repo, w.options.pr
    pull = w.forge.get_pull(n)
    w.report.pr_head = pull.head_sha
    if pull.state == "merged":
        w.ok(f"PR #{n} is already merged ({(pull.merge_commit_sha or '')[:12]}); nothing to do")
        w.report.merge_commit = pull.merge_commit_sha or ""
        w.report.status = f"PR #{n} is already merged"
        if prior is not None and not w.options.dry_run:  # a kept --no-push result is moot now
            drop_scratch(repo, prior)
            jr.remove(w.journal_path)
        return None
    with checkout_lock(repo):  # not while another run moves HEAD
        dirty = repo.worktree.status_porcelain()
    problems = decisions.preflight_problems(pull, dirty, w.settings, w.options.main_branch)
    if problems:
        raise w.refuse(f"PR #{n} cannot be prepared", problems)
    main = _main(w, pull)
    fetched = Fetched(pull, main.sha)
    w.report.main_tip = fetched.main_tip
    if prior is not None and _already_prepared(w, prior, fetched):
        return None
    w.ok(f"PR #{n} '{pull.title}' {pull.head_branch}@{pull.head_sha[:10]} onto {main.label}")
    return fetched


def _main(w: Work, pull: PullRequest) -> MainRef:
    """Main by the one rule (`governance.git.mainref`), on the side this
    forge lands on: the remote-tracking branch just fetched (GitHub) or the
    local branch (local forge)."""
    main, remote = w.options.main_branch, w.options.remote
    if remote:
        w.repo.remotes.fetch(remote, f"+refs/heads/{main}:refs/remotes/{remote}/{main}")
        if w.repo.ref_sha(pull.head_sha) is None:
            w.repo.remotes.fetch(remote, f"refs/pull/{w.options.pr}/head")
    try:
        return main_ref(w.repo, main, remote=remote, local=remote is None)
    except UsageError as exc:
        raise w.refuse(str(exc), hint="pass --main-branch") from exc


def _already_prepared(w: Work, prior: jr.Journal, fetched: Fetched) -> bool:
    """A finished --no-push run for the same PR head and main tip: its result
    is still on the scratch ref, so there is nothing to redo."""
    same = prior.pr_head == fetched.pull.head_sha and prior.main_tip == fetched.main_tip
    if same and prior.prepared and w.repo.ref_sha(prior.scratch_ref) == prior.prepared:
        w.report.prepared = prior.prepared
        w.ok(f"already prepared at {prior.prepared[:12]} ({prior.scratch_ref}); nothing to do")
        w.report.status = f"PR #{w.options.pr} is already prepared; nothing changed"
        return True
    if not w.options.dry_run:  # stale: the PR or main moved; this run redoes the work
        drop_scratch(w.repo, prior)
        jr.remove(w.journal_path)
    return False


def validate(w: Work, pull: PullRequest, base: str) -> None:
    """The PR's own change against its merge-base with `base`, in PR mode
    (docs/prepare-merge.md)."""
    w.step("validate")
    head = pull.head_sha
    merge_base = w.repo.merge_base(head, base)
    verdict = _gov_check(w, pull, merge_base, head, configs=False)
    repair = ""
    if not verdict.ok:
        verdict, repair = _as_repaired(w, verdict, merge_base, head)
    if not verdict.ok:
        raise w.refuse(
            "the PR's own changelog change breaks the rules", verdict.violations, _fix_hint(w)
        )
    w.ok(
        f"{len(verdict.additions)} appended entr{'y' if len(verdict.additions) == 1 else 'ies'},"
        f" {len(verdict.corrections)} correction(s) since merge-base {merge_base[:10]}{repair}"
    )


def _as_repaired(w: Work, verdict: Verdict, merge_base: str, head: str) -> tuple[Verdict, str]:
    """A PR whose only fault is entries inserted mid-history (GOV302) is judged
    as repaired: resolve moves them to the end (`changelog_steps`)."""
    if {v.code for v in verdict.violations} != {"GOV302"}:
        return verdict, ""
    path = w.settings.changelog
    base_bytes = w.repo.read_blob(merge_base, path) or b""
    moved = move_inserted(base_bytes, w.repo.read_blob(head, path) or b"")
    if moved is None:
        return verdict, ""
    mode = CheckMode.pr_mode(w.options.pr)
    repaired = rules.check(base_bytes, moved[0], w.settings.policy(), mode, path=path)
    note = f"; {len(moved[1])} entry(ies) inserted mid-history, re-appended at resolve"
    return (repaired, note) if repaired.ok else (verdict, "")


def _gov_check(w: Work, pull: PullRequest, base: str, head: str, *, configs: bool) -> Verdict:
    """`gov check --pr N --base-ref BASE --head-ref HEAD [--no-configs] --labels
    <the PR's>`: judged with the modifiers its labels give its PR-time sweep."""
    mode = CheckMode.pr_mode(w.options.pr)
    flags = modifiers(pull.labels, w.settings.gate_rules()).plan_flags
    options = CheckOptions(
        mode, base_ref=base, head_ref=head, configs=configs, exact_base=True, plan_flags=flags
    )
    return run_check(w.repo, w.settings, options).verdict


def begin(w: Work, fetched: Fetched) -> None:
    """The first write of the run: journal, detached HEAD, scratch ref. Every
    step before this one only reads, so a refusal there leaves nothing to undo."""
    if w.options.dry_run or w.journal is not None:
        return
    repo, n, pull = w.repo, w.options.pr, fetched.pull
    scratch = jr.scratch_ref(n)
    if repo.ref_sha(scratch) is not None:  # no journal records it: not provably ours
        raise w.refuse(
            f"{scratch} exists but no journal records it",
            hint=f"inspect it, then `git update-ref -d {scratch}` and re-run",
        )
    with checkout_lock(repo):
        original, head = repo.worktree.current_branch(), repo.worktree.head_sha()
        w.journal = jr.Journal(
            n, original, head, scratch, pull.head_sha, fetched.main_tip, pid=os.getpid()
        )
        jr.save(w.journal_path, w.journal)  # before any ref moves: a crash is recoverable
        if original in (pull.head_branch, pull.base_branch, w.options.main_branch):
            repo.worktree.detach_head()  # those branches may move under a checked-out worktree
    if not repo.compare_and_swap_ref(scratch, pull.head_sha, None, f"gov: prepare PR #{n}"):
        raise w.refuse(f"cannot create {scratch}: it appeared meanwhile")


def commit(w: Work, fetched: Fetched, resolved: Resolved) -> str:
    """The prepared commit: the PR head, or one commit on it (its sha)."""
    w.step("commit")
    begin(w, fetched)
    pull, main_tip = fetched.pull, fetched.main_tip
    repo, head, path = w.repo, pull.head_sha, w.settings.changelog
    plan = decisions.commit_plan(
        pull, w.options.main_branch, main_tip, resolved.tree, resolved.changed
    )
    if plan is None:
        w.report.prepared = head
        w.ok(f"nothing to commit: the PR head {head[:10]} is already prepared", "skipped")
        return head
    tree = plan.tree or repo.objects.tree_of(head)
    if resolved.changed:
        tree = repo.objects.tree_with_file(tree, path, resolved.data)
    if w.options.expect_tree and tree != w.options.expect_tree:
        raise w.refuse(
            f"the prepared tree {tree} is not the tree {w.options.expect_tree} the queue tested",
            hint="re-run `gov queue run`: the car is built again on main as it is now",
        )
    prepared = repo.objects.commit_tree(tree, plan.parents, plan.message)
    w.report.prepared = prepared
    w.report.commits.append(CommitMade(prepared, plan.message.splitlines()[0]))
    if w.journal is not None:
        w.journal.prepared = prepared
        jr.save(w.journal_path, w.journal)  # the value the ref will hold, before it moves
        scratch = w.journal.scratch_ref
        if not repo.compare_and_swap_ref(scratch, prepared, head, "gov: prepared"):
            raise w.refuse(f"{scratch} moved while preparing")
    w.ok(f"{prepared[:12]} {plan.message.splitlines()[0]}")
    return prepared


def check(w: Work, pull: PullRequest, base: str, commit: str) -> Prepared:
    """`gov check --pr N` on the prepared commit against `base`: never push bytes that fail."""
    w.step("check")
    verdict = _gov_check(w, pull, base, commit, configs=True)
    if not verdict.ok:
        raise w.refuse("the prepared changelog fails gov check", verdict.violations, _fix_hint(w))
    ignoring = f" (ignoring {', '.join(w.settings.ignore)})" if w.settings.ignore else ""
    w.ok(f"gov check --pr {w.options.pr} passes on {commit[:10]}{ignoring}")
    return Prepared(commit, len(verdict.additions))


def plan(w: Work, pull: PullRequest, base: str, prepared: Prepared) -> None:
    """What main's sweep of the landed commit runs, from `base` to the prepared commit."""
    w.step("plan")
    if not w.options.plan:
        w.ok("not computed (--no-plan)", "skipped")
        return
    if not prepared.additions:  # corrections only, or no changelog change: no sweep to plan
        w.ok("the PR appends no changelog entry: nothing would run", "skipped")
        return
    from governance.matrix import sources
    from governance.matrix.render import describe

    # What main's sweep of the landed commit runs: a push, which takes no
    # label modifiers (run-sweep.yml passes them to pull-request runs only).
    flags = modifiers(pull.labels, w.settings.gate_rules(), pull_request=False).plan_flags
    try:
        result = sources.plan_between(
            w.repo,
            base,
            prepared.commit,
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
        request = _sweep_request(w, pull, base, prepared.commit, result)
        sweep(w, w.sweep, request)
        return
    w.ok(
        f"{len(w.report.plan_rows)} row(s) would run after the merge; not swept here "
        "(pass --sweep, or set sweep-on-merge = true, to reuse the PR's results and launch the rest)"
    )


def _sweep_request(
    w: Work, pull: PullRequest, base: str, prepared: str, result: PlanResult
) -> SweepRequest:
    commits = tuple(w.repo.commits_between(base, pull.head_sha))
    heard = hear(w.forge.list_comments(w.options.pr), w.settings.reuse_authorizers)
    return SweepRequest(
        w.options.pr,
        result,
        commits,
        prepared,
        w.options.dry_run,
        pr_head=pull.head_sha,
        main_tip=base,
        heard=heard,
        labels=tuple(pull.labels),
    )


def sweep(w: Work, hook: SweepHook, request: SweepRequest) -> None:
    """Reuse what the PR's own sweeps produced, launch the rest (before the
    push: a merge never lands ahead of its benchmark results)."""
    try:
        outcome = hook(request)
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
