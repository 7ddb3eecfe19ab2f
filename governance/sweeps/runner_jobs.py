"""Rows -> runner jobs: the node a row runs on, its runner script, and the job
template's environment (the tables of `runner_contract`).

`adapt` is the runner launcher's adapter (`launcher.REGISTRY`): it takes the
rows `dispatch.resolve_rows` resolved (benchmark script, harness, job) and
gives each a node label of its runner from the runner file and that node's
`runners/launch_<prefix>.sh`, or the reason there is none. Everything a PR
controls is checked before it names a file: the runner label, the node names
of the runner file, the prefix; the script must lie inside `runners/`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from governance.core import yamlsafe
from governance.core.diagnostics import UsageError
from governance.sweeps import runner_contract as contract
from governance.sweeps.identity import PlanRow, checked_fingerprint
from governance.sweeps.jobs import (
    DEFAULT_TIMEOUT_SECONDS,
    build_job,
    extra_settings,
    result_filename,
)
from governance.sweeps.launcher import JobOutcome, LaunchJob
from governance.sweeps.runfiles import launch_folder

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.git.repo import GitRepo
    from governance.sweeps.resolve import Resolved, SweepPaths

WORKSPACES = ".runner"  # under the results folder: <results>/.runner/<launch>/<job key>
FALLBACK_NOTE = "label not in the runner file"


def load_runner_file(checkout: Path, settings: Settings) -> dict[str, tuple[str, ...]]:
    """Runner label -> its node names, from the runner file of `checkout`."""
    where = settings.runners
    path = checkout / where
    try:
        data = yamlsafe.load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{where}: cannot read the runner file in the swept checkout "
            f"({getattr(exc, 'strerror', None) or exc})",
            "the runner launcher picks a node of each row's runner label there; "
            "set `runners` in [tool.gov] or use --launcher local",
        ) from exc
    except yamlsafe.YamlLoadError as exc:
        raise UsageError(f"{where}: {exc.problem.message}", "`gov check --full` shows it") from exc
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict):
        raise UsageError(f"{where}: no `labels` mapping", "see docs/matrix.md, 'Runner file'")
    out: dict[str, tuple[str, ...]] = {}
    for label, nodes in labels.items():
        if isinstance(label, str) and isinstance(nodes, list):
            out[label] = tuple(str(node) for node in nodes)
    return out


@dataclass(frozen=True, slots=True)
class NodeChoice:
    label: str
    node: str = ""
    script: Path | None = None
    problem: str = ""  # why no node of the label has a runner script
    code: str = ""  # GOV702 none / GOV703 a name gov refuses
    fallback: str = ""  # how the nodes were found when the runner file lacks the label


@dataclass(slots=True)
class LabelSummary:
    """How the runner file's nodes resolve to runner scripts (the dry run's note)."""

    labels: int = 0
    labels_resolved: int = 0
    nodes: int = 0
    nodes_resolved: int = 0
    missing: dict[str, int] = field(default_factory=dict)  # missing script -> nodes
    refused: dict[str, int] = field(default_factory=dict)  # refused name -> nodes


def _fallbacks(label: str) -> list[tuple[str, str]]:
    """(kind, name) of each `runner_contract.LABEL_FALLBACKS` rule for `label`."""
    bare = label.removeprefix(contract.CLUSTER_PREFIX)
    rules = (rule.partition(":") for rule in contract.LABEL_FALLBACKS)
    return [(kind, template.format(label=label, bare=bare)) for kind, _, template in rules]


class RunnerScripts:
    """Node names -> runner scripts in one checkout; rows of a label take its
    nodes that have a script in turn (as a label's idle runners take jobs)."""

    def __init__(self, checkout: Path, labels: Mapping[str, tuple[str, ...]], where: str) -> None:
        self.folder = checkout / contract.RUNNERS_FOLDER
        self.labels = labels
        self.where = where
        self._turn: dict[str, int] = {}
        self._scripts: dict[str, tuple[Path | None, str, str]] = {}  # node -> script_for

    def script_for(self, node: str) -> tuple[Path | None, str, str]:
        """(script, problem, code) for one node name; looked up once per node
        (every row of a label asks for each of its nodes)."""
        if node not in self._scripts:
            self._scripts[node] = self._find_script(node)
        return self._scripts[node]

    def _find_script(self, node: str) -> tuple[Path | None, str, str]:
        if not contract.NODE_NAME.fullmatch(node):
            return None, f"node name {node!r:.80} in {self.where} is not a plain name", "GOV703"
        prefix = node.split(contract.PREFIX_SEPARATOR, 1)[0]
        if not contract.PREFIX_NAME.fullmatch(prefix):
            return None, f"node prefix {prefix!r:.80} is not a plain name", "GOV703"
        name = contract.SCRIPT_TEMPLATE.format(prefix=prefix)
        candidate = self.folder / name
        try:
            inside = candidate.resolve().is_relative_to(self.folder.resolve())
        except OSError:
            inside = False
        if not inside:
            return (
                None,
                f"{contract.RUNNERS_FOLDER}/{name} leaves {contract.RUNNERS_FOLDER}/",
                "GOV703",
            )
        if not candidate.is_file():
            return None, f"{contract.RUNNERS_FOLDER}/{name} does not exist", "GOV702"
        return candidate, "", ""

    def nodes_of(self, label: str) -> tuple[tuple[str, ...], str]:
        """The label's nodes, and how they were found when the runner file
        lacks the label ("" when it has it; `runner_contract.LABEL_FALLBACKS`)."""
        if label in self.labels:
            return self.labels[label], ""
        for kind, name in _fallbacks(label):
            if kind == "label" and name != label and name in self.labels:
                return self.labels[name], f"label {name}"
            if kind == "prefix":
                nodes = tuple(
                    dict.fromkeys(
                        node
                        for nodes in self.labels.values()
                        for node in nodes
                        if node.split(contract.PREFIX_SEPARATOR, 1)[0] == name
                    )
                )
                if nodes:
                    return nodes, f"nodes {name}_*"
        return (), ""

    def choose(self, label: str) -> NodeChoice:
        nodes, fallback = self.nodes_of(label)
        if not nodes:
            problem = f"runner label {label!r:.80} is not in {self.where}"
            tried = ", ".join(
                dict.fromkeys(
                    name + ("_*" if kind == "prefix" else "") for kind, name in _fallbacks(label)
                )
            )
            return NodeChoice(label, problem=f"{problem} (nor {tried})", code="GOV702")
        usable: list[tuple[str, Path]] = []
        reasons: list[str] = []
        code = "GOV702"
        for node in nodes:
            script, problem, found_code = self.script_for(node)
            if script is None:
                reasons.append(f"{node}: {problem}")
                code = "GOV703" if found_code == "GOV703" else code
            else:
                usable.append((node, script))
        if not usable:
            problem = f"no node of runner label {label} has a runner script ({'; '.join(reasons)})"
            return NodeChoice(label, problem=problem, code=code)
        turn = self._turn.get(label, 0)
        self._turn[label] = turn + 1
        node, script = usable[turn % len(usable)]
        return NodeChoice(label, node, script, fallback=fallback)

    def summary(self) -> LabelSummary:
        out = LabelSummary(labels=len(self.labels))
        for nodes in self.labels.values():
            resolved = 0
            for node in nodes:
                script, problem, code = self.script_for(node)
                out.nodes += 1
                if script is not None:
                    resolved += 1
                else:
                    bucket = out.refused if code == "GOV703" else out.missing
                    bucket[problem] = bucket.get(problem, 0) + 1
            out.nodes_resolved += resolved
            out.labels_resolved += bool(resolved)
        return out


def scripts_in(paths: SweepPaths, settings: Settings) -> RunnerScripts:
    labels = load_runner_file(paths.checkout, settings)
    return RunnerScripts(paths.checkout, labels, settings.runners)


def contract_env(
    row: PlanRow, env: Mapping[str, str], node: str, workspace: Path
) -> dict[str, str]:
    """The job template's environment for `row` on `node`: gov's row
    environment (`jobs.row_env`) held to the template's names, defaults,
    constants and launch-step values (`runner_contract`)."""
    multi = row.is_multinode
    names = contract.MULTI_NODE_NAMES if multi else contract.SINGLE_NODE_NAMES
    exported = {name for role in ("prefill", "decode") for name, _ in extra_settings(row, role)}
    out = dict.fromkeys(names, "")
    out.update(contract.DEFAULTS_MULTI if multi else contract.DEFAULTS_SINGLE)
    for name, value in env.items():
        if name in out or name in exported or name.startswith(contract.ADDED_PREFIX):
            out[name] = value
    out.update(contract.CONSTANTS_MULTI if multi else contract.CONSTANTS_SINGLE)
    for env_name, key in contract.JSON_NAMES.items():
        raw = row.data.get(key)
        if env_name in out and isinstance(raw, (dict, list)):
            out[env_name] = json.dumps(raw, indent=contract.JSON_INDENT, ensure_ascii=False)
    name = result_filename(row, node)
    fingerprint = checked_fingerprint(row)
    base = name.removesuffix(f"_recipe-{fingerprint[:16]}") if fingerprint else name
    out.update(RUNNER_NAME=node, RESULT_FILENAME=name, GITHUB_WORKSPACE=str(workspace))
    out["RESULT_FILENAME_BASE"] = base
    return out


def runner_job(item: Resolved, job: LaunchJob, choice: NodeChoice, paths: SweepPaths) -> LaunchJob:
    assert choice.script is not None
    workspace = paths.results / WORKSPACES / job.result_dir.parent.name / job.key
    env = contract_env(item.row, job.env, choice.node, workspace)
    return replace(
        job,
        script=choice.script,
        env=env,
        checkout=paths.checkout,
        collect=collected(item.row),
    )


def adapt(
    resolved: Sequence[Resolved], paths: SweepPaths, settings: Settings, *, build: bool
) -> list[Resolved]:
    """Each resolved row with its node and runner script (`via`), its job
    (when built) under the template's environment; a row whose runner has no
    script is a problem (GOV702, or GOV703 for a name gov refuses)."""
    scripts = scripts_in(paths, settings)
    built = [item.job for item in resolved if item.job is not None]
    out = []
    for item in resolved:
        job = item.job
        if not item.ok and not _runner_runs_recipe(item, build):
            out.append(item)
            continue
        choice = scripts.choose(str(item.row.data.get("runner", "")))
        if choice.script is None:
            problem = RUNNER_PROBLEM + choice.problem
            out.append(replace(item, job=None, problem=problem, code=choice.code))
            continue
        via = f"{contract.RUNNERS_FOLDER}/{choice.script.name} on {choice.node}"
        if choice.fallback:
            via += f" ({FALLBACK_NOTE}: {choice.fallback})"
        if job is None and build:  # a recipe row: the runner script runs CONFIG_FILE
            job = _recipe_job(item, choice, paths, built)
        job = runner_job(item, job, choice, paths) if job is not None else None
        out.append(replace(item, job=job, via=via, problem="", code=""))
    return out


def _runner_runs_recipe(item: Resolved, build: bool) -> bool:
    """A recipe row whose recipe runner is missing from the scripts folder:
    InferenceX's multi-node runner scripts run `CONFIG_FILE` themselves."""
    found = item.resolution
    return build and found is not None and bool(found.runner_missing) and item.code == "GOV702"


def _recipe_job(
    item: Resolved, choice: NodeChoice, paths: SweepPaths, built: Sequence[LaunchJob]
) -> LaunchJob:
    """The job of a recipe row, in the same launch folder as the others."""
    assert choice.script is not None
    root = built[0].result_dir.parent if built else launch_folder(paths.results)
    timeout = built[0].timeout_seconds if built else DEFAULT_TIMEOUT_SECONDS
    recipe = item.resolution.recipe_path if item.resolution is not None else None
    return build_job(
        item.row,
        choice.script,
        launch_root=root,
        machine=choice.node,
        timeout_seconds=timeout,
        key=item.key,
        recipe_path=recipe,
    )


def collected(row: PlanRow) -> tuple[str, ...]:
    """The globs the template's later steps collect for `row` (with `{RF}`)."""
    kind = "multi" if row.is_multinode else "single"
    patterns = contract.COLLECTED[f"{kind}-agentic" if row.is_agentic else kind]
    data: Mapping[str, Any] = row.data
    if row.is_eval or data.get("run-eval") is True:
        patterns = (*patterns, *contract.COLLECTED["eval"])
    return patterns


RUNNER_PROBLEM = "runner: "  # how a row's runner problem starts (the dry run groups them)


@contextmanager
def swept_checkout(
    repo: GitRepo, paths: SweepPaths, settings: Settings, launcher_name: str
) -> Iterator[SweepPaths]:
    """The paths rows resolve and run in. A launcher with an adapter runs rows
    from a checkout of the commit being swept (HEAD), as prepare-merge's sweep
    does: a temporary linked worktree, removed afterwards; the others use the
    working tree."""
    from governance.sweeps.launcher import launcher_spec

    if not launcher_spec(launcher_name).adapter:
        yield paths
        return
    # The pid in the name: a later run's clean-up knows whose it is.
    head = repo.worktree.head_sha()
    with repo.worktree.temporary_checkout(head, f"gov-launch-{os.getpid()}-") as tree:
        scripts = Path(settings.scripts)
        yield replace(
            paths, scripts=scripts if scripts.is_absolute() else tree / scripts, checkout=tree
        )


def refused_allocations(outcomes: Sequence[JobOutcome]) -> None:
    """GOV706 (exit 2) when the cluster refused a row's allocation: the
    cluster's or the settings' problem, with the scripts' own reasons."""
    refused = [o for o in outcomes if o.refused]
    if not refused:
        return
    reasons = "; ".join(f"{o.job.key}: {o.refused}" for o in refused)
    raise UsageError(
        f"GOV706 launch-rejected: the cluster refused {len(refused)} row(s)' allocation: "
        + reasons,
        "the runner script's salloc asked for what the cluster does not have (partition, "
        "nodes, GPUs); check it with `sinfo` and the script's log in the row's result folder",
    )
