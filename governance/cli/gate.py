"""`gov sweep-gate`, and the `--labels` / `--event` modifiers of check and plan.

Both go through `core.sweep_gate`: the gate's rules come from main's
settings (never from the PR being judged), the event from the file GitHub
wrote; `modifiers_option` is how `gov check` and `gov plan` turn the same
labels into the same plan options.
"""

from __future__ import annotations

import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from governance.cli.common import (
    emit,
    emit_json,
    err,
    format_option,
    guarded,
    main_branch_name,
    state,
    warn_unknown_variables,
)
from governance.core.diagnostics import EXIT_FINDINGS, UsageError

if TYPE_CHECKING:
    from governance.core.gate_event import Event
    from governance.core.settings import Settings
    from governance.core.sweep_gate import Decision, Modifiers
    from governance.git.repo import GitRepo

LABELS_HELP = (
    "The PR's labels (comma-separated): plan with the modifiers they give a sweep "
    "(sweep-enabled: --trim-conc, evals-only, all-evals), as `gov sweep-gate` reads them."
)
EVENT_HELP = "A GitHub event file ($GITHUB_EVENT_PATH): plan with its PR's label modifiers."


class GateFormat(StrEnum):
    text = "text"
    json = "json"
    github_output = "github-output"


def read_event_file(path: Path, name: str | None) -> Event:
    """The event at `path` (bounded read), its name from `name`, else
    `$GITHUB_EVENT_NAME`, else its shape."""
    from governance.core.gate_event import MAX_EVENT_BYTES, read_event

    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_EVENT_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"event file {path}: {exc.strerror or exc}", "pass --event FILE") from exc
    return read_event(data, name or os.environ.get("GITHUB_EVENT_NAME") or None)


def modifiers_option(settings: Settings, labels: str | None, event: Path | None) -> Modifiers:
    """The modifiers `--labels` or `--event` ask for (none without either)."""
    from governance.core.sweep_gate import Modifiers, labels_option, modifiers

    rules = settings.gate_rules()
    if labels is not None and event is not None:
        raise UsageError("--labels and --event are exclusive", "pass one of them")
    if labels is not None:
        return labels_option(labels, rules)
    if event is None:
        return Modifiers()
    found = read_event_file(event, None)
    mods = modifiers(found.labels, rules, pull_request=found.name == "pull_request")
    if mods.conflict:
        return labels_option(",".join(mods.labels), rules)  # raises, naming them
    return mods


@guarded
def sweep_gate(
    event: Annotated[
        Path | None,
        typer.Option(
            "--event",
            help="The GitHub event file (default: $GITHUB_EVENT_PATH).",
            dir_okay=False,
        ),
    ] = None,
    event_name: Annotated[
        str | None,
        typer.Option(
            "--event-name",
            help="The event's name (default: $GITHUB_EVENT_NAME, else the payload's shape).",
        ),
    ] = None,
    head_message: Annotated[
        str | None,
        typer.Option(
            "--head-message",
            help="The PR head commit's message (default: read from this clone), "
            "for the skip marker.",
        ),
    ] = None,
    main_branch: Annotated[
        str | None, typer.Option("--main-branch", help="Main branch name.")
    ] = None,
    output: Annotated[GateFormat, format_option()] = GateFormat.text,
) -> None:
    """Does this event sweep the PR, and with which modifiers (run-sweep.yml's rules)?
    Exit 0 either way; 1 when the PR carries conflicting sweep labels."""
    from governance.check.sides import main_settings
    from governance.core.sweep_gate import decide
    from governance.git.repo import GitRepo

    named = os.environ.get("GITHUB_EVENT_PATH")
    path = event or (Path(named) if named else None)
    if path is None:
        raise UsageError("no event file", "pass --event FILE (in a workflow: $GITHUB_EVENT_PATH)")
    found = read_event_file(path, event_name)
    repo = GitRepo(state.repo_path)
    warn_unknown_variables()
    rules = main_settings(repo, main_branch_name(repo, main_branch)).gate_rules()
    decision = decide(found, rules)
    if decision.sweeps and found.name == "pull_request" and rules.skip_markers:
        message = head_message if head_message is not None else _head_message(repo, found)
        decision = decide(found, rules, message)
    if output is GateFormat.json:
        emit_json(decision.to_dict())
    else:
        emit(render_text(decision))
    if output is GateFormat.github_output:
        write_github_output(decision)
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(render_markdown(decision))
    if decision.conflict:
        err(f"gov sweep-gate: {decision.reason}")
        raise typer.Exit(EXIT_FINDINGS)


def _head_message(repo: GitRepo, found: Event) -> str:
    if not found.head_sha:
        raise UsageError(
            "the event names no head commit, so its skip marker cannot be read",
            "pass --head-message",
        )
    try:
        message = repo.commit_message(found.head_sha)
    except UsageError:
        message = None
    if message is None:
        raise UsageError(
            f"the PR's head commit {found.head_sha[:12]} is not in this clone",
            "check out with fetch-depth: 0, or pass --head-message",
        )
    return message


def render_text(decision: Decision) -> str:
    mods = decision.modifiers
    words = [w for w in sorted(mods.words) if w != "sweep"]
    lines = [
        f"sweep: {'yes' if decision.sweeps else 'no'} ({decision.reason})",
        f"labels: {', '.join(mods.labels) or 'none'}",
        f"modifiers: {', '.join(words) or 'none'}",
    ]
    if decision.reuse_gate:
        lines.append("reuse: a /reuse-sweep-run authorization could still skip this sweep")
    return "\n".join(lines)


def render_markdown(decision: Decision) -> str:
    """The job summary's lines: the decision, the labels, the plan's options."""
    from governance.core.safe_text import markdown_code, markdown_text

    mods = decision.modifiers
    verdict = "sweeps" if decision.sweeps else "does not sweep"
    lines = [
        "### Sweep gate",
        "",
        f"This event {verdict}: {markdown_text(decision.reason)}.",
    ]
    if mods.labels:
        lines.append("Labels: " + ", ".join(markdown_code(name) for name in mods.labels) + ".")
    if mods.plan_flags:
        flags = " ".join(markdown_code(f"--{flag}") for flag in sorted(mods.plan_flags))
        lines.append(f"The check and the plan below use {flags}.")
    return "\n".join(lines) + "\n\n"


def github_output_lines(decision: Decision, delimiter: str) -> str:
    """`key<<DELIMITER` blocks for $GITHUB_OUTPUT: no value can end its block
    or start another (a value holding the delimiter is refused)."""
    data = decision.to_dict()
    values = {
        "sweeps": "true" if decision.sweeps else "false",
        "reason": decision.reason,
        "labels": ",".join(decision.modifiers.labels),
        "sweep-label": data["sweep-label"],
        "plan-flags": " ".join(f"--{flag}" for flag in sorted(decision.modifiers.plan_flags)),
        **{k: str(v).lower() for k, v in data.items() if isinstance(v, bool)},
    }
    out = []
    for key, value in values.items():
        if delimiter in value:
            raise UsageError(f"a value of `{key}` holds the output delimiter", "run it again")
        out.append(f"{key}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(out)


def write_github_output(decision: Decision) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    if not target:
        raise UsageError(
            "$GITHUB_OUTPUT is not set", "use --format text or json outside a workflow"
        )
    import secrets  # the sweep-gate command alone writes GitHub outputs

    text = github_output_lines(decision, f"ghadelimiter_{secrets.token_hex(16)}")
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(text)
    sys.stdout.flush()
