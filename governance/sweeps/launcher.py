"""The seam between gov and whatever runs a benchmark row.

A launcher receives fully resolved jobs (script path, environment, result
folder) and reports one outcome per job. It never decides *what* runs: the
script resolution, the environment built from the row and the results folder
named by fingerprint and concurrency are settled before a job reaches it, so
the local launcher and the Slurm launcher cannot drift apart on those rules.
"""

from __future__ import annotations

import importlib
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


# Launchers by name. Only the chosen one is imported (Slurm code and its
# dependencies stay out of a local run).
LAUNCHERS = {
    "local": "governance.sweeps.local_launcher:LocalLauncher",
    "slurm": "governance.sweeps.slurm_launcher:SlurmLauncher",
}


def get_launcher(name: str, settings: Any = None, results: Path | None = None) -> Launcher:
    """Instantiate launcher `name`; a class may offer
    `from_settings(settings, results)` (`results`: the sweep results folder,
    beside which a launcher keeps its own working files)."""
    target = LAUNCHERS.get(name)
    if target is None:
        raise UsageError(f"unknown launcher {name!r}", "known: " + ", ".join(sorted(LAUNCHERS)))
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        cls = getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(
            f"launcher {name!r} is not available: {exc}",
            "use --launcher local, or install the launcher's module",
        ) from exc
    try:
        factory = getattr(cls, "from_settings", None)
        launcher = factory(settings, results) if callable(factory) else cls()
    except (OSError, RuntimeError, ValueError) as exc:
        raise UsageError(f"launcher {name!r} cannot start: {exc}", "check its settings") from exc
    return launcher
