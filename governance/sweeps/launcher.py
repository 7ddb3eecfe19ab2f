"""The seam between gov and whatever runs a benchmark row.

A launcher receives fully resolved jobs (script path, environment, result
folder) and reports one outcome per job. It never decides *what* runs: the
script resolution, the environment built from the row and the results folder
named by fingerprint and concurrency are settled before a job reaches it, so
the local launcher and the Slurm launcher cannot drift apart on those rules.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from governance.core.diagnostics import UsageError

# What both launchers hand a script besides the row's own variables: enough
# to find tools and credentials, nothing else of the submitting shell.
INHERITED_ENV = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "TZ",
    "USER",
    "HF_TOKEN",
    "HF_HUB_CACHE",
)
# Of those, the secrets: never written to disk (the Slurm manifest names them,
# the job environment carries their values) and never printed.
SECRET_ENV = frozenset({"HF_TOKEN"})
LOG_NAME = "gov-job.log"  # combined stdout and stderr, inside each result folder


def utc_now() -> datetime:
    """Now, timezone-aware (every launcher timestamp is UTC)."""
    return datetime.now(UTC)


def read_record(path: Path) -> dict[str, object]:
    """A JSON object a row's wrapper wrote atomically (the local wrapper's
    launch and exit files, a Slurm task's status file); empty when it is not
    there yet, torn, or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def script_argv(script: Path) -> list[str]:
    """Executable scripts run directly (shebang honoured); others through bash."""
    return [str(script)] if os.access(script, os.X_OK) else ["bash", str(script)]


def inherited_env(environ: Mapping[str, str], *, secrets: bool = True) -> dict[str, str]:
    """The variables of `environ` a script inherits (`secrets=False`: without
    the secrets, for what is written to disk)."""
    return {
        name: environ[name]
        for name in INHERITED_ENV
        if name in environ and (secrets or name not in SECRET_ENV)
    }


class JobStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    TIMED_OUT = "timed-out"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class LaunchJob:
    """One row, ready to run: nothing in here is interpreted by a shell."""

    key: str  # unique within a launch: "<fingerprint[:16]>-conc<conc>" or "eval-..."
    script: Path  # absolute, already checked to lie inside the scripts folder
    env: Mapping[str, str]  # row fields under the reference's names (docs/sweeps.md)
    row_json: Path  # the row as a JSON file; its path is also in env["GOV_ROW_JSON"]
    result_dir: Path  # created by the launcher; the script's cwd and RESULT_DIR
    timeout_seconds: float
    # Multi-node rows: the nodes their prefill and decode workers need (one
    # Slurm job each, one task per node); None for a single-node row.
    nodes: int | None = None
    # The checkout of the commit being swept, for launchers that run a row
    # from a copy of it (the runner launcher's workspace); None otherwise.
    checkout: Path | None = None
    # What such a launcher copies from the workspace into `result_dir` when
    # the row ends: globs relative to the workspace, `{RF}` = RESULT_FILENAME.
    collect: tuple[str, ...] = ()
    # How far below the launch's top priority the row is (Slurm `--nice`, 0 =
    # top; docs/sweeps.md, 'Priority, canary, fail-fast'). Jobs arrive in
    # launch order; a launcher that cannot tell Slurm ignores it.
    nice: int = 0


@dataclass(frozen=True)
class JobEvent:
    """Progress notification: a job started or finished."""

    key: str
    status: JobStatus | None  # None while running
    at: datetime


@dataclass(frozen=True)
class JobOutcome:
    job: LaunchJob
    status: JobStatus
    exit_code: int | None
    started_at: datetime
    ended_at: datetime
    log_path: Path  # combined stdout and stderr, inside result_dir
    detail: str = ""  # why it failed, in one line
    # The cluster refused the row's allocation (its reason): a usage problem
    # (GOV706, exit 2), not a benchmark failure. "" otherwise.
    refused: str = ""


def not_run(
    job: LaunchJob, status: JobStatus, detail: str, at: datetime | None = None
) -> JobOutcome:
    """The outcome of a job that never ran (not started, or not launched):
    no exit code, started and ended `at` (now by default)."""
    when = at or utc_now()
    return JobOutcome(job, status, None, when, when, job.result_dir / LOG_NAME, detail)


class Launcher(Protocol):
    """Runs jobs and returns exactly one outcome per job, in input order,
    starting them in that order. A launcher may also offer `cancel()`
    (thread-safe, callable from `on_event`): stop starting jobs, end the
    running ones, report the unfinished ones cancelled (`--fail-fast`)."""

    name: str

    def launch(
        self,
        jobs: Sequence[LaunchJob],
        *,
        parallel: int,
        on_event: Callable[[JobEvent], None] | None = None,
    ) -> list[JobOutcome]: ...


@dataclass(frozen=True, slots=True)
class LauncherSpec:
    """One entry of the launcher registry: the CLI's `--launcher` choices and
    the docs' table come from here."""

    name: str
    target: str  # "module:Class", imported only when chosen
    summary: str  # one line for the docs and `--help`
    # "module:function" adapting resolved rows to this launcher before a
    # launch or a dry run (`dispatch.adapt_for_launcher`); "" when none.
    adapter: str = ""


# Launchers by name. Only the chosen one is imported (Slurm code and its
# dependencies stay out of a local run).
REGISTRY = (
    LauncherSpec(
        "local",
        "governance.sweeps.local_launcher:LocalLauncher",
        "each row's benchmark script as a process on this machine, K at a time",
    ),
    LauncherSpec(
        "slurm",
        "governance.sweeps.slurm_launcher:SlurmLauncher",
        "each row's benchmark script as a task of one Slurm job array (docs/slurm.md)",
    ),
    LauncherSpec(
        "runner",
        "governance.sweeps.runner_launcher:RunnerLauncher",
        "each row through its runner's `runners/launch_<node prefix>.sh`, in a workspace "
        "checked out from the swept commit, with the job template's environment",
        adapter="governance.sweeps.runner_jobs:adapt",
    ),
)
LAUNCHERS = {spec.name: spec.target for spec in REGISTRY}


def launcher_names() -> list[str]:
    """The registered launcher names, in registry order (the CLI's choices)."""
    return [spec.name for spec in REGISTRY]


def launcher_spec(name: str) -> LauncherSpec:
    for spec in REGISTRY:
        if spec.name == name:
            return spec
    raise UsageError(f"unknown launcher {name!r}", "known: " + ", ".join(launcher_names()))


def default_launcher(checkout: Path) -> str:
    """`runner` when the checkout has runner scripts (`runners/launch_*.sh`,
    InferenceX's layout), else `local`."""
    from governance.sweeps.runner_contract import RUNNERS_FOLDER, SCRIPT_GLOB

    folder = checkout / RUNNERS_FOLDER
    return "runner" if folder.is_dir() and any(folder.glob(SCRIPT_GLOB)) else "local"


def load_target(target: str, what: str) -> Any:
    """The attribute a "module:name" registry target names (UsageError if absent)."""
    module_name, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(
            f"launcher {what!r} is not available: {exc}",
            "use --launcher local, or install the launcher's module",
        ) from exc


def get_launcher(name: str, settings: Any = None, results: Path | None = None) -> Launcher:
    """Instantiate launcher `name`; a class may offer
    `from_settings(settings, results)` (`results`: the sweep results folder,
    beside which a launcher keeps its own working files)."""
    target = LAUNCHERS.get(name)
    if target is None:
        raise UsageError(f"unknown launcher {name!r}", "known: " + ", ".join(sorted(LAUNCHERS)))
    cls = load_target(target, name)
    try:
        factory = getattr(cls, "from_settings", None)
        launcher = factory(settings, results) if callable(factory) else cls()
    except (OSError, RuntimeError, ValueError) as exc:
        raise UsageError(f"launcher {name!r} cannot start: {exc}", "check its settings") from exc
    return launcher
