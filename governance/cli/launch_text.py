"""What `gov launch --dry-run` adds for a launcher that runs rows through
runner scripts: the closing note on runner scripts and the runner file, and
`--show-env`'s environment of a sample row, as lines bash reads back."""

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.core.settings import Settings
    from governance.sweeps.resolve import Resolved, SweepPaths


def runner_note(resolved: "Sequence[Resolved]", paths: "SweepPaths", settings: "Settings") -> str:
    """The runner launcher's closing note: rows by runner script, then how the
    runner file's labels and nodes resolve."""
    from governance.sweeps.runner_jobs import FALLBACK_NOTE, RUNNER_PROBLEM, scripts_in

    via = sum(1 for r in resolved if r.via)
    fallbacks: dict[str, int] = {}
    for item in resolved:
        if FALLBACK_NOTE in item.via:
            label = str(item.row.data.get("runner", ""))
            how = item.via.rpartition(f"{FALLBACK_NOTE}: ")[2].rstrip(")")
            fallbacks[f"{label} -> {how}"] = fallbacks.get(f"{label} -> {how}", 0) + 1
    reasons: dict[str, int] = {}
    for item in resolved:
        if not item.ok:
            reason = (
                item.problem.removeprefix(RUNNER_PROBLEM)
                if item.problem.startswith(RUNNER_PROBLEM)
                else f"{item.code}: no benchmark script or recipe (listed above)"
            )
            reasons[reason] = reasons.get(reason, 0) + 1
    lines = [
        f"runner scripts: {len(resolved)} rows: {via} resolved, "
        f"{sum(reasons.values())} unresolvable"
    ]
    for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  unresolvable: {n} {reason}")
    for how, n in sorted(fallbacks.items()):
        lines.append(f"  resolved: {n} rows whose label is not in the runner file: {how}")
    summary = scripts_in(paths, settings).summary()
    lines.append(
        f"runner file {settings.runners}: {summary.labels_resolved} of {summary.labels} labels "
        f"and {summary.nodes_resolved} of {summary.nodes} nodes resolve to a runner script"
    )
    for problem, n in sorted({**summary.missing, **summary.refused}.items()):
        lines.append(f"  {n} node(s): {problem}")
    return "\n".join(lines) + "\n"


def _escaped(c: str) -> str:
    """One character inside bash's `$'...'`."""
    if c in "\\'":
        return "\\" + c
    if c.isprintable():
        return c
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _shell_quoted(value: str) -> str:
    """`value` as bash reads it back: shlex quoting, or `$'...'` with escapes
    when it holds a newline or another unprintable character (nothing raw
    reaches the terminal)."""
    import shlex

    if value.isprintable():
        return shlex.quote(value)
    escaped = "".join(_escaped(c) for c in value)
    return f"$'{escaped}'"


def sample_env_text(
    resolved: "Sequence[Resolved]",
    launcher: str,
    paths: "SweepPaths",
    settings: "Settings",
    timeout: float,
) -> str:
    """The environment the first single-node and first multi-node row that
    resolve would get, as `KEY=value` lines (values shell-quoted)."""
    from dataclasses import replace

    from governance.sweeps.dispatch import adapt_for_launcher
    from governance.sweeps.jobs import build_job, machine_name

    lines = []
    for multi in (False, True):
        item = next(
            (r for r in resolved if r.ok and r.script and r.row.is_multinode is multi), None
        )
        if item is None or item.script is None:
            continue
        job = item.job or build_job(
            item.row,
            item.script,
            launch_root=paths.results / "runs" / "dry-run",
            machine=machine_name(launcher),
            timeout_seconds=timeout,
            key=item.key,
            recipe_path=item.resolution.recipe_path if item.resolution else None,
        )
        if not item.via:
            env = job.env
        else:
            ready = adapt_for_launcher(
                [replace(item, job=job)], launcher, paths, settings, build=True
            )
            env = ready[0].job.env if ready[0].job is not None else job.env
        lines.append(f"# environment of {item.row.where} {item.key} ({item.via or launcher})")
        for name in sorted(env):
            lines.append(f"{name}={_shell_quoted(env[name])}")
    return "\n".join(lines) + ("\n" if lines else "")
