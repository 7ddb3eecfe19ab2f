"""Launchers by name. Only the chosen one is imported (Slurm code and its
dependencies stay out of a local run)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from governance.diagnostics import UsageError
from governance.sweeps.launcher import Launcher

LAUNCHERS = {
    "local": "governance.sweeps.local:LocalLauncher",
    "slurm": "governance.sweeps.slurm:SlurmLauncher",
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
