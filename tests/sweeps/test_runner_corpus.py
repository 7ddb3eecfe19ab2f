"""The runner launcher on InferenceX's own runner layout (`inferencex-runners.bundle`, `main`).

The bundle holds the real `runners/launch_*.sh`, `configs/runners.yaml`,
`run-sweep.yml` and the two benchmark job templates. On the whole plan (an
entry with `config-keys: ["*"]`), `gov launch --dry-run` must give each row a
node of its runner and that node's `runners/launch_<prefix>.sh`, agreeing
with a resolution computed here from the bundle's files; and the environment
`--show-env` prints for a sample row must be what the job template computes,
evaluated here from the templates' own text (`gh_expressions`) and the launch
step's shell, run by bash.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from governance.core import yamlsafe
from governance.sweeps import runner_contract as contract
from governance.sweeps.identity import plan_rows
from tests.harness import CORPUS, plan_everything, run_gov
from tests.sweeps.gh_expressions import as_text, evaluate

pytestmark = pytest.mark.corpus

BUNDLE = CORPUS / "inferencex-runners.bundle"
ROW_LINE = re.compile(r"^(\S+)  (\S+)  -> .*\[runners/(launch_\S+\.sh) on (\S+)( \(.*\))?\]$")
RUNNER_PROBLEM = re.compile(r"^(\S+)  (\S+)  !! (GOV70\d) runner: (.*)$")


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    clone, document = plan_everything(BUNDLE, tmp_path_factory, "runners")
    plan = clone.parent / "plan.json"
    plan.write_text(document)
    dry = run_gov("-C", str(clone), "launch", "--plan", str(plan), "--dry-run", "--show-env")
    assert dry.exit_code in (0, 1) and "Traceback" not in dry.stderr, dry.stderr
    return clone, json.loads(document), dry.stdout


def runner_file(clone: Path) -> dict[str, list[str]]:
    return dict(yamlsafe.load((clone / "configs" / "runners.yaml").read_text())["labels"])


def has_script(clone: Path, node: str) -> bool:
    return (clone / "runners" / f"launch_{node.split('_', 1)[0]}.sh").is_file()


def nodes_of(labels: dict[str, list[str]], label: str) -> list[str]:
    """A label's nodes; one the file lacks: `cluster:<label>`, else nodes named `<label>_*`."""
    bare = label.removeprefix("cluster:")
    if label in labels:
        return labels[label]
    if f"cluster:{bare}" in labels:
        return labels[f"cluster:{bare}"]
    return [n for nodes in labels.values() for n in nodes if n.split("_", 1)[0] == bare]


def test_every_label_of_the_runner_file_resolves_to_its_scripts(
    whole: tuple[Path, dict[str, Any], str],
) -> None:
    clone, _, dry = whole
    labels = runner_file(clone)
    nodes = [n for ns in labels.values() for n in ns]
    resolved_labels = sum(any(has_script(clone, n) for n in ns) for ns in labels.values())
    resolved_nodes = sum(has_script(clone, n) for n in nodes)
    assert (
        f"runner file configs/runners.yaml: {resolved_labels} of {len(labels)} labels and "
        f"{resolved_nodes} of {len(nodes)} nodes resolve to a runner script"
    ) in dry
    missing: dict[str, int] = {}
    for node in nodes:
        if not has_script(clone, node):
            name = f"runners/launch_{node.split('_', 1)[0]}.sh"
            missing[name] = missing.get(name, 0) + 1
    for name, n in missing.items():
        assert f"  {n} node(s): {name} does not exist" in dry


def test_every_row_gets_a_node_of_its_runner_and_that_nodes_script(
    whole: tuple[Path, dict[str, Any], str],
) -> None:
    clone, document, dry = whole
    labels = runner_file(clone)
    label_of = {row.where: str(row.data.get("runner", "")) for row in plan_rows(document)}
    resolved = unresolvable = 0
    for line in dry.splitlines():
        if match := ROW_LINE.match(line):
            where, _, script, node, _ = match.groups()
            assert node in nodes_of(labels, label_of[where]), line
            assert script == f"launch_{node.split('_', 1)[0]}.sh" and has_script(clone, node)
            resolved += 1
        elif match := RUNNER_PROBLEM.match(line):
            usable = [n for n in nodes_of(labels, label_of[match.group(1)]) if has_script(clone, n)]
            assert not usable, line
            unresolvable += 1
    rows = len(re.findall(r"^\S+  \S+  (?:->|!!)", dry, re.MULTILINE))
    assert resolved > 0
    summary = re.search(
        r"^runner scripts: (\d+) rows: (\d+) resolved, (\d+) unresolvable$", dry, re.M
    )
    assert summary is not None
    assert (int(summary[1]), int(summary[2])) == (rows, resolved)
    by_reason = re.findall(r"^  unresolvable: (\d+) runner label", dry, re.MULTILINE)
    assert sum(int(n) for n in by_reason) == unresolvable


def env_block(text: str, name: str) -> dict[str, str]:
    """The `# environment of ...` block of `--show-env` whose header names
    `name`, read back by bash (the lines are shell assignments)."""
    block = text.split("# environment of ")
    found = next(b for b in block[1:] if name in b.splitlines()[0])
    lines = found.splitlines()[1:]
    names = [line.partition("=")[0] for line in lines]
    done = subprocess.run(
        ["bash", "-c", "set -a\n" + "\n".join(lines) + "\nenv -0"],
        env={}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    seen = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
    return {key: seen[key] for key in names}


def template_env(clone: Path, row: dict[str, Any], node: str, multi: bool) -> dict[str, str]:
    """What the job template gives `row` on `node`: run-sweep.yml's inputs, the
    template's `env:`, the launch step's `env:`, then its shell up to the runner script."""
    workflows = clone / ".github" / "workflows"
    name = "benchmark-multinode-tmpl.yml" if multi else "benchmark-tmpl.yml"
    sweep = yamlsafe.load((workflows / "run-sweep.yml").read_text())
    job = next(
        j for j in sweep["jobs"].values()
        if j.get("uses", "").endswith(f"/{name}") and re.search(r"\b\d+k\d+k\b", j.get("name", ""))
    )  # fmt: skip
    template = yamlsafe.load((workflows / name).read_text())
    declared = (template.get("on") or template[True])["workflow_call"]["inputs"]
    given = {k: evaluate(v, {"matrix": {"config": row}}) for k, v in job["with"].items()}
    inputs = {k: given.get(k, spec.get("default")) for k, spec in declared.items()}
    contexts: dict[str, Any] = {"inputs": inputs, "runner": {"name": node}, "secrets": {}}
    env = {k: as_text(evaluate(v, contexts)) for k, v in template["env"].items()}
    step = next(s for s in template["jobs"]["benchmark"]["steps"] if "Launch" in s.get("name", ""))
    contexts["env"] = env
    env.update({k: as_text(evaluate(v, contexts)) for k, v in step["env"].items()})
    shell = evaluate(step["run"].split("bash ./runners/launch_")[0], contexts)
    done = subprocess.run(
        ["bash", "-c", "set -e\n" + shell + "\nenv -0"],
        env={**env, "PATH": os.environ["PATH"], "GITHUB_ENV": os.devnull},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    after = dict(item.split("=", 1) for item in done.stdout.split("\0") if "=" in item)
    secrets = {k for k, v in template["env"].items() if "secrets." in str(v)}
    ignored = {"PATH", "GITHUB_ENV", "PWD", "SHLVL", "_", "OLDPWD"}
    return {k: v for k, v in after.items() if k not in secrets | ignored}


@pytest.mark.parametrize("multi", [False, True], ids=["single-node", "multi-node"])
def test_a_sample_rows_environment_is_the_templates(
    whole: tuple[Path, dict[str, Any], str], multi: bool
) -> None:
    clone, document, dry = whole
    kind = "multi" if multi else "single"
    header = next(line for line in dry.splitlines() if line.startswith(f"# environment of {kind}"))
    where, key = header.split()[3:5]
    row = next(r for r in plan_rows(document) if r.where == where)
    gov = env_block(dry, f"{where} {key}")
    expected = template_env(clone, dict(row.data), gov["RUNNER_NAME"], multi)
    assert gov["RUNNER_NAME"] in nodes_of(runner_file(clone), str(row.data["runner"]))
    differs = {
        name: (gov.get(name), value)
        for name, value in expected.items()
        if gov.get(name) != value and name not in contract.DEPARTURES
    }
    assert not differs
    # gov sets nothing else but the workspace and its own GOV_* names
    extra = set(gov) - set(expected) - {"GITHUB_WORKSPACE"}
    assert all(name.startswith("GOV_") for name in extra), extra
    assert len(expected) >= 45  # the template's whole environment was compared
    assert gov["GITHUB_WORKSPACE"].endswith(f"/.runner/dry-run/{key}")
