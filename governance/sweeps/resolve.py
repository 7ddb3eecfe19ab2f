"""Plan rows -> launch scripts: which script each row runs, and whether its
values can launch (docs/sweeps.md).

`resolve_rows` is what `gov launch --dry-run` and the check's sweep preflight
show; for a launch it also builds each row's job in a new launch folder
(`runfiles.launch_folder`). Launching what resolved is `sweeps.dispatch`'s.
The preflight runs on every hook after an edit, so the launchers, the
harness tracing and the job builder are imported only when a row is built
or traced.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from governance.core.diagnostics import UsageError
from governance.core.state import StateLayout
from governance.sweeps.identity import PlanRow, RowError, job_key, row_recipe
from governance.sweeps.jobs import DEFAULT_TIMEOUT_SECONDS, check_row
from governance.sweeps.naming import (
    DEFAULT_SCRIPT_NAMES,
    Resolution,
    ScriptResolver,
    TemplateError,
)

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.sweeps.harness import Harness
    from governance.sweeps.harness_files import CheckoutHarness
    from governance.sweeps.launcher import LaunchJob

HEX_PREFIX = re.compile(r"[0-9a-f]{1,64}")


@dataclass(frozen=True, slots=True)
class SweepPaths:
    scripts: Path
    results: Path
    ledger: Path
    checkout: Path  # the tree rows run from (their harness is read there)


def sweep_paths(root: Path, git_dir: Path, settings: Settings) -> SweepPaths:
    """Folders from settings; relative paths are relative to the repository root."""
    state = StateLayout(git_dir.resolve())
    scripts = root / settings.scripts
    results = root / settings.results if settings.results else state.results
    ledger = root / settings.ledger if settings.ledger else state.runs_db
    return SweepPaths(scripts, results, ledger, root)


def resolver_for(paths: SweepPaths, settings: Settings) -> ScriptResolver:
    table = settings.script_names or DEFAULT_SCRIPT_NAMES
    # How a CONFIG_FILE names the scripts folder: its path in the repository.
    relative = "" if Path(settings.scripts).is_absolute() else Path(settings.scripts).as_posix()
    try:
        return ScriptResolver(paths.scripts, table, recipe_prefix=f"{relative or 'benchmarks'}/")
    except TemplateError as exc:
        where = f"{settings.source or 'settings'}: script-names"
        raise UsageError(f"{where}: {exc}", "fix the template in [tool.gov.script-names]") from exc


@dataclass(frozen=True, slots=True)
class Resolved:
    """One plan row on its way to a launcher (job None: why in `problem`)."""

    row: PlanRow
    key: str
    script: Path | None
    job: LaunchJob | None  # None in a dry run (nothing built) or with a problem
    tried: tuple[str, ...] = ()
    problem: str = ""
    code: str = ""  # GOV702 no script / GOV703 unsafe value
    resolution: Resolution | None = None  # what the naming rules said
    harness: Harness | None = None  # the files the row runs (None: not traced)
    via: str = ""  # what runs the script, when a launcher's adapter says (runner and node)

    @property
    def ok(self) -> bool:
        return not self.problem


def select_only(rows: Sequence[PlanRow], only: Sequence[str]) -> list[PlanRow]:
    """Rows whose fingerprint starts with one of `only` (hex prefixes)."""
    if not only:
        return list(rows)
    prefixes = [p.lower() for p in only]
    for prefix in prefixes:
        if not HEX_PREFIX.fullmatch(prefix):
            raise UsageError(
                f"--only {prefix!r}: not a hex fingerprint prefix", "e.g. --only b5ed5309"
            )
    return [r for r in rows if r.fingerprint and r.fingerprint.startswith(tuple(prefixes))]


def resolve_rows(
    rows: Sequence[PlanRow],
    resolver: ScriptResolver,
    results_root: Path,
    *,
    machine: str,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    build: bool = True,
    harness: CheckoutHarness | None = None,
) -> list[Resolved]:
    """Script and job per row; `build=False` (dry run) only validates. The
    jobs of one call are one launch: their folders are
    `<results_root>/runs/<a new launch token>/<job key>/`. With `harness`,
    each resolved row also gets the files it runs."""
    launch_root = None
    if build:  # a dry run (the check's preflight) builds no job and makes no folder
        from governance.sweeps.runfiles import launch_folder

        launch_root = launch_folder(results_root)
    out: list[Resolved] = []
    seen: set[str] = set()
    for row in rows:
        try:
            key = job_key(row)
            row_recipe(row)
        except RowError as exc:
            out.append(Resolved(row, "-", None, None, (), str(exc), "GOV703"))
            continue
        if key in seen:  # the same point twice in one plan runs once
            continue
        seen.add(key)
        found = resolver.resolve(row)
        traced = None
        if harness is not None and not found.problem:
            entry = [p for p in (found.script, found.recipe_path) if p is not None]
            traced = harness.of(entry) if entry else None
        if found.problem:
            code = found.code or "GOV702"
            out.append(Resolved(row, key, None, None, found.tried, found.problem, code, found))
            continue
        if found.script is None and build:
            problem = (
                f"recipe {found.recipe} runs through {found.runner_missing}, which is not in "
                "the scripts folder (docs/sweeps.md, 'Multi-node rows')"
            )
            out.append(Resolved(row, key, None, None, found.tried, problem, "GOV702", found))
            continue
        try:
            if not build or found.script is None:
                check_row(row, machine)
                out.append(
                    Resolved(
                        row, key, found.script, None, found.tried, resolution=found, harness=traced
                    )
                )
                continue
            from governance.sweeps.jobs import build_job

            assert launch_root is not None
            job = build_job(
                row,
                found.script,
                launch_root=launch_root,
                machine=machine,
                timeout_seconds=timeout_seconds,
                key=key,
                recipe_path=found.recipe_path,
            )
        except RowError as exc:
            out.append(
                Resolved(row, key, found.script, None, found.tried, str(exc), "GOV703", found)
            )
            continue
        out.append(
            Resolved(row, key, found.script, job, found.tried, resolution=found, harness=traced)
        )
    return out
