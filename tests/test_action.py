"""gov's GitHub Action (`action.yml`) and the README's workflow, run the way
a runner runs them (tests/actions.py) on a fresh clone of InferenceX: a real PR
branch forked from an older main passes with its plan in the job summary; a
PR with a bad entry fails with annotations on its lines and no plan."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.actions import load, run_action, run_steps
from tests.harness import PROJECT, clone_corpus, copy_project, git, run_gov

pytestmark = pytest.mark.corpus

BRANCH = "pr/agent/update-b200-agentx-vllm-mtp-image"
PR = 2646
STEPS = ["Install gov", "Sweep gate", "Check the changelog"]  # the plan: --summary-plan


def readme_yaml(heading: str, marker: str) -> Any:
    """The README yaml block containing `marker`, below `heading`."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(heading) :]
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", section, re.DOTALL) if marker in b]
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(blocks[0])


def event(head: str, branch: str, number: int, labels: tuple[str, ...] = ()) -> dict[str, Any]:
    repository = {"full_name": "SemiAnalysisAI/InferenceX"}
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "draft": False,
            "labels": [{"name": name} for name in labels],
            "head": {"sha": head, "ref": branch, "repo": repository},
            "base": {"ref": "main", "repo": repository},
        },
        "repository": repository,
    }


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone whose origin is a fork (the upstream links stay canonical)."""
    target = clone_corpus(tmp_path_factory, "action")
    git(target, "remote", "set-url", "origin", "https://github.com/alice/InferenceX.git")
    return target


@pytest.fixture(scope="module")
def action_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The action's own checkout (what `uses: <org>/gov@<rev>` fetches)."""
    return copy_project(tmp_path_factory.mktemp("gov-action") / "gov")


@pytest.fixture(scope="module")
def python_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What actions/setup-python leaves: a Python with pip first on PATH."""
    venv = tmp_path_factory.mktemp("setup-python") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return str(venv / "bin")


def test_readme_workflow_uses_the_action_after_a_full_checkout() -> None:
    workflow = readme_yaml("In CI, the `check-changelog` workflow", "uses: <org>/gov@")
    steps = workflow["jobs"]["check-changelog"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[0]["with"]["fetch-depth"] == 0
    assert steps[1]["uses"] == "<org>/gov@<commit>"
    declared = load(PROJECT / "action.yml")["inputs"]
    assert {"base-ref", "head-ref", "pr", "plan"} <= set(declared)


def test_action_passes_a_real_pr_behind_main_and_summarizes_its_plan(
    clone: Path, action_dir: Path, python_bin: str, tmp_path: Path
) -> None:
    head = git(clone, "rev-parse", BRANCH)
    assert git(clone, "rev-list", "--count", f"{BRANCH}..origin/main") != "0"
    git(clone, "checkout", "-q", "--detach", head)  # what actions/checkout leaves
    workflow = readme_yaml("In CI, the `check-changelog` workflow", "uses: <org>/gov@")
    job = run_action(
        action_dir,
        workspace=clone,
        event=event(head, BRANCH, PR),
        scratch=tmp_path,
        with_=workflow["jobs"]["check-changelog"]["steps"][1].get("with"),
        path_prefix=python_bin,
    )
    assert job.exit_code == 0, job.stdout + job.stderr
    assert job.ran == STEPS
    assert "::error" not in job.stdout
    assert "### ✅ changelog check passed" in job.summary
    assert "PR mode" in job.summary or f"#{PR}" in job.summary
    base = git(clone, "merge-base", head, "origin/main")
    assert f"### Sweep plan `{base}`..`{head}`" in job.summary  # the fork point, not main
    assert "| single_node[agentic] | 11 |" in job.summary


def test_action_fails_a_bad_entry_with_annotations_and_no_plan(
    clone: Path, action_dir: Path, python_bin: str, tmp_path: Path
) -> None:
    git(clone, "checkout", "-q", "-B", "bad-entry", "origin/main")
    changelog = clone / "perf-changelog.yaml"
    changelog.write_bytes(
        changelog.read_bytes() + b"\n- config-keys:\n    - dsv4-fp4-b200-vlm\n"
        b'  description:\n    - "typo"\n  pr-link: PLACEHOLDER\n'
    )
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "bad entry")
    head = git(clone, "rev-parse", "HEAD")
    job = run_action(
        action_dir,
        workspace=clone,
        event=event(head, "bad-entry", 4242),
        scratch=tmp_path,
        path_prefix=python_bin,
    )
    assert job.exit_code == 1, job.stdout + job.stderr
    assert job.ran == STEPS  # one gov process: the failed check writes no plan
    line = changelog.read_bytes().count(b"\n")
    assert f"::error file=perf-changelog.yaml,line={line}" in job.stdout, job.stdout
    assert "GOV401" in job.stdout and "GOV501" in job.stdout
    assert "### ❌ changelog check failed" in job.summary
    assert "Sweep plan" not in job.summary


def test_readme_ci_command_runs_as_a_step(clone: Path, tmp_path: Path) -> None:
    """The README's one-line `run:` step, with gov on PATH, on the real PR branch."""
    step = readme_yaml("Or, with gov installed by other means", "- run: gov check")[0]
    head = git(clone, "rev-parse", BRANCH)
    git(clone, "checkout", "-q", "--detach", head)
    job = run_steps(
        [step],
        workspace=clone,
        event=event(head, BRANCH, PR),
        scratch=tmp_path,
        path_prefix=str(Path(sys.executable).parent),
    )
    assert job.exit_code == 0, job.stdout + job.stderr
    assert "### ✅ changelog check passed" in job.summary


def test_action_is_green_on_a_pr_that_appends_nothing(
    clone: Path, action_dir: Path, python_bin: str, tmp_path: Path
) -> None:
    """343 of 941 real branches touch no changelog: the check passes and the
    plan step says there is nothing to sweep instead of failing the job."""
    git(clone, "checkout", "-q", "-B", "docs-only", "origin/main")
    (clone / "NOTES.md").write_text("docs only\n")
    git(clone, "add", "NOTES.md")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "docs only")
    head = git(clone, "rev-parse", "HEAD")
    job = run_action(
        action_dir,
        workspace=clone,
        event=event(head, "docs-only", 4343),
        scratch=tmp_path,
        path_prefix=python_bin,
    )
    assert job.exit_code == 0, job.stdout + job.stderr
    assert job.ran == STEPS
    assert "### ✅ changelog check passed" in job.summary
    assert "nothing appended to `perf-changelog.yaml`: no sweep" in job.summary, job.summary
    assert "nothing appended: no sweep" in job.stdout  # the check's own line
    assert "GOV531" not in job.stdout + job.stderr + job.summary


def test_action_summary_plan_is_what_gov_plan_prints(
    clone: Path, action_dir: Path, python_bin: str, tmp_path: Path
) -> None:
    """The Action runs one gov process: the check's summary, then, byte for
    byte, what `gov plan --format markdown --empty-ok` prints for the same
    base, head and labels (the plan the check built, not a second plan)."""
    head = git(clone, "rev-parse", BRANCH)
    git(clone, "checkout", "-q", "--detach", head)
    labels = ("sweep-enabled", "agentx-fast")
    job = run_action(
        action_dir,
        workspace=clone,
        event=event(head, BRANCH, PR, labels),
        scratch=tmp_path,
        path_prefix=python_bin,
    )
    assert job.exit_code == 0, job.stdout + job.stderr
    check_summary = tmp_path / "check-only.md"
    common = ("--base-ref", "origin/main", "--head-ref", head, "--labels", ",".join(labels))
    check = run_gov(
        "check", *common, "--pr", str(PR), "--format", "github",
        cwd=clone, env={"GITHUB_STEP_SUMMARY": str(check_summary)},
    )  # fmt: skip
    plan = run_gov("plan", *common, "--format", "markdown", "--empty-ok", cwd=clone)
    assert check.exit_code == plan.exit_code == 0, check.stderr + plan.stderr
    assert "### Sweep plan" in plan.stdout
    # the gate's section first, then the check's, then the plan's
    assert job.summary.endswith(check_summary.read_text(encoding="utf-8") + plan.stdout)
    assert job.summary.startswith("### Sweep gate")
    # A check that built no plan (--no-configs) has the summary planned as `gov plan` plans.
    alone = tmp_path / "no-configs.md"
    check = run_gov(
        "check", *common, "--pr", str(PR), "--format", "github", "--no-configs", "--summary-plan",
        cwd=clone, env={"GITHUB_STEP_SUMMARY": str(alone)},
    )  # fmt: skip
    assert check.exit_code == 0, check.stdout + check.stderr
    assert alone.read_text(encoding="utf-8").endswith("\n" + plan.stdout)


def test_summary_plan_needs_the_github_format(clone: Path) -> None:
    result = run_gov("check", "--base-ref", "origin/main", "--summary-plan", cwd=clone)
    assert result.exit_code == 2
    assert "--summary-plan needs --format github" in result.stderr


def summary_rows(markdown: str) -> list[str]:
    """The row lines of a plan summary's per-section tables."""
    rows = []
    for block in re.findall(r"<details>.*?</details>", markdown, re.DOTALL):
        rows += [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    return [row for row in rows if not row.startswith("| config |")]


def test_action_summary_of_a_sweep_enabled_pr_lists_exactly_the_trimmed_rows(
    clone: Path, action_dir: Path, python_bin: str, tmp_path: Path
) -> None:
    """run-sweep.yml plans a `sweep-enabled` PR with --trim-conc: the summary
    shows those rows, not the untrimmed plan, and the check judged them."""
    head = git(clone, "rev-parse", BRANCH)
    git(clone, "checkout", "-q", "--detach", head)
    job = run_action(
        action_dir,
        workspace=clone,
        event=event(head, BRANCH, PR, ("sweep-enabled", "agentx-fast", "ci-patchwork")),
        scratch=tmp_path,
        path_prefix=python_bin,
    )
    assert job.exit_code == 0, job.stdout + job.stderr
    assert job.ran == STEPS
    assert "This event sweeps: synchronize with sweep-enabled." in job.summary, job.summary
    assert "`--trim-conc`" in job.summary
    base = git(clone, "merge-base", head, "origin/main")
    plan = ("plan", "--base-ref", "origin/main", "--head-ref", head, "--format", "markdown")
    trimmed = run_gov(*plan, "--trim-conc", cwd=clone)
    full = run_gov(*plan, cwd=clone)
    assert trimmed.exit_code == full.exit_code == 0, trimmed.stderr + full.stderr
    assert f"### Sweep plan `{base}`..`{head}`" in trimmed.stdout
    assert trimmed.stdout in job.summary and full.stdout not in job.summary
    shown = summary_rows(job.summary)
    assert shown == summary_rows(trimmed.stdout)
    assert (len(shown), len(summary_rows(full.stdout))) == (3, 12)
    assert "| single_node[agentic] | 2 |" in job.summary


def test_action_fails_on_two_sweep_labels_like_run_sweep_yml(
    clone: Path, action_dir: Path, python_bin: str, tmp_path: Path
) -> None:
    head = git(clone, "rev-parse", BRANCH)
    git(clone, "checkout", "-q", "--detach", head)
    labels = ("sweep-enabled", "full-sweep-fail-fast")
    job = run_action(
        action_dir,
        workspace=clone,
        event=event(head, BRANCH, PR, labels),
        scratch=tmp_path,
        path_prefix=python_bin,
    )
    assert job.exit_code == 1
    assert job.ran == STEPS[:2]
    assert "conflicting sweep labels: sweep-enabled, full-sweep-fail-fast" in job.stdout
