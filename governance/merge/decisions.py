"""prepare-merge's decisions, kept free of I/O: which PRs may be prepared,
which merge conflicts stop the run, what commit to make, what the plan runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.core.settings import Settings
from governance.core.sweep_gate import modifiers
from governance.forge.base import PullRequest
from governance.git.objects import MergeTree
from governance.git.repo import GitRepo


def preflight_problems(
    pull: PullRequest, dirty: Sequence[str], settings: Settings, main_branch: str
) -> list[Violation]:
    """Everything that stops prepare-merge before it writes anything."""
    n = pull.number
    where = f"PR #{n}"
    # Untracked files do not block: the merge happens in memory and never
    # writes the working tree.
    problems = [
        violation(
            "GOV612",
            f"uncommitted change: {line[3:]}",
            line[3:],
            hint="commit, stash or restore it (git stash), then re-run",
        )
        for line in dirty
        if not line.startswith("??")
    ]
    if pull.state != "open":
        problems.append(
            violation("GOV613", f"PR #{n} is {pull.state}", where, hint="reopen it first")
        )
    elif not pull.head_sha:
        problems.append(
            violation(
                "GOV613",
                f"PR #{n} has no head commit (branch '{pull.head_branch}' is gone)",
                where,
                hint="restore the branch, or close the PR",
            )
        )
    if pull.is_fork:
        problems.append(
            violation(
                "GOV614",
                f"PR #{n} comes from a fork",
                where,
                hint="prepare-merge pushes to the PR branch: open the PR from this repository",
            )
        )
    if pull.base_branch != main_branch:
        problems.append(
            violation(
                "GOV601",
                f"PR #{n} targets '{pull.base_branch}', not '{main_branch}'",
                where,
                hint=f"retarget the PR, or pass --main-branch {pull.base_branch}",
            )
        )
    conflict = modifiers(pull.labels, settings.gate_rules()).sweep_labels
    if len(conflict) > 1:
        problems.append(
            violation(
                "GOV615",
                f"PR #{n} carries conflicting sweep labels: {', '.join(conflict)}",
                where,
                hint="keep exactly one of them (the sweep gate, like run-sweep.yml, refuses two)",
            )
        )
    elif settings.sweep_labels:
        present = [label for label in pull.labels if label in settings.sweep_labels]
        if len(present) != 1:
            found = ", ".join(present) or "none"
            problems.append(
                violation(
                    "GOV615",
                    f"PR #{n} needs exactly one sweep label, found {found}",
                    where,
                    hint="keep exactly one of: " + ", ".join(settings.sweep_labels),
                )
            )
    return problems


def blocking_conflicts(repo: GitRepo, merged: MergeTree, changelog: str) -> list[Violation]:
    """Conflicts prepare-merge does not resolve: any file but the changelog,
    and a changelog that one side deleted. Located at the first conflict marker."""
    problems: list[Violation] = []
    for path in merged.conflicts:
        stages = merged.stages[path]
        if path == changelog and 2 in stages and 3 in stages:
            continue
        line = 0
        data = repo.read_blob_from_tree(merged.tree, path)
        if data is not None:
            for number, text in enumerate(data.splitlines(), 1):
                if text.startswith(b"<<<<<<<"):
                    line = number
                    break
        if path == changelog:
            message = f"{path} was deleted on one side of the merge"
        else:
            message = f"merging main conflicts in {path}; only {changelog} is resolved by gov"
        problems.append(
            violation(
                "GOV611",
                message,
                path,
                line,
                1 if line else 0,
                "merge main into the PR branch, resolve the conflict by hand, push, re-run",
            )
        )
    return problems


@dataclass(frozen=True, slots=True)
class CommitPlan:
    tree: str | None  # None: the PR head's tree
    parents: list[str]
    message: str


def commit_plan(
    pull: PullRequest, main_branch: str, main_tip: str, merged: MergeTree | None, changed: bool
) -> CommitPlan | None:
    """The one commit to add on top of the PR head (None: it is already prepared).
    A merge of main (with the resolved, canonical changelog folded in: the
    reference amends its merge commit), else a canonicalization commit."""
    if merged is not None:
        message = f"Merge branch '{main_branch}' into {pull.head_branch}"
        return CommitPlan(merged.tree, [pull.head_sha, main_tip], message)
    if changed:
        message = f"fix: canonicalize PR #{pull.number} changelog link [skip-sweep]"
        return CommitPlan(None, [pull.head_sha], message)
    return None


EVAL_SECTIONS = ("evals", "agentic_evals", "multinode_evals", "multinode_agentic_evals")


def plan_rows(
    document: dict[str, Any], describe: Callable[[dict[str, Any]], tuple[str, ...]]
) -> list[str]:
    """One line per row the post-merge plan would run, section first."""
    lines: list[str] = []
    for kind in ("single_node", "multi_node"):
        for bucket, rows in document.get(kind, {}).items():
            lines += [f"{kind}[{bucket}] " + " ".join(c for c in describe(r) if c) for r in rows]
    for name in EVAL_SECTIONS:
        for row in document.get(name) or []:
            lines.append(f"{name} " + " ".join(c for c in describe(row) if c))
    return lines
