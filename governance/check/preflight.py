"""The sweep preflight of `gov check`: the scripts a change's rows will run, checked at PR time.

For every row the appended entries trigger (the plan pipeline), the launch
script must resolve (GOV702, as `gov launch` would say at merge time), pass
`bash -n` (GOV711) and be runnable the way the launcher runs it (GOV712); each
literal `--flag value` it gives a serving engine is compared with what that
engine's other scripts in the repository pass (GOV713, a warning;
`governance.sweeps.shellscan`). The I/O lives here: reading the scripts of the
snapshot being judged, running bash; the analysis is pure.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from governance.check import syntax
from governance.check.preflight_cache import PreflightCache, PreflightQuestion, preflight_key
from governance.check.scripts_folder import in_repository, scripts_folder
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.core.settings import Settings
from governance.core.state import StateLayout
from governance.git.repo import GitRepo
from governance.git.snapshot import UnsafeTreePath
from governance.sweeps.identity import plan_rows

if TYPE_CHECKING:
    from governance.changelog.rules import Verdict
    from governance.check.options import CheckOptions
    from governance.sweeps.resolve import Resolved
    from governance.sweeps.shellscan import FlagUse

MAX_SCRIPT_BYTES = 4 * 1024 * 1024  # a launch script larger than this is not scanned


@dataclass(slots=True)
class Preflight:
    """What the preflight found, and what it looked at."""

    violations: list[Violation] = field(default_factory=list)
    warnings: list[Violation] = field(default_factory=list)
    rows: int = 0  # rows whose script was resolved
    skipped_multinode: int = 0  # multi-node rows (their selection is launcher business)
    scripts: list[str] = field(default_factory=list)  # repository paths checked
    scanned: int = 0  # scripts read for the engine-flag index
    files: dict[str, bytes] = field(default_factory=dict)  # bytes of the checked scripts

    def summary(self) -> str:
        skipped = f", {self.skipped_multinode} multi-node row(s) not preflighted" * bool(
            self.skipped_multinode
        )
        return (
            f"sweep preflight: {self.rows} row(s), {len(self.scripts)} script(s) checked "
            f"against {self.scanned} in the scripts folder, {len(self.warnings)} warning(s)"
            f"{skipped}"
        )

    def to_record(self) -> dict[str, Any]:
        """Everything, as JSON (`check.preflight_cache` keeps it)."""
        return {
            **self.to_dict(),
            "violations": [v.to_dict() for v in self.violations],
            # latin-1: each byte one character, so any script survives JSON.
            "files": {p: b.decode("latin-1") for p, b in self.files.items()},
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Preflight | None:
        """The preflight `to_record` gave, or None when `record` is not one."""
        try:
            return cls(
                [Violation(**v) for v in record["violations"]],
                [Violation(**v) for v in record["warnings"]],
                int(record["rows"]),
                int(record["skipped_multinode"]),
                [str(p) for p in record["scripts"]],
                int(record["scanned"]),
                {str(p): b.encode("latin-1") for p, b in record["files"].items()},
            )
        except (TypeError, KeyError, ValueError, AttributeError):
            return None

    def to_dict(self) -> dict[str, object]:
        return {
            "rows": self.rows,
            "skipped_multinode": self.skipped_multinode,
            "scripts": list(self.scripts),
            "scanned": self.scanned,
            "warnings": [w.to_dict() for w in self.warnings],
        }


def wanted(settings: Settings, exists: bool, flag: bool | None) -> bool:
    """Preflight on? The flag, else the setting; `auto` means "the scripts folder exists"."""
    if flag is not None:
        return flag
    return settings.sweep_preflight == "true" or (settings.sweep_preflight == "auto" and exists)


def scripts_exist(repo: GitRepo, settings: Settings, commit: str | None) -> bool:
    if commit is None or not in_repository(repo, settings):
        return (repo.root / settings.scripts).is_dir()
    return bool(repo.tree_files(commit, settings.scripts))


def _unsafe_entry(refused: UnsafeTreePath) -> Violation:
    return violation(
        "GOV714",
        f"tree entry {refused.path!r} is not a path inside the scripts folder "
        f"({refused.reason}); it was not written or run",
        refused.path,
        hint="remove the entry from the commit's tree (git's own checkout refuses it too); "
        "`git ls-tree -r HEAD` shows it",
    )


def run_preflight(
    repo: GitRepo,
    settings: Settings,
    document: Mapping[str, Any],
    head_commit: str | None,
    base_commit: str,
    *,
    read_cache: bool = True,
    scripts_id: str | None = None,
) -> Preflight:
    """Check the scripts the plan `document`'s rows will run, as they are in
    the snapshot being judged (`head_commit`, or the working tree); the
    answer is remembered by its inputs (`check.preflight_cache`).
    `read_cache=False` (`--no-cache`): nothing remembered is read; `scripts_id`:
    the scripts folder's identity at head when the caller already took it."""
    tracked = in_repository(repo, settings)
    if not tracked:
        head_commit = None  # not in the commits: what is on disk is what will run
    question = PreflightQuestion(repo, settings, document, head_commit, base_commit, tracked)
    remembered = PreflightCache(StateLayout(repo.git_dir).check_cache, read=read_cache)
    key = preflight_key(question, scripts_id)
    record = remembered.get(key)
    if record is not None and (hit := Preflight.from_record(record)) is not None:
        return hit
    result = _examine(question, read_cache)
    remembered.put(key, result.to_record(), stops=bool(result.violations))
    return result


def _examine(question: PreflightQuestion, read_cache: bool) -> Preflight:
    # Only on a miss: the flag index and the resolver are slow to import.
    from governance.check.flag_cache import FlagUseCache
    from governance.sweeps.resolve import SweepPaths, resolve_rows, resolver_for

    repo, settings, base_commit = question.repo, question.settings, question.base_commit
    result = Preflight()
    rows = plan_rows(question.document)
    single = [row for row in rows if not row.is_multinode]
    result.skipped_multinode = len(rows) - len(single)
    prefix = settings.scripts.rstrip("/")
    cache = FlagUseCache(StateLayout(repo.git_dir).shell_cache, read=read_cache)
    with scripts_folder(repo, settings, question.head_commit) as snapshot:
        folder, files, modes = snapshot.folder, snapshot.files, snapshot.modes
        result.violations += [_unsafe_entry(entry) for entry in snapshot.refused]
        paths = SweepPaths(folder, folder / ".results", folder / ".ledger", folder)
        resolver = resolver_for(paths, settings)
        resolver.listing, resolver.materialize = snapshot.listing, snapshot.materialize
        resolved = resolve_rows(single, resolver, paths.results, machine="preflight", build=False)
        real_root = folder.resolve()
        scripts: dict[str, int] = {}
        for item in resolved:
            if not item.ok:
                result.violations.append(_unresolved(item, prefix))
                continue
            assert item.script is not None
            path = f"{prefix}/{item.script.relative_to(real_root).as_posix()}"
            scripts[path] = scripts.get(path, 0) + 1
        result.rows = sum(scripts.values())
        result.scripts = sorted(scripts)
        for path in result.scripts:
            data = files.get(path, b"")
            result.files[path] = data
            result.violations += _runnable(path, data, modes.get(path, False))
            on_disk = functools.partial(snapshot.on_disk, path, prefix)
            pack = cache.pack if read_cache else None
            result.violations += syntax.violations(path, on_disk, data, pack)
        changed = (
            _changed(repo, base_commit, prefix, files, snapshot.blobs)
            if question.tracked
            else frozenset()
        )
        uses = cache.uses
        result.warnings, result.scanned = _flag_warnings(files, result.scripts, changed, uses)
    result.violations = _dedupe(result.violations)
    return result


def _unresolved(item: Resolved, prefix: str) -> Violation:
    tried = ", ".join(f"{prefix}/{t}" for t in item.tried) or "no candidate"
    where = f"{prefix}/{item.tried[0]}" if item.tried else prefix
    return violation(
        item.code,
        f"row {item.row.where} ({item.row.data.get('exp-name', '?')}, conc {item.key.rpartition('-')[2]}) "
        f"has no launch script: {item.problem}; tried {tried}",
        where,
        hint="add the script (the name the naming rule expects), or fix the config's "
        "runner/framework/precision; `gov launch --dry-run` shows the same",
    )


def _dedupe(found: list[Violation]) -> list[Violation]:
    """One finding per script and problem (18 rows of one config share one script)."""
    out: dict[tuple[str, str, int, str], Violation] = {}
    counts: dict[tuple[str, str, int, str], int] = {}
    for v in found:
        key = (v.code, v.path, v.line, v.message.split(" has no launch script")[-1])
        counts[key] = counts.get(key, 0) + 1
        out.setdefault(key, v)
    return [
        v if counts[k] == 1 else _with_message(v, f"{v.message} (and {counts[k] - 1} more row(s))")
        for k, v in out.items()
    ]


def _with_message(v: Violation, message: str) -> Violation:
    return violation(v.code, message, v.path, v.line, v.column, v.hint)


def _runnable(path: str, data: bytes, executable: bool) -> list[Violation]:
    """The launcher executes an executable script (its `#!` line picks the
    interpreter) and runs any other through bash."""
    if executable and not data.startswith(b"#!"):
        return [
            violation(
                "GOV712",
                "the script is executable but has no `#!` line: executing it fails "
                "(Exec format error)",
                path,
                1,
                1,
                "start it with `#!/usr/bin/env bash`, or drop the executable bit "
                "(then the launcher runs it through bash)",
            )
        ]
    return []


def _changed(
    repo: GitRepo,
    base_commit: str,
    prefix: str,
    files: Mapping[str, bytes],
    blobs: Mapping[str, str] | None,
) -> frozenset[str]:
    """Scripts the change adds or edits: they do not vouch for each other."""
    import hashlib

    base = repo.tree_files(base_commit, prefix)
    out = set()
    for path, data in files.items():
        blob = blobs.get(path) if blobs is not None else None
        if blob is None:
            header = b"blob %d\0" % len(data)
            blob = hashlib.sha1(header + data, usedforsecurity=False).hexdigest()
        if base.get(path, ("", ""))[1] != blob:
            out.add(path)
    return frozenset(out)


def _flag_warnings(
    files: Mapping[str, bytes],
    checked: list[str],
    changed: frozenset[str],
    read_uses: Callable[[bytes], Sequence[FlagUse]],
) -> tuple[list[Violation], int]:
    from governance.sweeps.flagindex import flag_warnings, focused_index

    scripts = {p: d for p, d in files.items() if p.endswith(".sh") and len(d) <= MAX_SCRIPT_BYTES}
    reviewed = {path: read_uses(scripts[path]) for path in checked if path in scripts}
    index = focused_index(scripts, reviewed, changed, read_uses)
    out = []
    for path in checked:
        data = scripts.get(path)
        if data is None:
            continue
        for found in flag_warnings(data, index, changed | {path}, reviewed[path]):
            out.append(
                violation(
                    "GOV713",
                    found.message(),
                    path,
                    found.use.line,
                    found.use.column,
                    found.hint(),
                )
            )
    return out, len(scripts)


def sweep_preflight(
    repo: GitRepo,
    settings: Settings,
    options: CheckOptions,
    changelog: tuple[bytes | None, bytes],
    head_commit: str | None,
    base_commit: str,
    verdict: Verdict,
    *,
    document: Mapping[str, Any] | None = None,
) -> Preflight | None:
    """The preflight of the scripts the appended entries' rows run (None when
    off), on the rows `gov check`'s own plan pipeline gives them: `document`,
    the plan the check already generated, else generated here."""
    from governance.check.snapshots import HeadSource

    commit = head_commit if options.head_source is HeadSource.REF else None
    exists = scripts_exist(repo, settings, commit)
    if not wanted(settings, exists, options.sweep_preflight):
        return None
    if document is None:
        document = _plan_document(repo, settings, options, changelog, head_commit, base_commit)
        if document is None:  # reported by the plan check already
            return None
    if not exists:
        return Preflight(
            [
                violation(
                    "GOV702",
                    f"the scripts folder {settings.scripts}/ does not exist: no row can launch",
                    settings.scripts,
                    hint="set `scripts` in [tool.gov], or pass --no-sweep-preflight",
                )
            ]
        )
    return run_preflight(
        repo,
        settings,
        document,
        commit,
        base_commit,
        read_cache=not options.no_cache,
        scripts_id=options.head_scripts_id,
    )


def _plan_document(
    repo: GitRepo,
    settings: Settings,
    options: CheckOptions,
    changelog: tuple[bytes | None, bytes],
    head_commit: str | None,
    base_commit: str,
) -> dict[str, Any] | None:
    """The plan of the appended entries when the check did not generate it
    (an ignored plan finding stopped it): only the selected configs validated."""
    from governance.check.snapshots import HeadSource, catalog_of, config_sources
    from governance.core.sweep_gate import plan_kwargs
    from governance.matrix.additions import changelog_additions
    from governance.matrix.errors import MatrixError
    from governance.matrix.plan import PlanOptions, plan_additions

    head_files = config_sources(repo, settings, options.head_source, head_commit)
    base_files = config_sources(repo, settings, HeadSource.REF, base_commit)
    plan_options = PlanOptions(
        base_ref="base",
        head_ref="head",
        changelog_path=settings.changelog,
        validate_all=False,
        **plan_kwargs(options.plan_flags),
    )
    try:
        return plan_additions(
            changelog_additions(*changelog, settings.changelog),
            catalog_of(repo, head_files),
            plan_options,
            catalog_of(repo, base_files),
        ).document
    except MatrixError:
        return None
