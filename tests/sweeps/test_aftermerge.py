"""sweep_after_merge on a real repository: the PR sweeps, main moves, the PR is
merged, and only the rows whose recipe or point is new run again."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from governance.core.diagnostics import FindingsError
from governance.core.settings import Settings, load_settings
from governance.git.repo import GitRepo
from governance.matrix.sources import plan_between
from governance.merge.sweep_service import sweep_after_merge
from governance.sweeps.ledger import Ledger
from governance.sweeps.reuse import ReuseMode
from tests.harness import Repo
from tests.sweeps.test_cli_sweeps import append_entry, gov

PR = 5


@pytest.fixture
def merged(sweep_repo: Repo, tmp_path: Path) -> dict[str, object]:
    repo = sweep_repo
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "pr")
    pr_head = append_entry(repo, "dsr1-fp8-mi300x-sglang", "dsv4-fp8-mi300x-vllm-mtp")
    head_plan = plan_between(GitRepo(repo.path), base, pr_head, layout=Settings().layout())
    plan = tmp_path / "head.json"
    plan.write_text(json.dumps(head_plan.document))
    ran = gov(repo, "launch", "--plan", str(plan), "--parallel", "3", "--pr", str(PR))
    assert ran.exit_code == 0, ran.stderr
    # Meanwhile on main: a new image for the MTP config, one more conc for dsr1.
    repo.git("checkout", "-q", "main")
    configs = (repo.path / "configs/amd-master.yaml").read_text()
    head, _, mtp = configs.partition("dsv4-fp8-mi300x-vllm-mtp:")
    mtp = mtp.replace("v0.11.2", "v0.12.0", 1)
    head = head.replace("conc-start: 4, conc-end: 64 }", "conc-start: 4, conc-end: 128 }", 1)
    repo.write("configs/amd-master.yaml", head + "dsv4-fp8-mi300x-vllm-mtp:" + mtp)
    main_head = repo.commit("Bump the MTP image; dsr1 1k1k up to conc 128")
    repo.git("checkout", "-q", "pr")
    repo.git("merge", "-q", "--no-edit", "main")
    post = plan_between(GitRepo(repo.path), main_head, "HEAD", layout=Settings().layout())
    return {"repo": repo, "head": head_plan.document, "post": post.document, "pr_head": pr_head}


def run(merged: dict[str, object], mode: ReuseMode = ReuseMode.AUTO, dry_run: bool = False):
    repo = merged["repo"]
    assert isinstance(repo, Repo)
    git_repo = GitRepo(repo.path)
    settings = load_settings(git_repo.root)
    return sweep_after_merge(
        git_repo,
        settings,
        merged["post"],  # type: ignore[arg-type]
        PR,
        [str(merged["pr_head"])],
        "local",
        mode,
        dry_run,
        pr_head_document=merged["head"],  # type: ignore[arg-type]
        parallel=3,
        progress=False,
    )


def test_reuses_what_matches_and_reruns_the_rest(merged: dict[str, object]) -> None:
    section = run(merged)
    reasons = Counter(str(d.reason) for d in section.decision.rerun)
    # dsr1: 1k1k conc 4..64, 8k1k conc 4..32, and the eval row (its own recipe)
    assert len(section.decision.reused) == 10
    assert [d.row.is_eval for d in section.decision.reused].count(True) == 1
    assert reasons == {
        "recipe changed by main": 5,  # the MTP config, conc 4..64
        "no run on a PR commit": 1,  # dsr1 1k1k conc 128: known recipe, new point
    }
    assert section.ok and section.launch is not None
    assert {str(o.status) for o in section.launch.outcomes} == {"succeeded"}
    rows = section.to_dict()["rows"]
    reused = [r for r in rows if r["action"] == "reused"]
    assert all(r["commit"] == merged["pr_head"] and r["run_id"] for r in reused)
    assert all(r["status"] == "succeeded" and r["run_id"] for r in rows if r["action"] == "rerun")
    text = section.render_text()
    assert text.startswith("sweep after merge (reuse): 10 reused, 6 rerun")
    assert "recipe changed by main (PR head ran " in text
    repo = merged["repo"]
    assert isinstance(repo, Repo)
    with Ledger(repo.path / ".git" / "gov" / "runs.sqlite3") as ledger:
        new = [r for r in ledger.runs(pr=PR) if r.commit_sha != merged["pr_head"]]
    assert len(new) == 6 and {r.commit_sha for r in new} == {repo.git("rev-parse", "HEAD")}
    # The new runs are on the merge commit, not a PR commit: a second decision
    # reruns the same rows.
    again = run(merged, dry_run=True)
    assert len(again.decision.rerun) == 6


def test_reuse_only_refuses_before_launching(merged: dict[str, object]) -> None:
    with pytest.raises(FindingsError) as caught:
        run(merged, ReuseMode.REUSE_ONLY)
    codes = {v.code for v in caught.value.violations}
    assert codes == {"GOV704"} and len(caught.value.violations) == 6
    assert any("recipe changed by main" in v.message for v in caught.value.violations)


def test_dry_run_and_rerun_all(merged: dict[str, object]) -> None:
    dry = run(merged, dry_run=True)
    assert dry.launch is None and len(dry.resolved) == 6
    assert {r["status"] for r in dry.to_dict()["rows"] if r["action"] == "rerun"} == {"dry-run"}
    everything = run(merged, ReuseMode.RERUN_ALL, dry_run=True)
    assert not everything.decision.reused and len(everything.resolved) == 16
