"""What prepare-merge did: a plain data report, rendered as text or JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from governance.core.diagnostics import EXIT_FINDINGS, EXIT_OK, Violation

Outcome = Literal["ok", "skipped", "refused", "failed", "would"]


@dataclass(slots=True)
class StepReport:
    name: str
    outcome: Outcome
    detail: str = ""
    violations: list[Violation] = field(default_factory=list)
    hint: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "detail": self.detail,
            "hint": self.hint,
            "violations": [v.to_dict() for v in self.violations],
        }


@dataclass(frozen=True, slots=True)
class CommitMade:
    sha: str
    subject: str


@dataclass(frozen=True, slots=True)
class LinkRewritten:
    line: int
    old: str
    new: str


@dataclass(slots=True)
class MergeReport:
    pr: int
    forge: str
    dry_run: bool = False
    status: str = ""  # one line: "merged as …", "prepared …", "refused at …"
    steps: list[StepReport] = field(default_factory=list)
    commits: list[CommitMade] = field(default_factory=list)
    rewrites: list[LinkRewritten] = field(default_factory=list)
    pr_head: str = ""
    main_tip: str = ""
    prepared: str = ""
    merge_commit: str = ""
    plan_rows: list[str] = field(default_factory=list)  # rows the post-merge plan would run
    sweep: str = ""  # the sweep seam's report section, when one is configured
    sweep_data: dict[str, object] | None = None
    results: str = ""  # the PR's results compared with main's (text), when measured
    results_data: dict[str, object] | None = None
    failed_step: str | None = None
    exit_code: int = EXIT_OK

    @property
    def ok(self) -> bool:
        return self.failed_step is None

    def add(self, step: StepReport) -> StepReport:
        self.steps.append(step)
        if step.outcome in ("refused", "failed") and self.failed_step is None:
            self.failed_step = step.name
            self.exit_code = EXIT_FINDINGS
        return step

    def to_dict(self) -> dict[str, object]:
        return {
            "pr": self.pr,
            "forge": self.forge,
            "dry_run": self.dry_run,
            "ok": self.ok,
            "status": self.status,
            "failed_step": self.failed_step,
            "exit_code": self.exit_code,
            "pr_head": self.pr_head,
            "main_tip": self.main_tip,
            "prepared": self.prepared,
            "merge_commit": self.merge_commit,
            "steps": [s.to_dict() for s in self.steps],
            "commits": [{"sha": c.sha, "subject": c.subject} for c in self.commits],
            "rewrites": [{"line": r.line, "old": r.old, "new": r.new} for r in self.rewrites],
            "plan_rows": list(self.plan_rows),
            "sweep": self.sweep_data,
            "results": self.results_data,
        }


_MARK = {"ok": "ok", "skipped": "--", "refused": "NO", "failed": "!!", "would": ".."}


def render_text(report: MergeReport) -> str:
    lines = [f"gov prepare-merge --pr {report.pr} ({report.forge} forge)"]
    if report.dry_run:
        lines[0] += " -- dry run: nothing was changed"
    for step in report.steps:
        lines.append(f"  [{_MARK[step.outcome]}] {step.name:<12} {step.detail}".rstrip())
        for v in step.violations:
            lines.append(f"       {v.located()}: {v.code} {v.message}")
            if v.hint:
                lines.append(f"         hint: {v.hint}")
        if step.hint and step.outcome in ("refused", "failed"):
            lines.append(f"       hint: {step.hint}")
    for commit in report.commits:
        lines.append(f"  commit {commit.sha[:12]} {commit.subject}")
    for rewrite in report.rewrites:
        lines.append(f"  line {rewrite.line}: pr-link {rewrite.old} -> {rewrite.new}")
    if report.sweep:  # it names every row, reused or rerun
        lines.extend("  " + line for line in report.sweep.splitlines())
    elif report.plan_rows:
        lines.append(f"  post-merge plan: {len(report.plan_rows)} row(s) would run")
        lines.extend(f"    {row}" for row in report.plan_rows)
    if report.results:
        lines.append("  results compared with main (gov results compare):")
        lines.extend("    " + line for line in report.results.splitlines())
    lines.append(report.status)
    return "\n".join(lines) + "\n"


def render_json(report: MergeReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
