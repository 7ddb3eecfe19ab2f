"""Render results as text, JSON, GitHub workflow commands and markdown.

Renderers return strings; the CLI decides where they go.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from governance.core.diagnostics import Violation
from governance.core.plain import HIDDEN
from governance.core.safe_text import markdown_code, markdown_text, workflow_command, workflow_log

if TYPE_CHECKING:
    from governance.check.audit import AuditRow
    from governance.check.service import CheckResult

# GitHub shows at most 10 error annotations per step; more are dropped silently.
GITHUB_ANNOTATION_LIMIT = 10


def mode_label(result: CheckResult) -> str:
    mode = result.verdict.mode
    if mode.kind == "pr":
        return f"PR mode, #{mode.pr}"
    if mode.kind == "main":
        return "main mode" + (f", expecting #{mode.pr}" if mode.pr else "")
    return "draft mode"


# Text output shows this many findings, then says how many more there are
# (JSON output carries all of them). docs/security.md, "Bounds".
MAX_FINDINGS_SHOWN = 100
# An excerpt line longer than this is cut around the caret.
MAX_EXCERPT_CHARS = 200


class LineIndex:
    """Line starts of one snapshot, computed once: each excerpt is then a
    slice, so rendering is linear in the number of findings."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._starts: list[int] | None = None

    def line(self, number: int) -> bytes | None:
        if self._starts is None:
            starts, pos = [0], self.data.find(b"\n")
            while pos >= 0:
                starts.append(pos + 1)
                pos = self.data.find(b"\n", pos + 1)
            self._starts = starts
        if not 1 <= number <= len(self._starts):
            return None
        start = self._starts[number - 1]
        end = self._starts[number] - 1 if number < len(self._starts) else len(self.data)
        return self.data[start:end]


def excerpt(data: bytes | LineIndex, v: Violation) -> list[str]:
    """The offending source line with a caret under the column."""
    if not v.line:
        return []
    index = data if isinstance(data, LineIndex) else LineIndex(data)
    raw = index.line(v.line)
    if raw is None:
        return []
    text = raw.decode("utf-8", "replace").replace("\t", " ").replace("\r", "␍")
    if not text.isascii():  # a bidi override in the excerpt would reorder the output
        text = "".join("\ufffd" if char in HIDDEN else char for char in text)
    column = max(v.column - 1, 0)
    if len(text) > MAX_EXCERPT_CHARS:  # a 1 MB line is shown as a window around the caret
        left = max(0, min(column - MAX_EXCERPT_CHARS // 2, len(text) - MAX_EXCERPT_CHARS))
        text = ("…" if left else "") + text[left : left + MAX_EXCERPT_CHARS] + "…"
        column = column - left + (1 if left else 0)
    gutter = f"{v.line:>6} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * column + "^"
    return [gutter + text, caret]


def render_violation(
    v: Violation, data: bytes | LineIndex, *, label: str = "", severity: str = ""
) -> str:
    where = v.located() + (f" ({label})" if label else "")
    kind = f"{severity}: " if severity else ""
    out = [f"{where}: {kind}{v.code} {v.message}", *excerpt(data, v)]
    if v.hint:
        out.append(f"  hint: {v.hint}")
    return "\n".join(out)


def finding_bytes(result: CheckResult, v: Violation) -> bytes:
    """The bytes of the file a finding is about (empty when not at hand)."""
    if v.path != result.verdict.path:
        return result.other_files.get(v.path, b"")
    return result.base_bytes if v.source == "base" else result.head_bytes


def files_summary(violations: Sequence[Violation], fallback: str) -> str:
    """ "1 violation in configs/amd-master.yaml", "3 violations: 2 in a, 1 in b"."""
    counts: dict[str, int] = {}
    for v in violations:
        counts[v.path or fallback] = counts.get(v.path or fallback, 0) + 1
    n = len(violations)
    head = f"{n} violation{'s' if n != 1 else ''}"
    if len(counts) == 1:
        return f"{head} in {next(iter(counts))}"
    return f"{head}: " + ", ".join(f"{k} in {name}" for name, k in counts.items())


def render_text(result: CheckResult) -> str:
    verdict = result.verdict
    blocks = []
    indexes: dict[tuple[str, str], LineIndex] = {}
    for v in verdict.violations[:MAX_FINDINGS_SHOWN]:
        key = (v.path, v.source)
        if key not in indexes:  # one line index per file: rendering stays linear
            indexes[key] = LineIndex(finding_bytes(result, v))
        label = f"base, {result.base_label}" if v.source == "base" else ""
        blocks.append(render_violation(v, indexes[key], label=label))
    hidden = len(verdict.violations) - MAX_FINDINGS_SHOWN
    if hidden > 0:
        blocks.append(
            f"… and {hidden:,} more finding{'s' if hidden != 1 else ''} not shown "
            "(--format json lists all of them)"
        )
    for w in result.warnings[:MAX_FINDINGS_SHOWN]:
        blocks.append(render_violation(w, finding_bytes(result, w), severity="warning"))
    span = f"base {result.base_label} → head {result.head_label}"
    if verdict.ok:
        keys = f", {len(verdict.config_keys)} config key(s)" if verdict.config_keys else ""
        summary = (
            f"ok: {verdict.path}: {len(verdict.additions)} appended entr"
            f"{'y' if len(verdict.additions) == 1 else 'ies'}, "
            f"{len(verdict.corrections)} correction(s){keys} ({mode_label(result)}; {span})"
        )
        if not verdict.additions and not verdict.corrections:
            summary += "\nnothing appended: no sweep"
    else:
        counted = files_summary(verdict.violations, verdict.path)
        summary = f"{counted} ({mode_label(result)}; {span})"
    preflight = result.preflight.summary() if result.preflight else ""
    return "\n\n".join([*blocks, summary, *filter(None, [preflight, ignored_line(result)])]) + "\n"


def ignored_line(result: CheckResult) -> str:
    """What the `ignore` setting or --ignore turned off, with counts ("" if nothing)."""
    if not result.ignore:
        return ""
    counts = {code: 0 for code in result.ignore}
    for v in result.ignored:
        counts[v.code] = counts.get(v.code, 0) + 1
    parts = ", ".join(f"{code} ({n} finding{'s' if n != 1 else ''})" for code, n in counts.items())
    return f"ignored (stricter than the reference, turned off by `ignore`/--ignore): {parts}"


def result_dict(result: CheckResult) -> dict[str, object]:
    verdict = result.verdict
    return {
        "ok": verdict.ok,
        "mode": str(verdict.mode.kind),
        "pr": verdict.mode.pr,
        "base": result.base_label,
        "head": result.head_label,
        "additions": [
            {
                "index": e.index,
                "line": e.line,
                "config-keys": e.raw.get("config-keys"),
                "pr-link": e.pr_link,
            }
            for e in verdict.additions
        ],
        "corrections": verdict.corrections,
        "config_keys": verdict.config_keys,
        "violations": [v.to_dict() for v in verdict.violations],
        "ignore": list(result.ignore),
        "ignored": [v.to_dict() for v in result.ignored],
        "warnings": [v.to_dict() for v in result.warnings],
        "preflight": result.preflight.to_dict() if result.preflight else None,
    }


def render_json(result: CheckResult) -> str:
    return json.dumps(result_dict(result), indent=2, ensure_ascii=False, default=str) + "\n"


def github_annotations(violations: Sequence[Violation], level: str = "error") -> list[str]:
    lines = []
    for v in violations[:GITHUB_ANNOTATION_LIMIT]:
        props: dict[str, object] = {"file": v.path}
        if v.line:
            props["line"] = v.line
        if v.column:
            props["col"] = v.column
        props["title"] = f"{v.code} {v.rule}"
        message = v.message + (f"\nhint: {v.hint}" if v.hint else "")
        lines.append(workflow_command(level, message, **props))
    hidden = len(violations) - GITHUB_ANNOTATION_LIMIT
    if hidden > 0:
        lines.append(
            workflow_command(
                "notice",
                f"{hidden} more finding(s) than GitHub displays as annotations; "
                "see the log below for all of them",
                title="gov",
            )
        )
    return lines


def github_commands(result: CheckResult) -> str:
    """The annotations of a check, one workflow command a line."""
    annotations = github_annotations(result.verdict.violations)
    annotations += github_annotations(result.warnings, "warning")
    if result.ignore:
        annotations.append(workflow_command("notice", ignored_line(result), title="gov"))
    return "".join(line + "\n" for line in annotations)


def render_github(result: CheckResult) -> str:
    """The annotations, then the text log with every line a plain log line."""
    return github_commands(result) + workflow_log(render_text(result).rstrip("\n")) + "\n"


def render_markdown_summary(result: CheckResult) -> str:
    verdict = result.verdict
    head = "✅ changelog check passed" if verdict.ok else "❌ changelog check failed"
    out = [
        f"### {head}",
        "",
        f"{markdown_code(verdict.path)}: {markdown_text(mode_label(result))}; "
        f"base {markdown_text(result.base_label)}, head {markdown_text(result.head_label)}.",
        "",
    ]
    if verdict.ok and not verdict.additions and not verdict.corrections:
        out += ["nothing appended: no sweep", ""]
    if verdict.additions:
        out += ["| entry | line | config keys | pr-link |", "|---|---|---|---|"]
        for e in verdict.additions:
            keys = ", ".join(
                markdown_code(str(k), cell=True) for k in _listed(e.raw.get("config-keys"))
            )
            out.append(
                f"| {e.index} | {e.line} | {keys} | {markdown_code(str(e.pr_link), cell=True)} |"
            )
        out.append("")
    if verdict.violations:
        out += ["| code | where | problem | fix |", "|---|---|---|---|"]
        for v in verdict.violations[:MAX_FINDINGS_SHOWN]:
            cells = [v.code, v.located(), v.message, v.hint]
            out.append("| " + " | ".join(markdown_text(c) for c in cells) + " |")
        out.append("")
        hidden = len(verdict.violations) - MAX_FINDINGS_SHOWN
        if hidden > 0:
            out += [
                f"… and {hidden:,} more finding(s); `gov check --format json` lists all of them.",
                "",
            ]
    if result.warnings:
        out += ["| warning | where | problem | hint |", "|---|---|---|---|"]
        for v in result.warnings[:MAX_FINDINGS_SHOWN]:
            cells = [v.code, v.located(), v.message, v.hint]
            out.append("| " + " | ".join(markdown_text(c) for c in cells) + " |")
        out.append("")
    if result.preflight:
        out += [markdown_text(result.preflight.summary()), ""]
    if result.ignore:
        out += [markdown_text(ignored_line(result)), ""]
    return "\n".join(out) + "\n"


def _listed(value: object) -> list[object]:
    """An entry's config keys as a list (whatever the PR wrote there)."""
    if isinstance(value, list | tuple):
        return list(value)
    return [] if value is None else [value]


def render_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    cells = [[str(c) for c in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)
    ]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*headers), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*row) for row in cells]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_audit(rows: Iterable[AuditRow], ignore: Sequence[str] = ()) -> tuple[str, bool]:
    """A table of the commits that fail either mode, then totals; and
    whether any failed."""
    table = []
    checked = failed_main = failed_pr = absent = 0
    for row in rows:
        checked += 1
        absent += row.configs == "absent"
        pr_failed = row.pr_mode is not None and not row.pr_mode.ok
        if row.main.ok and not pr_failed:
            continue
        failed_main += not row.main.ok
        failed_pr += pr_failed
        first = (row.main.violations or (row.pr_mode.violations if row.pr_mode else []))[0]
        table.append(
            [
                row.commit[:10],
                f"#{row.pr}" if row.pr else "-",
                "ok" if row.main.ok else "FAIL",
                "-" if row.pr_mode is None else ("ok" if row.pr_mode.ok else "FAIL"),
                f"{first.code} {first.message[:70]}",
            ]
        )
    text = (
        render_table(["commit", "pr", "main", "pr-mode", "first finding"], table) if table else ""
    )
    text += (
        f"{checked} changelog commits checked: {failed_main} fail main mode, "
        f"{failed_pr} fail PR mode with their subject's number\n"
    )
    if absent:
        text += f"{absent} commit(s) had no master config yet: their config keys were not checked\n"
    if ignore:
        text += f"ignored (stricter than the reference): {', '.join(ignore)}\n"
    return text, bool(table)


def render_error(output: str, message: str, hint: str, exit_code: int) -> str:
    """A failure that stopped a command (usage, internal), in the format the
    command was asked for: one JSON object, or a workflow annotation."""
    if output in ("json", "jsonl"):  # jsonl: the same object on one line
        error = {"exit_code": exit_code, "message": message, "hint": hint}
        indent = 2 if output == "json" else None
        return json.dumps({"ok": False, "error": error}, indent=indent, ensure_ascii=False) + "\n"
    text = message + (f"\nhint: {hint}" if hint else "")
    return workflow_command("error", text, title="gov") + "\n"
