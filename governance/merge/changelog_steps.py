"""The prepare-merge steps that make the merged changelog's bytes, in memory:
merge main into the PR (`merge`, with `resolve` for a conflicted changelog
and the repair of entries inserted mid-history) and write the PR's link
(`canonicalize`). Nothing is written to the repository here; `steps.commit`
starts writing.
"""

from __future__ import annotations

from governance.changelog import edit
from governance.changelog.conflict import resolve_conflict
from governance.changelog.move import Moved, move_inserted
from governance.forge.base import PullRequest
from governance.git.objects import MergeTree
from governance.merge import decisions
from governance.merge.report import LinkRewritten
from governance.merge.work import Merged, Resolved, Work


def merge(w: Work, pull: PullRequest, base: str) -> Merged:
    """Merge `base` (main's tip, for prepare-merge) into the PR head, in
    memory, and resolve the changelog: the `merge` and `resolve` steps."""
    w.step("merge")
    head, path = pull.head_sha, w.settings.changelog
    if w.repo.is_ancestor(base, head):
        w.ok(f"already contains {w.options.main_branch}@{base[:10]}", "skipped")
        w.step("resolve")
        merged, repaired = _repaired(
            None, w.repo.read_blob(head, path), w.repo.read_blob(base, path)
        )
        w.ok("no conflict" + repaired, "ok" if repaired else "skipped")
        return merged
    tree = w.repo.objects.merge_tree(head, base)
    blocking = decisions.blocking_conflicts(w.repo, tree, path)
    if blocking:
        names = ", ".join(v.path for v in blocking)
        raise w.refuse(
            f"merging {w.options.main_branch} conflicts outside the changelog: {names}",
            blocking,
            "merge main into the PR branch yourself, resolve these files, push, and re-run",
        )
    conflicted = path in tree.stages
    w.ok(f"merged {w.options.main_branch}@{base[:10]}" + (f"; {path} conflicts" * conflicted))
    w.step("resolve")
    if not conflicted:
        data = w.repo.read_blob_from_tree(tree.tree, path)
        merged, repaired = _repaired(tree, data, w.repo.read_blob(base, path))
        w.ok("no conflict" + repaired, "ok" if repaired else "skipped")
        return merged
    stages = {n: w.repo.read_blob_by_id(oid) for n, (_mode, oid) in tree.stages[path].items()}
    ours = stages[2]
    moved = move_inserted(stages[1], ours) if stages.get(1) else None
    if moved is not None:  # the PR inserted entries mid-history: re-append them at the end
        ours = moved[0]
    result = resolve_conflict(
        stages.get(1), ours, stages[3], w.options.pr, w.settings.policy(), path=path
    )
    if not result.ok:
        raise w.refuse("the changelog conflict cannot be resolved", result.violations)
    rewrites = tuple(LinkRewritten(r.line, r.old, r.new) for r in result.rewrites)
    dropped = f"; dropped {len(result.dropped)} entry(ies) main gained" if result.dropped else ""
    links = f"; {len(result.rewrites)} link(s) rewritten" if result.rewrites else ""
    repair = _moved_note(moved[1]) if moved is not None else ""
    w.ok(f"kept main's bytes, re-appended the PR's entries{dropped}{links}{repair}")
    return Merged(tree, result.data, changed=True, rewrites=rewrites)


def _repaired(
    tree: MergeTree | None, data: bytes | None, main_bytes: bytes | None
) -> tuple[Merged, str]:
    """Entries the PR inserted between main's go to the end (their bytes
    unchanged): the repair `gov check --fix` makes, so the merge is not
    refused for it (GOV302). Also returns what to say ("" when nothing moved)."""
    moved = move_inserted(main_bytes, data) if data is not None and main_bytes else None
    if moved is None:
        return Merged(tree, data), ""
    return Merged(tree, moved[0], changed=True), _moved_note(moved[1])


def _moved_note(moved: tuple[Moved, ...]) -> str:
    lines = ", ".join(str(m.line) for m in moved)
    return (
        f"; repaired: {len(moved)} entry(ies) the PR inserted in the middle of history "
        f"(line {lines}) moved to the end"
    )


def canonicalize(w: Work, base: str, merged: Merged) -> Resolved:
    """PR N's link for the placeholders of the entries the merge appends to `base`."""
    w.step("canonicalize")
    path = w.settings.changelog
    main_bytes = w.repo.read_blob(base, path) or b""
    if merged.data is None:
        raise w.refuse(f"{path} is missing after the merge", hint=f"restore {path} on the PR")
    result = edit.canonicalize(
        main_bytes, merged.data, w.options.pr, w.settings.policy(), path=path
    )
    if not result.ok:
        raise w.refuse("the merged changelog cannot be canonicalized", result.violations)
    rewrites = (*merged.rewrites, *(LinkRewritten(r.line, r.old, r.new) for r in result.rewrites))
    w.report.rewrites = list(rewrites)
    if result.rewrites:
        w.ok(f"{len(result.rewrites)} link(s) rewritten")
    elif rewrites:  # the resolve step wrote them: say so rather than "already final"
        w.ok(f"links final ({len(rewrites)} rewritten while resolving)")
    else:
        w.ok("links already final")
    return Resolved(merged.tree, result.data, merged.changed or result.changed, rewrites)
