"""`gov sweep-gate` as a command, and the same label modifiers on `gov check`
and `gov plan`: an append-only entry under `evals-only` is refused by the
check (GOV533 at the entry's line) exactly as by the plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.actions import github_output
from tests.harness import Repo, run_gov

AMD = "configs/amd-master.yaml"
ENTRY = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
    '    - "Add concurrency 256"\n  pr-link: XXX\n  append-only: true\n'
)


def pr_event(
    head: str, labels: list[str], action: str = "synchronize", **more: Any
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "action": action,
        "number": 7,
        "pull_request": {
            "number": 7,
            "draft": False,
            "labels": [{"name": name} for name in labels],
            "head": {"sha": head, "ref": "feature", "repo": {"full_name": "o/r"}},
            "base": {"ref": "main"},
        },
        "repository": {"full_name": "o/r"},
    }
    payload.update(more)
    return payload


def write_event(tmp_path: Path, payload: dict[str, Any]) -> Path:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload))
    return path


@pytest.fixture
def pr(example_repo: Repo) -> Repo:
    example_repo.git("checkout", "-q", "-b", "feature")
    return example_repo


def test_sweep_gate_reads_the_head_commit_s_skip_marker(pr: Repo, tmp_path: Path) -> None:
    head = pr.commit("tune", **{"NOTES.md": "x\n"})
    event = write_event(tmp_path, pr_event(head, ["sweep-enabled", "evals-only"]))
    done = run_gov("sweep-gate", "--event", str(event), "--format", "json", cwd=pr.path)
    assert done.exit_code == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["sweeps"] and data["sweep-label"] == "sweep-enabled"
    assert data["plan-flags"] == ["evals-only", "trim-conc"]
    head = pr.commit("retune again [skip-sweep]", **{"NOTES.md": "y\n"})
    event = write_event(tmp_path, pr_event(head, ["sweep-enabled"]))
    done = run_gov("sweep-gate", "--event", str(event), cwd=pr.path)
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("sweep: no (the head commit says [skip-sweep])"), done.stdout
    # a head commit the clone lacks: said, not guessed
    event = write_event(tmp_path, pr_event("b" * 40, ["sweep-enabled"]))
    done = run_gov("sweep-gate", "--event", str(event), cwd=pr.path)
    assert done.exit_code == 2 and "not in this clone" in done.stderr, done.stderr


def test_conflicting_sweep_labels_exit_1(pr: Repo, tmp_path: Path) -> None:
    event = write_event(tmp_path, pr_event("c" * 40, ["sweep-enabled", "full-sweep-enabled"]))
    done = run_gov("sweep-gate", "--event", str(event), cwd=pr.path)
    assert done.exit_code == 1
    assert "conflicting sweep labels: sweep-enabled, full-sweep-enabled" in done.stdout


def test_github_output_cannot_be_injected(pr: Repo, tmp_path: Path) -> None:
    """A label, an action and a branch name carrying newlines and a forged
    `sweeps=true` line reach $GITHUB_OUTPUT as data inside their block."""
    hostile = "docs\nsweeps=true\nplan-flags<<EOF\n--all-evals\nEOF"
    payload = pr_event("d" * 40, ["sweep-enabled", hostile], action="labeled")
    payload["label"] = {"name": hostile}
    payload["pull_request"]["head"]["ref"] = "x\nsweeps=true"
    output = tmp_path / "github_output"
    output.write_text("earlier=kept\n")
    summary = tmp_path / "summary.md"
    event = write_event(tmp_path, payload)
    done = run_gov(
        "sweep-gate",
        "--event",
        str(event),
        "--format",
        "github-output",
        cwd=pr.path,
        env={"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.exit_code == 0, done.stderr
    values = github_output(output.read_text())
    assert values["earlier"] == "kept"
    assert values["sweeps"] == "false"
    assert values["plan-flags"] == "--trim-conc"  # what the check judges, sweep or not
    assert values["labels"] == "sweep-enabled"  # only the gate's own label names
    assert hostile in values["reason"]  # the label is data inside the reason's block
    # the job summary: one paragraph, the label's text inert (no line of its own)
    text = summary.read_text()
    assert text.startswith("### Sweep gate\n") and "\nsweeps=true" not in text, text
    assert "labeled 'docs sweeps=true plan-flags&lt;&lt;EOF --all-evals EOF': not a" in text
    assert set(values) == {
        "earlier", "sweeps", "reason", "labels", "sweep-label", "plan-flags", "checks",
        "conflict", "reuse-gate", "trim-conc", "evals-only", "all-evals", "canary",
        "fail-fast", "agentx-fast",
    }  # fmt: skip


def test_a_hostile_event_file_is_exit_2(pr: Repo, tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text('{"action": "synchronize", "pull_request": {"draft": 1}}')
    done = run_gov("sweep-gate", "--event", str(event), "--format", "json", cwd=pr.path)
    assert done.exit_code == 2
    assert json.loads(done.stdout)["ok"] is False
    assert "must be" in done.stderr


def test_check_with_evals_only_refuses_the_append_only_case_plan_refuses(pr: Repo) -> None:
    text = (pr.path / AMD).read_text()
    (pr.path / AMD).write_text(
        text.replace("conc-start: 4, conc-end: 128", "conc-start: 4, conc-end: 256", 1)
    )
    changelog = pr.path / "perf-changelog.yaml"
    line = changelog.read_text().count("\n") + 2  # the entry's `- config-keys:` line
    changelog.write_text(changelog.read_text() + ENTRY)
    pr.commit("append-only: add conc 256")
    base = ("--base-ref", "main", "--pr", "7")
    plain = run_gov("check", *base, cwd=pr.path)
    assert plain.exit_code == 0, plain.stdout + plain.stderr  # without the label: fine
    checked = run_gov("check", *base, "--labels", "evals-only", cwd=pr.path)
    assert checked.exit_code == 1, checked.stdout
    planned = run_gov("plan", "--base-ref", "main", "--evals-only", "--format", "text", cwd=pr.path)
    assert planned.exit_code == 1
    where = f"perf-changelog.yaml:{line}:1: GOV533"
    assert where in checked.stdout, checked.stdout
    assert where in planned.stdout + planned.stderr, planned.stdout + planned.stderr
    by_labels = run_gov("plan", "--base-ref", "main", "--labels", "evals-only", cwd=pr.path)
    assert by_labels.exit_code == 1 and where in by_labels.stdout + by_labels.stderr
    # the event file gives the same modifiers
    event = pr.path.parent / "event.json"
    event.write_text(json.dumps(pr_event(pr.sha("HEAD"), ["sweep-enabled", "evals-only"])))
    by_event = run_gov("check", *base, "--event", str(event), cwd=pr.path)
    assert by_event.exit_code == 1 and where in by_event.stdout
    both = run_gov("check", *base, "--labels", "x", "--event", str(event), cwd=pr.path)
    assert both.exit_code == 2


def test_plan_with_sweep_enabled_is_the_trimmed_plan(pr: Repo) -> None:
    changelog = pr.path / "perf-changelog.yaml"
    changelog.write_text(changelog.read_text() + ENTRY.replace("  append-only: true\n", ""))
    pr.commit("retune")
    args = ("plan", "--base-ref", "main", "--format", "json")
    full = json.loads(run_gov(*args, cwd=pr.path).stdout)
    trimmed = json.loads(run_gov(*args, "--trim-conc", cwd=pr.path).stdout)
    labelled = json.loads(run_gov(*args, "--labels", "sweep-enabled", cwd=pr.path).stdout)
    assert labelled == trimmed != full
    conflict = run_gov(*args, "--labels", "sweep-enabled,full-sweep-fail-fast", cwd=pr.path)
    assert conflict.exit_code == 2 and "conflicting sweep labels" in conflict.stderr
