"""gov check/audit against the reference's verdicts on the real InferenceX history.

Agreement bar: wherever the reference rejects, gov rejects, except where a
history replay accepts a link to the name the repository had at that commit
(`gov audit`, README: the reference judges old commits by today's name). Where
gov rejects and the reference accepts, every finding must be one of gov's
documented stricter rules (codes.STRICTER_CODES, docs/rules.md).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from governance.changelog.rules import CheckMode, Verdict, check
from governance.check.audit import audit, changelog_commits
from governance.core.codes import STRICTER_CODES
from governance.core.links import LinkPolicy
from governance.core.settings import Settings
from governance.git.repo import GitRepo

pytestmark = pytest.mark.corpus


LINK_KINDS = {"main-link-not-canonical", "pr-link-not-expected"}


def classify(reference_ok: bool, verdict: Verdict, reference: dict | None = None) -> str:
    """`reference`: the golden row of a history replay (its kind and appended links)."""
    if reference_ok and verdict.ok:
        return "agree: accept"
    if not reference_ok and not verdict.ok:
        return "agree: reject"
    if not reference_ok and any(w.code == "GOV316" for w in verdict.warnings):
        return "repair: history's missing final newline added (GOV316 note)"
    if reference is not None and reference["verdict"].get("kind") in LINK_KINDS:
        today = f"github.com/{Settings().repository}/"
        if reference["links"] and not any(today in link for link in reference["links"]):
            return "history: a link to the repository's name at that commit (gov audit)"
    if not reference_ok:
        return "MISSED: reference rejects, gov accepts"
    codes = sorted({v.code for v in verdict.violations})
    if set(codes) <= STRICTER_CODES:
        return "stricter: " + ",".join(codes)
    return "UNEXPLAINED: gov rejects with " + ",".join(codes)


def assert_bar(table: Counter[str], title: str) -> None:
    print(f"\n{title}")
    for outcome, count in sorted(table.items()):
        print(f"  {count:5d}  {outcome}")
    # The keys carry a mode prefix ("main mode: MISSED ..."): look inside them.
    bad = {k: v for k, v in table.items() if "MISSED" in k or "UNEXPLAINED" in k}
    assert not bad, bad


def test_audit_matches_main_history(corpus_clone: Path, goldens: Path) -> None:
    rows = [json.loads(line) for line in (goldens / "rules/main-history.jsonl").open()]
    repo = GitRepo(corpus_clone)
    commits = changelog_commits(repo, Settings(), "main")
    assert [c.sha for c in commits] == [r["commit"] for r in rows]
    table: Counter[str] = Counter()
    for golden, row in zip(rows, audit(repo, Settings(), commits, configs=False), strict=True):
        assert row.pr == golden["pr"]
        main = {"verdict": golden["main"], "links": golden["appended_links"] or []}
        table["main mode: " + classify(golden["main"]["ok"], row.main, main)] += 1
        if golden["pr_mode"] is not None:
            assert row.pr_mode is not None
            pr = {"verdict": golden["pr_mode"], "links": golden["appended_links"] or []}
            table["PR mode:   " + classify(golden["pr_mode"]["ok"], row.pr_mode, pr)] += 1
    assert sum(table.values()) == len(rows) + sum(r["pr_mode"] is not None for r in rows)
    assert_bar(table, "gov audit --no-configs vs main-history.jsonl")


@pytest.mark.parametrize("trust_base", [False, True], ids=["full", "append-fast-path"])
def test_pr_time_check_matches_pr_branches(
    corpus_clone: Path, goldens: Path, trust_base: bool
) -> None:
    repo = GitRepo(corpus_clone)
    policy = LinkPolicy()
    table: Counter[str] = Counter()
    for line in (goldens / "rules/pr-branches.jsonl").open():
        golden = json.loads(line)
        base = repo.read_blob(golden["merge_base"], "perf-changelog.yaml")
        head = repo.read_blob(golden["branch_head"], "perf-changelog.yaml")
        assert head is not None
        runs = [("synthetic N", golden["pr_number"], golden["pr_check"])]
        if golden["inferred"]:
            inferred = golden["inferred"]
            runs.append(("own N     ", inferred["pr_number"], inferred["pr_check"]))
        for label, number, reference in runs:
            verdict = check(
                base,
                head,
                policy,
                CheckMode.pr_mode(number),
                trust_base=trust_base,
                path="perf-changelog.yaml",
            )
            table[f"{label}: " + classify(reference["ok"], verdict)] += 1
    # links name the real PRs; one more reference rejection is the GOV316 repair
    assert table["synthetic N: agree: reject"] >= 369
    assert_bar(
        table, f"gov check --pr N vs pr-branches.jsonl ({'fast path' if trust_base else 'full'})"
    )
