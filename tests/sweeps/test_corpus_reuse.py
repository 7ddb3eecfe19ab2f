"""Reuse on real PR branches of the corpus, through the real `prepare-merge`.

For 20 PR branches whose merge with main conflicts only in the changelog:

1. the PR-head plan is launched through the local launcher (a trivial script
   per row, real processes, real ledger), recorded at the PR head commit;
2. the PR is opened on the local forge of a private clone and
   `prepare_merge(..., PrepareOptions(pr, push=False, merge=False),
   sweep=SweepAfterMerge(...))` runs in-process: it merges main, resolves the
   changelog conflict, commits on the scratch ref, checks, plans, and its
   sweep step decides reuse per row and REALLY LAUNCHES the rerun rows (local
   launcher, the same trivial scripts: they finish instantly). Not a dry run:
   `PrepareOptions(dry_run=True)` would skip the journal and scratch ref and
   launch nothing, so the launch half of the sweep step would go untested.

The settings point `scripts`, `results` and `ledger` at absolute per-branch
scratch folders. `SweepAfterMerge` takes the scripts from a temporary
checkout of the prepared commit (`scripts_root / settings.scripts`), which
for an absolute `scripts` is that absolute path (pathlib); the test checks
that every merge-time run's script lies in the scratch folder.

Every rerun throughput row is a point (fingerprint, conc) the PR head never
ran. Nearly always its fingerprint is new too; the exception is main changing
a recipe's concurrency list (update-b200-agentx-vllm-mtp-image: the recipe ran
on the PR, main's conc list differs), which the test counts and prints.

`--no-push` keeps its result by design (docs/prepare-merge.md, "Reruns after
success"): the scratch ref `refs/gov/prepare-merge/pr-N` at the prepared commit and
a journal marked done. The test checks exactly that is what is left (no other
`refs/gov/…` ref, no linked worktree, branches unmoved), then discards
the result, so the next branch starts from a clean clone.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from governance.core.settings import Settings
from governance.forge.local import LocalForge, pr_open
from governance.git.repo import GitRepo
from governance.matrix.sources import default_cache, plan_between
from governance.merge import journal as jr
from governance.merge.prepare import PrepareOptions, prepare_merge
from governance.merge.sweep_step import SweepAfterMerge, SweepOptions
from governance.sweeps.dispatch import launch_rows
from governance.sweeps.harness_files import CheckoutHarness
from governance.sweeps.identity import conc_label, plan_rows
from governance.sweeps.ledger import Ledger
from governance.sweeps.local_launcher import LocalLauncher
from governance.sweeps.naming import ScriptResolver
from governance.sweeps.resolve import resolve_rows
from tests.harness import GOLDENS, require_corpus, writable_corpus_clone

pytestmark = pytest.mark.corpus

# The first 20 branches of pr-branches.jsonl (file order) with status
# `changelog-conflict`, a successful reference resolution (own or inferred PR
# number), and master configs at both the PR head and main from which gov
# plans; older branches predate configs/*-master.yaml. One of those first 20,
# pr/dsv4-gb300-trt-rerun, is refused by prepare-merge at `check` (GOV521: its
# merged master configs name runner `gb300-nv`, missing from
# configs/runners.yaml; the documented "stricter" difference of
# docs/merge-differences.md), so it is replaced by the next such branch in file
# order that prepares, pr/nv-glm5.2-fp4-b300-agentx (the one between them,
# pr/kimik3-dspark-fix1-drafter, is refused by M1: a key defined twice after
# the merge). All 20 below prepare successfully.
BRANCHES = [
    "pr/agent/kimi-k3-gb300-agentx",
    "pr/kimik3-b300-lmcache",
    "pr/agentx/dsv4-gb300-tp-test",
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
    "pr/nv-glm5.2-fp4-b300-agentx",
]
RECIPE = re.compile(r"CONFIG_FILE=benchmarks/([A-Za-z0-9._/-]+)")
TRIVIAL = (
    "#!/bin/sh\nset -eu\n"
    ': > "$RESULT_DIR/$RESULT_FILENAME.json"\n'
    ': > "$RESULT_DIR/${RESULT_FILENAME}_0.json"\n'
    ': > "$RESULT_DIR/results.json"\n'
)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private clone (not the shared `corpus_clone`): prepare-merge writes
    scratch refs, its journal and temporary worktrees into it."""
    require_corpus()
    return writable_corpus_clone(tmp_path_factory, "reuse-corpus")


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(clone), *args], check=True, capture_output=True, text=True
    ).stdout


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


def conc_of(value: Any) -> str:
    """`conc_label` for a report row's raw `conc` (int, or a multi-node list)."""
    return "x".join(str(v) for v in (value if isinstance(value, list) else [value]))


def test_reuse_after_merging_main(clone: Path, tmp_path: Path) -> None:
    repo = GitRepo(clone)
    cache = default_cache(repo)
    totals: Counter[str] = Counter()
    started = time.monotonic()
    for number, (case, pr) in enumerate(cases()):
        branch, pr_head = case["branch"], case["branch_head"]
        scratch = tmp_path / str(number)
        scripts = scratch / "scripts"
        settings = replace(
            Settings(),
            scripts=str(scripts),
            results=str(scratch / "results"),
            ledger=str(scratch / "runs.sqlite3"),
        )
        # 1. The PR's own sweep at its head.
        head = plan_between(
            repo, case["merge_base"], pr_head, layout=settings.layout(), cache=cache
        )
        head_rows = plan_rows(head.document)
        for commit in (pr_head, case["main_head"]):
            # Multi-node rows may name recipes of the repository (CONFIG_FILE=
            # benchmarks/…), which this bundle does not hold (configs only):
            # the scratch scripts folder gets one per name the configs use.
            for path in repo.file_paths(commit):
                if path.startswith("configs/") and path.endswith(".yaml"):
                    text = (repo.read_blob(commit, path) or b"").decode()
                    for name in RECIPE.findall(text):
                        recipe = scripts / name
                        recipe.parent.mkdir(parents=True, exist_ok=True)
                        recipe.touch()
        resolver = ScriptResolver(scripts)
        for row in head_rows:  # one trivial script per name the rows resolve to
            script = scripts / resolver.resolve(row).tried[0]
            script.parent.mkdir(parents=True, exist_ok=True)
            script.write_text(TRIVIAL)
            script.chmod(0o755)
        # The head's runs record their harness (these absolute scripts), as
        # `gov launch` does: without one a run is no reuse source.
        resolved = resolve_rows(
            head_rows,
            ScriptResolver(scripts),
            scratch / "results",
            machine="corpus",
            harness=CheckoutHarness(clone),
        )
        with Ledger(scratch / "runs.sqlite3") as ledger:
            ran = launch_rows(resolved, LocalLauncher(), ledger, commit=pr_head, pr=pr, parallel=2)
        assert ran.ok, [(o.job.key, o.detail) for o in ran.outcomes if o.detail][:3]
        head_run_ids = set(ran.run_ids.values())

        # 2. prepare-merge on the local forge, its sweep step launching the reruns.
        forge = LocalForge(repo, db_path=scratch / "forge.sqlite3")
        pr_open(forge, pr, branch, title=branch)
        sweep = SweepAfterMerge(
            repo, settings, SweepOptions(launcher="local", parallel=2, progress=False)
        )
        report = prepare_merge(
            repo, settings, forge, PrepareOptions(pr, push=False, merge=False), sweep=sweep
        )
        assert report.ok, (branch, report.status, [(s.name, s.detail) for s in report.steps])
        assert report.prepared and report.prepared != pr_head, report.status
        assert report.sweep_data is not None, (branch, report.status)

        # Nothing left behind but the documented --no-push result.
        listed = _git(clone, "worktree", "list", "--porcelain").splitlines()
        assert [w for w in listed if w.startswith("worktree ")] == [f"worktree {clone}"], listed
        scratch_ref = jr.scratch_ref(pr)
        refs = _git(clone, "for-each-ref", "--format=%(refname) %(objectname)", "refs/gov/")
        assert refs.split("\n") == [f"{scratch_ref} {report.prepared}", ""], refs
        journal_path = jr.journal_path(repo.git_dir, pr)
        kept = jr.load(journal_path)
        assert kept is not None and kept.done and kept.prepared == report.prepared
        assert repo.ref_sha(f"refs/heads/{branch}") == pr_head
        assert repo.ref_sha("refs/heads/main") == case["main_head"]
        assert repo.delete_ref(scratch_ref, report.prepared)  # discard the kept result
        jr.remove(journal_path)
        assert _git(clone, "for-each-ref", "refs/gov/") == ""

        # 3. Per row, from the report.
        data = report.sweep_data
        rows = data["rows"]
        assert isinstance(rows, list)
        reused = [r for r in rows if r["action"] == "reused"]
        rerun = [r for r in rows if r["action"] == "rerun"]
        assert len(reused) + len(rerun) == len(rows)
        assert (data["reused"], data["rerun"], data["ok"]) == (len(reused), len(rerun), True)
        assert data["dry_run"] is False
        assert report.sweep.startswith(
            f"sweep after merge (reuse): {len(reused)} reused, {len(rerun)} rerun\n"
        ), report.sweep
        head_fingerprints = {r.fingerprint for r in head_rows}
        head_points = {(r.fingerprint, conc_label(r)) for r in head_rows if r.fingerprint}
        for item in rerun:
            fingerprint = item["fingerprint"]
            if fingerprint:
                assert (fingerprint, conc_of(item["conc"])) not in head_points, item
                if fingerprint in head_fingerprints:
                    totals["rerun: new conc of a recipe the PR ran"] += 1
            assert item["status"] == "succeeded", item
        for item in reused:
            assert item["commit"] == pr_head and item["run_id"] in head_run_ids, item
        # The ledger agrees: the head's runs, plus one run per rerun row at the
        # prepared commit, its script taken from the absolute scratch folder.
        with Ledger(scratch / "runs.sqlite3") as ledger:
            runs = ledger.runs()
            stands = ledger.for_commit(report.prepared)
        # ... and records what the prepared commit's results are made of.
        assert sorted((origin, run.id) for origin, run in stands) == sorted(
            [("reused", r["run_id"]) for r in reused] + [("measured", r["run_id"]) for r in rerun]
        )
        new = {run.id: run for run in runs if run.id not in head_run_ids}
        assert {r["run_id"] for r in rerun} == set(new)
        for run in new.values():
            assert run.commit_sha == report.prepared and run.pr == pr, run
            assert run.status == "succeeded" and Path(run.script).is_relative_to(scripts), run

        reasons = Counter(str(r["reason"]) for r in rerun)
        totals.update(reused=len(reused), rerun=len(rerun))
        totals.update(reasons)
        print(
            f"{branch}: head {len(head_rows)} rows, post-merge {len(rows)}: "
            f"{len(reused)} reused, {len(rerun)} rerun {dict(reasons)}"
        )
    elapsed = time.monotonic() - started
    print(f"{len(BRANCHES)} branches in {elapsed:.1f}s: {dict(totals)}")
    assert totals["reused"] > 0
