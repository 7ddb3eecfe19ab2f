"""prepare-merge's pure decisions: preflight findings, commit shape, plan rows."""

from __future__ import annotations

from dataclasses import replace

from governance.core.settings import Settings
from governance.forge.base import PullRequest
from governance.git.objects import MergeTree
from governance.merge import decisions

PULL = PullRequest(7, "t", "open", "topic", "a" * 40, "main", labels=("full-sweep-enabled",))


def codes(pull: PullRequest, dirty=(), settings: Settings | None = None) -> list[str]:
    found = decisions.preflight_problems(pull, list(dirty), settings or Settings(), "main")
    return [v.code for v in found]


def test_preflight_accepts_an_open_same_repo_pr() -> None:
    assert codes(PULL) == []


def test_preflight_findings_each_with_a_hint() -> None:
    assert codes(replace(PULL, is_fork=True)) == ["GOV614"]
    assert codes(replace(PULL, state="closed")) == ["GOV613"]
    assert codes(replace(PULL, head_sha="")) == ["GOV613"]
    assert codes(replace(PULL, base_branch="release")) == ["GOV601"]
    assert codes(PULL, dirty=[" M perf-changelog.yaml", "A  x.txt"]) == ["GOV612", "GOV612"]
    assert codes(PULL, dirty=["?? untracked.txt"]) == []  # the merge is in memory
    found = decisions.preflight_problems(replace(PULL, is_fork=True), [], Settings(), "main")
    assert all(v.hint for v in found)


def test_sweep_labels_only_when_configured() -> None:
    labelled = Settings(sweep_labels=("sweep-enabled", "full-sweep-enabled"))
    assert codes(PULL, settings=labelled) == []
    assert codes(replace(PULL, labels=()), settings=labelled) == ["GOV615"]
    both = replace(PULL, labels=("sweep-enabled", "full-sweep-enabled"))
    assert codes(both, settings=labelled) == ["GOV615"]
    assert codes(replace(PULL, labels=())) == []  # default: no label required


def test_commit_plan_shapes() -> None:
    merged = MergeTree("t" * 40, {})
    plan = decisions.commit_plan(PULL, "main", "m" * 40, merged, changed=False)
    assert plan is not None and plan.parents == ["a" * 40, "m" * 40] and plan.tree == "t" * 40
    assert plan.message == "Merge branch 'main' into topic"
    fix = decisions.commit_plan(PULL, "main", "m" * 40, None, changed=True)
    assert fix is not None and fix.parents == ["a" * 40] and "[skip-sweep]" in fix.message
    assert decisions.commit_plan(PULL, "main", "m" * 40, None, changed=False) is None


def test_plan_rows_cover_every_section() -> None:
    document = {
        "single_node": {"1k1k": [{"a": 1}], "8k1k": []},
        "multi_node": {"8k1k": [{"a": 2}]},
        "evals": [{"a": 3}],
        "agentic_evals": [],
    }
    rows = decisions.plan_rows(document, lambda row: (str(row["a"]), ""))
    assert rows == ["single_node[1k1k] 1", "multi_node[8k1k] 2", "evals 3"]
