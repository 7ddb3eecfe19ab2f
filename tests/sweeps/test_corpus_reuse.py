"""Reuse on real PR branches of the corpus.

For 20 PR branches whose merge with main conflicts only in the changelog: the
PR-head plan is launched through the local launcher (a trivial script per
row, real processes, real ledger), main is merged into the PR (git
merge-tree + gov's conflict resolution on the index stages, no worktree
touched), the post-merge plan is computed with `plan_between`, and
`sweep_after_merge` (dry run) decides per row.

Every rerun throughput row is a point (fingerprint, conc) the PR head never
ran. Nearly always its fingerprint is new too; the exception is main changing
a recipe's concurrency list (update-b200-agentx-vllm-mtp-image: the recipe ran
on the PR, main's conc list differs), which the test counts and prints.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from governance.changelog.resolve import resolve_conflict
from governance.gitrepo import GitRepo
from governance.matrix.sources import default_cache, plan_between
from governance.settings import Settings
from governance.sweeps.aftermerge import sweep_after_merge
from governance.sweeps.launch import launch_rows, resolve_rows
from governance.sweeps.ledger import Ledger
from governance.sweeps.local import LocalLauncher
from governance.sweeps.naming import ScriptResolver
from governance.sweeps.rows import conc_label, plan_rows
from tests.conftest import GOLDENS

pytestmark = pytest.mark.corpus

# The first 20 branches of pr-branches.jsonl (file order) with status
# `changelog-conflict`, a successful reference resolution (own or inferred PR
# number), and master configs at both the PR head and main from which gov
# plans; older branches predate configs/*-master.yaml.
BRANCHES = [
    "pr/agent/kimi-k3-gb300-agentx",
    "pr/kimik3-b300-lmcache",
    "pr/agentx/dsv4-gb300-tp-test",
    "pr/dsv4-gb300-trt-rerun",
    "pr/cquil11/test-aiperf-empty-ttft",
    "pr/amd/mi355x-agentx-dsv4-sgl-Aug15",
    "pr/glm5.2-fp4-b300-dynamo-trt-agentic-mtp",
    "pr/feat/kimik2.6-b200-dynamo-vllm-b200-new",
    "pr/yichaozhu/k3-51705-dcp-sa",
    "pr/dsv4-fp4-b200-dynamo-sglang-nscale",
    "pr/agent/refresh-kimi-k3-b200-agentic",
    "pr/amd/glm5.2-fp4-mi355x-sglang-disagg-agentic-hicache",
    "pr/glm5-fp8-b300-sglang-mtp-glm5.1-v0.5.15-post1",
    "pr/yichaozhu/k3-agentx-disagg-2602-51052",
    "pr/agentx/dsv4-gb200-pd-rev",
    "pr/yichaozhu/k3-dspark-dcp-v3-external-hit-ci",
    "pr/dsv4-fp4-b300-dynamo-trt-recipes",
    "pr/agent/update-b200-agentx-vllm-mtp-image",
    "pr/agent/append-only-qwen35-canary",
    "pr/yichaozhu/kimi-agentic-MooncakeLMCacheMP",
]
TRIVIAL = (
    "#!/bin/sh\nset -eu\n"
    ': > "$RESULT_DIR/$RESULT_FILENAME.json"\n'
    ': > "$RESULT_DIR/${RESULT_FILENAME}_0.json"\n'
    ': > "$RESULT_DIR/results.json"\n'
)


def _git(
    clone: Path, *args: str, data: bytes | None = None, env: dict[str, str] | None = None
) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t.invalid")
    full.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t.invalid")
    full.update(env or {})
    done = subprocess.run(["git", *args], cwd=clone, input=data, capture_output=True, env=full)
    if done.returncode not in (0, 1):  # merge-tree exits 1 on conflicts
        raise AssertionError(f"git {args[0]} failed: {done.stderr.decode()}")
    return done.stdout.decode()


def merge_commit(clone: Path, tmp: Path, case: dict, pr: int, settings: Settings) -> str:
    """Main merged into the PR, the changelog conflict resolved by gov."""
    out = _git(clone, "merge-tree", "--write-tree", case["branch_head"], case["main_head"])
    tree, *info = out.split("\n")
    stages: dict[int, str] = {}
    for line in info:
        if not line.strip():
            break
        meta, path = line.split("\t", 1)
        _mode, oid, stage = meta.split()
        assert path == settings.changelog, f"unexpected conflict in {path}"
        stages[int(stage)] = oid

    def blob(stage: int) -> bytes | None:
        return _git(clone, "cat-file", "blob", stages[stage]).encode() if stage in stages else None

    result = resolve_conflict(blob(1), blob(2) or b"", blob(3) or b"", pr, settings.policy())
    assert result.ok, result.violations
    oid = _git(clone, "hash-object", "-w", "--stdin", data=result.data).strip()
    index = {"GIT_INDEX_FILE": str(tmp / "index")}
    _git(clone, "read-tree", tree, env=index)
    _git(clone, "update-index", "--cacheinfo", f"100644,{oid},{settings.changelog}", env=index)
    merged = _git(clone, "write-tree", env=index).strip()
    parents = ["-p", case["branch_head"], "-p", case["main_head"]]
    return _git(clone, "commit-tree", merged, *parents, "-m", "merge main").strip()


def cases() -> list[tuple[dict, int]]:
    found = {}
    for line in (GOLDENS / "rules" / "pr-branches.jsonl").read_text().splitlines():
        case = json.loads(line)
        inferred = case.get("inferred") or {}
        if case["final"]["all_ok"]:
            found[case["branch"]] = (case, case["pr_number"])
        elif (inferred.get("final") or {}).get("all_ok"):
            found[case["branch"]] = (case, inferred["pr_number"])
    return [found[name] for name in BRANCHES]


def test_reuse_after_merging_main(corpus_clone: Path, tmp_path: Path) -> None:
    repo = GitRepo(corpus_clone)
    cache = default_cache(repo)
    totals: Counter[str] = Counter()
    for number, (case, pr) in enumerate(cases()):
        scratch = tmp_path / str(number)
        scripts = scratch / "scripts"
        settings = replace(
            Settings(),
            scripts=str(scripts),
            results=str(scratch / "results"),
            ledger=str(scratch / "runs.sqlite3"),
        )
        head = plan_between(repo, case["merge_base"], case["branch_head"], cache=cache)
        head_rows = plan_rows(head.document)
        resolver = ScriptResolver(scripts)
        for row in head_rows:  # one trivial script per name the rows resolve to
            script = scripts / resolver.resolve(row).tried[0]
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_text(TRIVIAL)
            script.chmod(0o755)
        resolved = resolve_rows(
            head_rows, ScriptResolver(scripts), scratch / "results", machine="corpus"
        )
        with Ledger(scratch / "runs.sqlite3") as ledger:
            ran = launch_rows(
                resolved, LocalLauncher(), ledger, commit=case["branch_head"], pr=pr, parallel=2
            )
        assert ran.ok, [(o.job.key, o.detail) for o in ran.outcomes if o.detail][:3]

        merged = merge_commit(corpus_clone, scratch, case, pr, settings)
        post = plan_between(repo, case["main_head"], merged, cache=cache)
        commits = _git(
            corpus_clone, "rev-list", f"{case['merge_base']}..{case['branch_head']}"
        ).split()
        section = sweep_after_merge(
            repo,
            settings,
            post.document,
            pr,
            commits,
            "local",
            dry_run=True,
            pr_head_document=head.document,
            progress=False,
        )
        head_fingerprints = {r.fingerprint for r in head_rows}
        head_points = {(r.fingerprint, conc_label(r)) for r in head_rows if r.fingerprint}
        for decision in section.decision.rerun:
            fingerprint = decision.row.fingerprint
            if fingerprint:
                assert (fingerprint, conc_label(decision.row)) not in head_points, decision
                if fingerprint in head_fingerprints:
                    totals["rerun: new conc of a recipe the PR ran"] += 1
        for decision in section.decision.reused:
            assert decision.reused_from and decision.reused_from.commit == case["branch_head"]
        reasons = Counter(str(d.reason) for d in section.decision.rerun)
        totals.update(reused=len(section.decision.reused), rerun=len(section.decision.rerun))
        totals.update(reasons)
        print(
            f"{case['branch']}: head {len(head_rows)} rows, post-merge {len(section.decision.rows)}: "
            f"{len(section.decision.reused)} reused, {len(section.decision.rerun)} rerun {dict(reasons)}"
        )
    print(f"{len(BRANCHES)} branches: {dict(totals)}")
    assert totals["reused"] > 0
