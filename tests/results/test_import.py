"""`gov runs import --artifacts DIR`: a sweep run's downloads, checked and mapped to row
identities, recorded once, and then reused by prepare-merge.

The artifact sets are built the way InferenceX's job templates leave them
(docs/results.md, 'Importing a sweep run'), from the plan `gov plan` gives for
the PR's head, then made inconsistent one way at a time."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.git.repo import GitRepo
from governance.sweeps.ledger import Ledger
from tests.harness import Repo, run_gov

PR = 9
KEY = "dsr1-fp8-mi300x-sglang"


def _node(row: dict[str, Any]) -> str:
    return f"{row['runner']}-amds_00"  # the runner node that ran it, as the template names it


def _processed(row: dict[str, Any], k: int) -> dict[str, Any]:
    return {
        "hw": _node(row),
        "conc": row["conc"],
        "image": row["image"],
        "model": row["model"],
        "infmax_model_prefix": row["model-prefix"],
        "framework": row["framework"],
        "precision": row["precision"],
        "spec_decoding": row.get("spec-decoding", "none"),
        "disagg": row.get("disagg", False),
        "recipe_fingerprint": row["recipe-fingerprint"],
        "isl": row["isl"],
        "osl": row["osl"],
        "is_multinode": False,
        "tp": row["tp"],
        "pp": row.get("pp", 1),
        "dcp_size": row.get("dcp-size", 1),
        "pcp_size": row.get("pcp-size", 1),
        "ep": row.get("ep", 1),
        "dp_attention": row.get("dp-attn", False),
        "tput_per_gpu": 1000.0 + k,
        "median_ttft": 0.25,
        "median_tpot": 0.01,
        "median_intvty": 100.0,
    }


def _eval_meta(row: dict[str, Any], stamp: str) -> dict[str, Any]:
    return {
        "runner": _node(row),
        "model_prefix": row["model-prefix"],
        "framework": row["framework"],
        "precision": row["precision"],
        "tp": row["tp"],
        "ep": row.get("ep", 1),
        "dp_attention": row.get("dp-attn", False),
        "conc": row["conc"],
        "isl": row["isl"],
        "osl": row["osl"],
        "timestamp": stamp,
    }


def write_artifacts(folder: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """A consistent download of a run that measured every row of `plan`."""
    aggregate, evals = [], []
    k = 0
    for bucket in plan.get("single_node", {}).values():
        for row in bucket:
            k += 1
            obj = _processed(row, k)
            name = f"{row['exp-name']}_conc{row['conc']}_{_node(row)}_recipe-{row['recipe-fingerprint'][:16]}"
            (folder / f"bmk_{name}").mkdir(parents=True)
            (folder / f"bmk_{name}" / f"agg_{name}.json").write_text(json.dumps(obj))
            aggregate.append(obj)
    for k, row in enumerate(plan.get("evals", [])):
        meta = _eval_meta(row, "2026-08-20T10:00:00Z")
        job = folder / f"eval_{row['exp-name']}_{k}"
        job.mkdir(parents=True)
        (job / "meta_env.json").write_text(json.dumps(meta))
        (job / "results_2026-08-20.json").write_text(
            json.dumps({"results": {"gsm8k": {"exact_match,strict-match": 0.9 + k / 100}}})
        )
        evals.append({**meta, "score": 0.9 + k / 100})
    (folder / "results_bmk").mkdir(parents=True)
    (folder / "results_bmk" / "agg_bmk.json").write_text(json.dumps(aggregate))
    (folder / "eval_results_all").mkdir(parents=True)
    (folder / "eval_results_all" / "eval_results.json").write_text(json.dumps(evals))
    (folder / "run-stats").mkdir()
    (folder / "run-stats" / "run_stats.json").write_text('{"mi300x": {"n_success": 1}}')
    return {"throughput": len(aggregate), "evals": len(evals)}


def head_plan(repo: Repo) -> dict[str, Any]:
    done = run_gov(
        "plan", "--base-ref", "main", "--head-ref", "pr", "--format", "json", cwd=repo.path
    )
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def imported_runs(repo: Repo) -> list[Any]:
    with Ledger(GitRepo(repo.path).git_dir / "gov" / "runs.sqlite3") as ledger:
        return [run for run in ledger.runs() if run.launcher == "import"]


def do_import(repo: Repo, folder: Path, *extra: str) -> Any:
    return run_gov(
        "runs", "import", "--artifacts", str(folder), "--commit", "pr", "--pr", str(PR),
        "--ci-run", "4242", "--format", "json", *extra, cwd=repo.path,
    )  # fmt: skip


def test_a_consistent_run_is_recorded_and_reused_at_merge(pr_repo: Repo, tmp_path: Path) -> None:
    counts = write_artifacts(tmp_path / "run", head_plan(pr_repo))
    assert counts["throughput"] > 0 and counts["evals"] > 0
    dry = do_import(pr_repo, tmp_path / "run", "--dry-run")
    assert dry.exit_code == 0, dry.stdout + dry.stderr
    assert len(json.loads(dry.stdout)["would_record"]) == sum(counts.values())
    assert imported_runs(pr_repo) == []  # a dry run records nothing

    done = do_import(pr_repo, tmp_path / "run")
    assert done.exit_code == 0, done.stdout + done.stderr
    runs = imported_runs(pr_repo)
    assert len(runs) == sum(counts.values())
    head = pr_repo.sha("pr")
    assert {r.commit_sha for r in runs} == {head} and {r.pr for r in runs} == {PR}
    assert all(r.identity and r.recipe and r.status == "succeeded" for r in runs)
    assert all(r.detail.startswith("imported from CI run 4242: ") for r in runs)

    again = do_import(pr_repo, tmp_path / "run")
    assert again.exit_code == 0 and len(json.loads(again.stdout)["already_imported"]) == len(runs)
    assert len(imported_runs(pr_repo)) == len(runs)

    pr_repo.git("checkout", "-q", "main")
    opened = run_gov("pr", "open", "--number", str(PR), "--branch", "pr", cwd=pr_repo.path)
    assert opened.exit_code == 0, opened.stderr
    merged = run_gov(
        "prepare-merge",
        "--pr",
        str(PR),
        "--sweep",
        "--dry-run",
        "--format",
        "json",
        cwd=pr_repo.path,
    )
    assert merged.exit_code == 0, merged.stdout + merged.stderr
    sweep = json.loads(merged.stdout)["sweep"]
    reused = {row["run_id"] for row in sweep["rows"] if row["action"] == "reused"}
    assert reused == {r.id for r in runs}, sweep["rows"]
    assert sweep["rerun"] == 0 and sweep["reused"] == len(runs)


def test_publish_reads_an_imported_run_like_its_own(pr_repo: Repo, tmp_path: Path) -> None:
    write_artifacts(tmp_path / "run", head_plan(pr_repo))
    assert do_import(pr_repo, tmp_path / "run").exit_code == 0
    compared = run_gov("results", "compare", "--pr", str(PR), "--format", "json", cwd=pr_repo.path)
    assert compared.exit_code == 0, compared.stdout + compared.stderr
    points = json.loads(compared.stdout)["comparisons"]
    assert points and all(p["pr"]["run"] in {r.id for r in imported_runs(pr_repo)} for p in points)


def _first(folder: Path, pattern: str) -> Path:
    return sorted(folder.glob(pattern))[0]


def _edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


def _move_point(run: Path, **changes: Any) -> None:
    """One job's point changed in its artifact and in the aggregate alike (consistent)."""
    job = _first(run, "bmk_*/agg_*.json")
    before = json.loads(job.read_text())
    job.write_text(json.dumps({**before, **changes}))
    _edit_json(
        run / "results_bmk" / "agg_bmk.json",
        lambda rows: [{**row, **changes} if row == before else row for row in rows],
    )


BREAKS: dict[str, tuple[Callable[[Path], None], str]] = {
    "a job artifact without its aggregate row": (
        lambda run: _edit_json(run / "results_bmk" / "agg_bmk.json", lambda rows: rows[1:]),
        "no row in results_bmk/agg_bmk.json",
    ),
    "an aggregate row without its job artifact": (
        lambda run: [p.unlink() for p in [_first(run, "bmk_*/agg_*.json")]] and None,
        "no job artifact",
    ),
    "a point twice in the aggregate": (
        lambda run: _edit_json(run / "results_bmk" / "agg_bmk.json", lambda rows: [*rows, rows[0]]),
        "appears twice",
    ),
    "an eval without its aggregate row": (
        lambda run: _edit_json(
            run / "eval_results_all" / "eval_results.json", lambda rows: rows[1:]
        ),
        "no row in eval_results_all/",
    ),
    "an aggregate eval row without its job": (
        lambda run: [p.unlink() for p in _first(run, "eval_*_0").iterdir()] and None,
        "no eval job artifact",
    ),
    "a result measured with another recipe": (
        lambda run: _edit_json(
            _first(run, "bmk_*/agg_*.json"), lambda obj: {**obj, "recipe_fingerprint": "0" * 64}
        ),
        "measured recipe 0000000000000000",
    ),
    "a point the plan does not have": (
        lambda run: _move_point(run, conc=4096),
        "no row of the plan",
    ),
}


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_an_inconsistent_run_is_refused_naming_the_artifact_and_records_nothing(
    pr_repo: Repo, tmp_path: Path, case: str
) -> None:
    write_artifacts(tmp_path / "run", head_plan(pr_repo))
    breaking, expected = BREAKS[case]
    breaking(tmp_path / "run")
    done = do_import(pr_repo, tmp_path / "run")
    assert done.exit_code == 1, done.stdout + done.stderr
    refused = json.loads(done.stdout)["refused"]
    [why] = refused  # one fault, one refusal
    assert expected in why and why.split(":")[0].startswith(("bmk_", "results_bmk", "eval_")), why
    assert imported_runs(pr_repo) == []


def test_a_rerun_eval_stands_by_its_newest_attempt(pr_repo: Repo, tmp_path: Path) -> None:
    plan = head_plan(pr_repo)
    write_artifacts(tmp_path / "run", plan)
    first = _first(tmp_path / "run", "eval_*_0")
    rerun = first.with_name(first.name + "_rerun")
    rerun.mkdir()
    meta = json.loads((first / "meta_env.json").read_text())
    (rerun / "meta_env.json").write_text(json.dumps({**meta, "timestamp": "2026-08-21T09:00:00Z"}))
    (rerun / "results_2026-08-21.json").write_text(
        json.dumps({"results": {"gsm8k": {"exact_match,strict-match": 0.5}}})
    )
    _edit_json(
        tmp_path / "run" / "eval_results_all" / "eval_results.json",
        lambda rows: [*rows, {**rows[0], "timestamp": "2026-08-21T09:00:00Z"}],
    )
    done = do_import(pr_repo, tmp_path / "run")
    assert done.exit_code == 0, done.stdout + done.stderr
    out = json.loads(done.stdout)
    assert len(out["dropped"]) == 1 and first.name in out["dropped"][0]
    kept = [r for r in out["recorded"] if r["artifact"].startswith("eval_")]
    assert rerun.name + "/" in {r["artifact"] for r in kept}
    assert first.name + "/" not in {r["artifact"] for r in kept}
