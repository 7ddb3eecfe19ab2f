"""The runner launcher: each row through its runner's own launch script.

As InferenceX's job templates do on a runner node: a workspace checked out
from the swept commit (a copy of the checkout `dispatch` resolved the rows
in, one per row, under `<results>/.runner/`), `bash runners/launch_<prefix>.sh`
run there with the template's environment (`runner_jobs.contract_env`), then
the files the template's later steps collect copied into the row's result
folder. The script's own `salloc`/`srun` is the Slurm engine: gov allocates
nothing around it. Processes, timeouts and Ctrl-C are the local launcher's.

When the script ends, gov cancels the allocations its log shows granted (the
templates' post-run `scancel`, scoped to this row) and removes the workspace.
A failed script is the row's failure with the tail of its log; a log whose
allocation the cluster refused marks the outcome `refused` (GOV706, exit 2).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from governance.sweeps import runner_contract as contract
from governance.sweeps.launcher import JobEvent, JobOutcome, JobStatus, LaunchJob
from governance.sweeps.local_launcher import LocalLauncher

TAIL_BYTES = 64 * 1024  # how much of a log's end is read for its tail


def workspace_of(job: LaunchJob) -> Path:
    return Path(job.env["GITHUB_WORKSPACE"])


def stage(checkout: Path, workspace: Path) -> None:
    """A fresh copy of the checkout (without its `.git`), as the template's
    `actions/checkout` leaves one; symlinks stay links."""
    if workspace.exists():
        raise FileExistsError(f"workspace {workspace} exists: a row's workspace is its own")
    workspace.parent.mkdir(parents=True, exist_ok=True)
    top = str(checkout)
    shutil.copytree(
        checkout,
        workspace,
        symlinks=True,
        ignore=lambda folder, names: [".git"] if folder == top and ".git" in names else [],
    )


def collect(workspace: Path, result_dir: Path, patterns: Sequence[str], rf: str) -> list[str]:
    """Copy what `patterns` match in the workspace into the result folder
    (regular files only, never out of the workspace, never over gov's own
    files); returns the names copied."""
    root = workspace.resolve()
    copied: list[str] = []
    for pattern in patterns:
        for path in sorted(workspace.glob(pattern.format(RF=rf))):
            relative = path.relative_to(workspace)
            name = relative.as_posix()
            if path.is_symlink() or not path.is_file() or name in copied:
                continue
            if any(name.endswith(skip) for skip in contract.NOT_COLLECTED):
                continue
            if not path.resolve().is_relative_to(root):
                continue
            target = result_dir / relative
            if target.exists():
                continue  # gov-row.json, gov-job.log: gov's, not the script's
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            copied.append(name)
    return copied


def _tail(log: Path, size: int) -> str:
    """The last `size` bytes of `log`, decoded ("" if unreadable); the rest is never read."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def log_tail(log: Path, lines: int = contract.LOG_TAIL_LINES) -> str:
    text = _tail(log, TAIL_BYTES)
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept)


def refusal(log: Path) -> str:
    """The cluster's reason when the log shows a refused allocation and none granted."""
    text = _tail(log, TAIL_BYTES * 4)
    if contract.GRANTED.search(text):
        return ""
    return "; ".join(dict.fromkeys(m.strip() for m in contract.REFUSED.findall(text)))


def cancel_granted(log: Path) -> None:
    """`scancel` the allocations the script's log shows granted (an
    allocation made with `salloc --no-shell` outlives a killed script)."""
    try:
        ids = sorted(set(contract.GRANTED.findall(log.read_text("utf-8", "replace"))))
    except OSError:
        return
    if ids and shutil.which("scancel"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(["scancel", *ids], capture_output=True, timeout=30, check=False)


class RunnerLauncher(LocalLauncher):
    """Runs each row's runner script in a workspace of its own."""

    name = "runner"
    adopts = False  # a row runs in a workspace the next run cannot vouch for

    def __init__(self, environ: Mapping[str, str] | None = None, scope: Path | None = None) -> None:
        super().__init__(environ, scope)
        source = os.environ if environ is None else environ
        self._base.update({n: source[n] for n in contract.SECRETS if n in source})

    @classmethod
    def from_settings(cls, _settings: object, results: Path | None) -> RunnerLauncher:
        return cls(scope=results)

    def _command(self, job: LaunchJob) -> tuple[list[str], Path]:
        if job.checkout is None or "GITHUB_WORKSPACE" not in job.env:
            raise OSError("not a runner job (no checkout): use --launcher runner from gov launch")
        workspace = workspace_of(job)
        stage(job.checkout, workspace)
        script = workspace / job.script.relative_to(job.checkout)
        return ["bash", str(script)], workspace

    def launch(
        self,
        jobs: Sequence[LaunchJob],
        *,
        parallel: int,
        on_event: Callable[[JobEvent], None] | None = None,
    ) -> list[JobOutcome]:
        outcomes = super().launch(jobs, parallel=parallel, on_event=on_event)
        return [self._finished(outcome) for outcome in outcomes]

    def _finished(self, outcome: JobOutcome) -> JobOutcome:
        job = outcome.job
        cancel_granted(outcome.log_path)
        workspace = workspace_of(job)
        if workspace.is_dir():
            try:
                collect(workspace, job.result_dir, job.collect, job.env["RESULT_FILENAME"])
            finally:
                shutil.rmtree(workspace, ignore_errors=True)
        if outcome.status is not JobStatus.FAILED:
            return outcome
        refused = refusal(outcome.log_path)
        tail = log_tail(outcome.log_path)
        detail = f"{outcome.detail}: {tail}" if tail else outcome.detail
        return replace(outcome, detail=detail, refused=refused)
