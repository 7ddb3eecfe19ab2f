"""A small GitHub Actions runner for the tests: run a workflow's or a composite
action's `run:` steps the way the runner does.

Each `run:` step is written to a file and run as `bash --noprofile --norc -eo
pipefail FILE` in the workspace, under the variables GitHub sets for a
pull_request event (`GITHUB_EVENT_PATH`, `GITHUB_BASE_REF`, `GITHUB_SHA`,
`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`, `GITHUB_ACTION_PATH`, ...), after the
`${{ }}` expressions of its `run`, `env` and `if` are evaluated. Only the
expressions gov's action and README use are understood (`inputs.X`,
`steps.ID.outputs.X`, `github.event.*`, `github.action_path`, `X == 'v'`); any
other one fails the test rather than being guessed. A step fails the job at
its first non-zero exit, and later steps do not run (their implicit
`success()`). `uses: actions/setup-python` is the one action step stood in
for: the test puts a Python on PATH.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.harness import gov_environment

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
STOOD_IN = ("actions/setup-python@", "actions/checkout@")


@dataclass
class Job:
    """What a run left: the exit code, every step's output, the summary file."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    summary: str = ""
    ran: list[str] = field(default_factory=list)


@dataclass
class Context:
    inputs: dict[str, str]
    event: dict[str, Any]
    action_path: str = ""
    steps: dict[str, dict[str, str]] = field(default_factory=dict)

    def value(self, expression: str) -> str:
        comparison = re.fullmatch(r"(.+?)\s*==\s*'([^']*)'", expression)
        if comparison:
            return "true" if self.value(comparison.group(1)) == comparison.group(2) else "false"
        parts = expression.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return self.inputs[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get(parts[3], "")
        if parts[:2] == ["github", "action_path"]:
            return self.action_path
        if parts[:2] == ["github", "event"]:
            data: Any = self.event
            for key in parts[2:]:
                data = data.get(key) if isinstance(data, dict) else None
            return "" if data is None else str(data)
        raise AssertionError(f"the test runner does not evaluate `${{{{ {expression} }}}}`")

    def interpolate(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.value(m.group(1)), text)


def github_output(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: `key=value` lines and
    `key<<DELIMITER` blocks that end at a line equal to the delimiter."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        block = line.find("<<")
        equals = line.find("=")
        if block > 0 and (equals < 0 or block < equals):
            key, delimiter = line[:block], line[block + 2 :]
            end = lines.index(delimiter, index)  # a missing delimiter fails the step
            out[key] = "\n".join(lines[index:end])
            index = end + 1
        elif equals > 0:
            out[line[:equals]] = line[equals + 1 :]
    return out


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def run_steps(
    steps: list[dict[str, Any]],
    *,
    workspace: Path,
    event: dict[str, Any],
    scratch: Path,
    inputs: Mapping[str, str] | None = None,
    action_path: Path | None = None,
    path_prefix: str = "",
) -> Job:
    """Run `steps` (a job's or a composite action's) in `workspace`."""
    scratch.mkdir(parents=True, exist_ok=True)
    event_file = scratch / "event.json"
    event_file.write_text(json.dumps(event))
    summary = scratch / "step-summary.md"
    summary.write_text("")
    pull = event.get("pull_request") or {}
    env = gov_environment(
        {
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event_file),
            "GITHUB_BASE_REF": (pull.get("base") or {}).get("ref", ""),
            "GITHUB_HEAD_REF": (pull.get("head") or {}).get("ref", ""),
            "GITHUB_SHA": (pull.get("head") or {}).get("sha", ""),
            "GITHUB_REPOSITORY": event.get("repository", {}).get("full_name", ""),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(scratch),
        }
    )
    if action_path is not None:
        env["GITHUB_ACTION_PATH"] = str(action_path)
    if path_prefix:
        env["PATH"] = f"{path_prefix}:{env['PATH']}"
    context = Context(dict(inputs or {}), event, str(action_path or ""))
    job = Job()
    for index, step in enumerate(steps):
        name = step.get("name") or step.get("uses") or f"step {index + 1}"
        if "uses" in step:
            assert str(step["uses"]).startswith(STOOD_IN), f"cannot stand in for {step['uses']}"
            continue
        condition = step.get("if")
        if condition is not None and context.value(EXPRESSION.sub(r"\1", str(condition))) != "true":
            continue
        assert step.get("shell", "bash") == "bash", f"{name}: only bash steps are run"
        output = scratch / f"output-{index}"
        output.write_text("")
        script = scratch / f"step-{index}.sh"
        script.write_text(context.interpolate(str(step["run"])))
        step_env = {**env, "GITHUB_OUTPUT": str(output)}
        step_env.update(
            {k: context.interpolate(str(v)) for k, v in (step.get("env") or {}).items()}
        )
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        job.ran.append(name)
        job.stdout += done.stdout
        job.stderr += done.stderr
        if "id" in step:
            context.steps[step["id"]] = github_output(output.read_text())
        if done.returncode != 0:
            job.exit_code = done.returncode
            break
    job.summary = summary.read_text()
    return job


def run_action(
    action_dir: Path,
    *,
    workspace: Path,
    event: dict[str, Any],
    scratch: Path,
    with_: Mapping[str, str] | None = None,
    path_prefix: str = "",
) -> Job:
    """Run the composite action in `action_dir` with the step's `with:` inputs."""
    action = load(action_dir / "action.yml")
    assert action["runs"]["using"] == "composite"
    declared = action.get("inputs") or {}
    unknown = set(with_ or {}) - set(declared)
    assert not unknown, f"inputs the action does not declare: {sorted(unknown)}"
    inputs = {name: str(spec.get("default", "")) for name, spec in declared.items()}
    inputs.update(with_ or {})
    return run_steps(
        action["runs"]["steps"],
        workspace=workspace,
        event=event,
        scratch=scratch,
        inputs=inputs,
        action_path=action_dir,
        path_prefix=path_prefix,
    )
