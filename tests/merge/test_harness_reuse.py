"""Reuse at merge decides on row identity, harness included, through the real
`gov prepare-merge --sweep` (and `sweep_after_merge` for a recipe row): a
harness file the PR changed after its sweep reruns its rows, even when the
PR's last commit restores it; a file only main changed is reused and
reported with main's commit, or rerun with `harness-change = "rerun"`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.core.settings import Settings, load_settings
from governance.git.repo import GitRepo
from governance.matrix.sources import plan_between
from governance.merge.sweep_service import sweep_after_merge
from tests.harness import Repo
from tests.sweeps.conftest import make_multinode_row, plan_of
from tests.sweeps.test_cli_sweeps import append_entry, gov

PR = 7
LIB = "launch/benchmarks/lib/cpu_bench.sh"
RECIPE = "launch/benchmarks/multi_node/srt-slurm-recipes/example-1p1d.yaml"
HARNESS_BY_PR = "harness changed by the PR since its sweep"


def edit(repo: Repo, path: str, line: str, message: str) -> str:
    repo.write(path, (repo.path / path).read_text() + line)
    return repo.commit(message)


def sweep_pr_head(repo: Repo, base: str, tmp_path: Path) -> None:
    """`gov launch` of the PR-head plan from the working tree, as the PR's sweep."""
    head = repo.git("rev-parse", "HEAD")
    plan = tmp_path / "head.json"
    plan.write_text(
        json.dumps(
            plan_between(GitRepo(repo.path), base, head, layout=Settings().layout()).document
        )
    )
    ran = gov(repo, "launch", "--plan", str(plan), "--parallel", "3", "--pr", str(PR))
    assert ran.exit_code == 0, ran.stderr


def prepare(repo: Repo) -> dict[str, Any]:
    done = gov(repo, "prepare-merge", "--pr", str(PR), "--sweep", "--no-push", "--format", "json")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.exit_code == 0, done.stdout + done.stderr
    sweep: dict[str, Any] = json.loads(done.stdout)["sweep"]
    return sweep


@pytest.fixture
def forked(sweep_repo: Repo) -> tuple[Repo, str]:
    """PR 7 forks from main and appends one entry (10 rows: 9 throughput, 1 eval)."""
    base = sweep_repo.git("rev-parse", "HEAD")
    sweep_repo.git("checkout", "-q", "-b", "pr")
    append_entry(sweep_repo, "dsr1-fp8-mi300x-sglang")
    assert gov(sweep_repo, "pr", "open", "--number", str(PR), "--branch", "pr").exit_code == 0
    return sweep_repo, base


def test_a_helper_doctored_for_the_sweep_and_restored_reruns(
    forked: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, base = forked
    edit(repo, LIB, "# doctored: numbers from elsewhere\n", "Tune the benchmark helper")
    sweep_pr_head(repo, base, tmp_path)  # measured with the doctored helper
    clean = repo.git("show", f"{base}:{LIB}")
    repo.write(LIB, clean + "\n")
    repo.commit("Restore the helper")
    # The PR's final diff is the changelog alone; main moves elsewhere.
    assert repo.git("diff", "--name-only", base, "pr") == "perf-changelog.yaml"
    repo.git("checkout", "-q", "main")
    repo.write("NOTES.md", "unrelated\n")
    repo.commit("Notes")
    sweep = prepare(repo)
    assert (sweep["reused"], sweep["rerun"]) == (0, 10)
    for row in sweep["rows"]:
        assert row["reason"] == HARNESS_BY_PR and row["status"] == "succeeded", row
        assert row["detail"].startswith(f"{LIB} changed after run "), row
        assert len(row["identity"]) == 64


def test_a_sweep_from_a_dirty_working_tree_is_never_put_on_main(
    forked: tuple[Repo, str], tmp_path: Path
) -> None:
    """The helper was doctored in the working tree only (never committed) for
    the sweep: no PR commit touches it, but the run did not run what its
    commit holds, so the drift is the PR's, not main's."""
    repo, base = forked
    clean = (repo.path / LIB).read_text()
    repo.write(LIB, clean + "# doctored, never committed\n")
    sweep_pr_head(repo, base, tmp_path)
    repo.write(LIB, clean)
    assert repo.git("status", "--porcelain") == ""
    repo.git("checkout", "-q", "main")
    repo.write("NOTES.md", "unrelated\n")
    repo.commit("Notes")
    sweep = prepare(repo)
    assert (sweep["reused"], sweep["rerun"]) == (0, 10)
    for row in sweep["rows"]:
        assert row["reason"] == HARNESS_BY_PR, row
        assert row["detail"].endswith(f"(which ran {LIB} as no commit holds it)"), row


def test_main_changing_a_helper_is_reused_and_listed_with_mains_commit(
    forked: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, base = forked
    sweep_pr_head(repo, base, tmp_path)
    repo.git("checkout", "-q", "main")
    fix = edit(repo, LIB, "# a harness fix, with its own changelog entry elsewhere\n", "Fix helper")
    text = gov(repo, "prepare-merge", "--pr", str(PR), "--sweep", "--dry-run")
    assert text.stdout.count(f"harness drift: {LIB} changed on main ({fix[:12]})") == 10, (
        text.stdout
    )
    sweep = prepare(repo)
    assert (sweep["reused"], sweep["rerun"]) == (10, 0)
    pr_head = repo.git("rev-parse", "pr")
    for row in sweep["rows"]:
        assert row["commit"] == pr_head and row["drift"] == [{"path": LIB, "commits": [fix]}]


def test_harness_change_rerun_makes_mains_drift_rerun(
    forked: tuple[Repo, str], tmp_path: Path
) -> None:
    repo, base = forked
    sweep_pr_head(repo, base, tmp_path)
    repo.git("checkout", "-q", "main")
    settings = (repo.path / "pyproject.toml").read_text() + 'harness-change = "rerun"\n'
    repo.write("pyproject.toml", settings)
    edit(repo, LIB, "# a harness fix\n", "Fix helper; rerun what it touches")
    sweep = prepare(repo)
    assert (sweep["reused"], sweep["rerun"]) == (0, 10)
    reasons = {row["reason"] for row in sweep["rows"]}
    assert reasons == {"harness changed on main since the sweep (harness-change = rerun)"}


def test_a_drift_no_commit_explains_reruns(forked: tuple[Repo, str], tmp_path: Path) -> None:
    """Main starts listing an old file in `harness-inputs`: the PR's runs never
    recorded it, and no commit since changed it, so nothing proves what they
    ran with: they rerun rather than being reported as main's drift."""
    repo, base = forked
    sweep_pr_head(repo, base, tmp_path)
    repo.git("checkout", "-q", "main")
    settings = (repo.path / "pyproject.toml").read_text()
    repo.write("pyproject.toml", settings + 'harness-inputs = ["configs/runners.yaml"]\n')
    repo.commit("Every row runs with the runner table")
    sweep = prepare(repo)
    assert (sweep["reused"], sweep["rerun"]) == (0, 10)
    for row in sweep["rows"]:
        assert row["reason"] == "harness changed since the sweep, by commits gov cannot tell"
        assert row["detail"].startswith("configs/runners.yaml differ from run "), row


def test_a_reused_row_says_what_its_identity_cannot_see(sweep_repo: Repo, tmp_path: Path) -> None:
    repo = sweep_repo
    edit(repo, LIB, 'if [ -n "${EXTRA_ENV:-}" ]; then . "$EXTRA_ENV"; fi\n', "Optional env file")
    base = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "pr")
    append_entry(repo, "dsr1-fp8-mi300x-sglang")
    assert gov(repo, "pr", "open", "--number", str(PR), "--branch", "pr").exit_code == 0
    sweep_pr_head(repo, base, tmp_path)
    repo.git("checkout", "-q", "main")
    sweep = prepare(repo)
    assert sweep["reused"] == 10
    line = len((repo.path / LIB).read_text().splitlines())
    for row in sweep["rows"]:
        assert row["untraced"] == [f"{LIB}:{line}: source $EXTRA_ENV"], row


@pytest.mark.parametrize("where", ["pr", "main"])
def test_an_in_repository_recipe_edited_after_the_sweep(
    sweep_repo: Repo, tmp_path: Path, where: str
) -> None:
    """A multi-node row names its srt-slurm recipe (CONFIG_FILE): the recipe is
    part of its harness; edited by the PR after the sweep the row reruns,
    edited by main it is reused and the drift names the recipe."""
    repo = sweep_repo
    row = make_multinode_row(
        runner="b200-multinode", framework="dynamo-sglang", prefill=[f"CONFIG_FILE={RECIPE}"]
    )
    document = plan_of([])
    document["multi_node"] = {"1k1k": [row]}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(document))
    main_tip = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "-q", "-b", "pr")
    swept = append_entry(repo, "dsr1-fp8-mi300x-sglang")
    ran = gov(repo, "launch", "--plan", str(plan), "--pr", str(PR))
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    if where == "main":
        repo.git("checkout", "-q", "main")
        changed = edit(repo, RECIPE, "# more decode memory\n", "Tune the recipe")
        main_tip = changed
        repo.git("checkout", "-q", "pr")
        repo.git("merge", "-q", "--no-edit", "main")
    else:
        edit(repo, RECIPE, "# more decode memory\n", "Tune the recipe")
    git = GitRepo(repo.path)
    head = repo.git("rev-parse", "HEAD")
    section = sweep_after_merge(
        git,
        load_settings(git.root),
        document,
        PR,
        [swept, head],
        dry_run=True,
        pr_touched=git.paths_touched(main_tip, head),
        progress=False,
    )
    (decision,) = section.decision.rows
    if where == "pr":
        assert decision.reason is not None and str(decision.reason) == HARNESS_BY_PR
        assert decision.detail.startswith(f"{RECIPE} changed after run ")
    else:
        assert decision.reused and [(d.path, d.commits) for d in decision.drift] == [
            (RECIPE, (changed,))
        ]
