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
from governance.merge import decisions
from governance.merge.report import LinkRewritten
from governance.merge.work import Work


def merge(w: Work) -> None:
    w.step("merge")
    assert w.pull is not None
    head, path = w.pull.head_sha, w.settings.changelog
    if w.repo.is_ancestor(w.main_tip, head):
        w.data = w.repo.read_blob(head, path)
        w.ok(f"already contains {w.options.main_branch}@{w.main_tip[:10]}", "skipped")
        w.step("resolve")
        repaired = _repair_inserted(w, w.repo.read_blob(w.main_tip, path))
        w.ok("no conflict" + repaired, "ok" if repaired else "skipped")
        return
    merged = w.repo.objects.merge_tree(head, w.main_tip)
    blocking = decisions.blocking_conflicts(w.repo, merged, path)
    if blocking:
        names = ", ".join(v.path for v in blocking)
        raise w.refuse(
            f"merging {w.options.main_branch} conflicts outside the changelog: {names}",
            blocking,
            "merge main into the PR branch yourself, resolve these files, push, and re-run",
        )
    w.merged = merged
    conflicted = path in merged.stages
    w.ok(f"merged {w.options.main_branch}@{w.main_tip[:10]}" + (f"; {path} conflicts" * conflicted))
    w.step("resolve")
    if not conflicted:
        w.data = w.repo.read_blob_from_tree(merged.tree, path)
        repaired = _repair_inserted(w, w.repo.read_blob(w.main_tip, path))
        w.ok("no conflict" + repaired, "ok" if repaired else "skipped")
        return
    stages = {n: w.repo.read_blob_by_id(oid) for n, (_mode, oid) in merged.stages[path].items()}
    ours = stages[2]
    moved = move_inserted(stages[1], ours) if stages.get(1) else None
    if moved is not None:  # the PR inserted entries mid-history: re-append them at the end
        ours = moved[0]
    result = resolve_conflict(
        stages.get(1), ours, stages[3], w.options.pr, w.settings.policy(), path=path
    )
    if not result.ok:
        raise w.refuse("the changelog conflict cannot be resolved", result.violations)
    w.data, w.changed = result.data, True
    w.rewrites += [LinkRewritten(r.line, r.old, r.new) for r in result.rewrites]
    dropped = f"; dropped {len(result.dropped)} entry(ies) main gained" if result.dropped else ""
    links = f"; {len(result.rewrites)} link(s) rewritten" if result.rewrites else ""
    repair = _moved_note(moved[1]) if moved is not None else ""
    w.ok(f"kept main's bytes, re-appended the PR's entries{dropped}{links}{repair}")


def _repair_inserted(w: Work, main_bytes: bytes | None) -> str:
    """Entries the PR inserted between main's go to the end (their bytes
    unchanged): the repair `gov check --fix` makes, so the merge is not
    refused for it (GOV302). Returns what to say ("" when nothing moved)."""
    if w.data is None or not main_bytes:
        return ""
    moved = move_inserted(main_bytes, w.data)
    if moved is None:
        return ""
    w.data, w.changed = moved[0], True
    return _moved_note(moved[1])


def _moved_note(moved: tuple[Moved, ...]) -> str:
    lines = ", ".join(str(m.line) for m in moved)
    return (
        f"; repaired: {len(moved)} entry(ies) the PR inserted in the middle of history "
        f"(line {lines}) moved to the end"
    )


def canonicalize(w: Work) -> None:
    w.step("canonicalize")
    path = w.settings.changelog
    main_bytes = w.repo.read_blob(w.main_tip, path) or b""
    if w.data is None:
        raise w.refuse(f"{path} is missing after the merge", hint=f"restore {path} on the PR")
    result = edit.canonicalize(main_bytes, w.data, w.options.pr, w.settings.policy(), path=path)
    if not result.ok:
        raise w.refuse("the merged changelog cannot be canonicalized", result.violations)
    w.rewrites += [LinkRewritten(r.line, r.old, r.new) for r in result.rewrites]
    w.changed = w.changed or result.changed
    w.data = result.data
    w.report.rewrites = list(w.rewrites)
    if result.rewrites:
        w.ok(f"{len(result.rewrites)} link(s) rewritten")
    elif w.rewrites:  # the resolve step wrote them: say so rather than "already final"
        w.ok(f"links final ({len(w.rewrites)} rewritten while resolving)")
    else:
        w.ok("links already final")
