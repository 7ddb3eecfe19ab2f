"""The `gov check` service: read the two snapshots, run the rules, return data.

The same function serves the three doors: the pre-commit hook (worktree or
index bytes), CI (two refs and the PR number) and the merge tool.
`CheckOptions` lives in `check.options` (the preflight reads it too) and is
re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from governance.check.options import CheckOptions
from governance.check.snapshots import HeadSource, catalog_of, config_sources, snapshot_reader
from governance.core.codes import split_ignored, violation
from governance.core.diagnostics import UsageError, Violation
from governance.core.settings import Settings
from governance.core.settings_faults import settings_fault
from governance.core.state import StateLayout
from governance.git.mainref import main_ref
from governance.git.repo import GitRepo

__all__ = ["CheckOptions", "CheckResult", "run_check"]

if TYPE_CHECKING:  # the engines are imported only when a rule runs (not on a cached answer)
    from governance.changelog.rules import KnownKeys, Verdict
    from governance.check.findings_cache import PlanFindings
    from governance.check.preflight import Preflight
    from governance.matrix.additions import Additions
    from governance.matrix.catalog import Catalog


@dataclass(slots=True)
class CheckResult:
    verdict: Verdict
    base_label: str  # e.g. "origin/main@1a2b3c4" or "merge-base 1a2b3c4"
    head_label: str
    base_bytes: bytes
    head_bytes: bytes
    # Bytes of the other files findings point at (master configs, runner
    # file), as judged: excerpts quote the finding's own file.
    other_files: dict[str, bytes] = field(default_factory=dict)
    ignore: tuple[str, ...] = ()  # the codes turned off (settings `ignore`, --ignore)
    ignored: list[Violation] = field(default_factory=list)  # findings they hid
    # Findings that do not fail the check (GOV209; GOV713 unless preflight-warnings-fail).
    warnings: list[Violation] = field(default_factory=list)
    preflight: Preflight | None = None  # None: not run
    # The plan document of the appended entries (refs "base"/"head") when the
    # check generated it: one plan per command, shared by the preflight and
    # `--summary-plan`. None: not generated (a fault, --no-configs, nothing appended).
    plan: dict[str, Any] | None = None


def resolve_base(
    repo: GitRepo,
    settings: Settings,
    base_ref: str | None,
    head: str | None = None,
    *,
    exact: bool = False,
    merging: Sequence[str] = (),
) -> tuple[str, str]:
    """(commit, label) of the base. With `base_ref`: the merge-base of it and
    `head` (default HEAD), or the commit itself when `exact`. Without: the
    merge-base of head with main (`governance.git.mainref`). `merging`: the
    commits an in-progress merge brings in (`merge_heads`); the base is then
    the merge-base with the merge being made, so what main brings is main's."""
    if base_ref and exact:
        sha = repo.resolve(base_ref)
        return sha, f"{base_ref}@{sha[:10]} (exact)"
    head_sha = head or repo.resolve("HEAD")
    during = f", merging {', '.join(m[:10] for m in merging)}" if merging else ""
    if base_ref:
        tip = repo.resolve(base_ref)
        sha = repo.merge_base(tip, head_sha, *merging)
        if sha == tip:
            return sha, f"{base_ref}@{sha[:10]}{during}"
        return sha, f"merge-base with {base_ref}@{tip[:10]} ({sha[:10]}{during})"
    main = main_ref(repo, settings.main_branch)
    sha = repo.merge_base(main.sha, head_sha, *merging)
    return sha, f"merge-base with {main.label} ({sha[:10]}; main: {main.why}{during})"


def check_base(
    repo: GitRepo, settings: Settings, options: CheckOptions, head_commit: str | None
) -> tuple[str, str]:
    """(commit, label) of the base `options` asks for (already resolved, or
    found now; an in-progress merge's heads included)."""
    return options.resolved_base or resolve_base(
        repo,
        settings,
        options.base_ref,
        head_commit,
        exact=options.exact_base,
        merging=merge_heads(repo, options),
    )


def merge_heads(repo: GitRepo, options: CheckOptions) -> tuple[str, ...]:
    """The commits an in-progress `git merge` brings in, when the check judges
    the merge being made (the index or the working tree; never a commit):
    the PR's own entries are then those the merge adds beyond both parents."""
    if options.head_source is HeadSource.REF or options.exact_base:
        return ()
    try:
        text = (repo.git_dir / "MERGE_HEAD").read_text("ascii")
    except (OSError, UnicodeDecodeError):
        return ()
    heads = tuple(line.strip() for line in text.splitlines() if line.strip())
    try:
        return heads if all(repo.resolve(h) == h for h in heads) else ()
    except UsageError:  # not a commit of this repository: judge as without a merge
        return ()


def read_head(
    repo: GitRepo, settings: Settings, options: CheckOptions
) -> tuple[bytes | None, str, str | None]:
    """(bytes, label, commit) of the head snapshot; commit is None off-ref."""
    path = settings.changelog
    if options.head_source is HeadSource.WORKTREE:
        return repo.read_worktree(path), "working tree", None
    if options.head_source is HeadSource.STAGED:
        return repo.read_staged(path), "index", None
    ref = options.head_ref or "HEAD"
    sha = repo.resolve(ref)
    return repo.read_blob(sha, path), f"{ref}@{sha[:10]}", sha


def known_keys(catalog: Catalog, settings: Settings) -> tuple[KnownKeys | None, list[Violation]]:
    """The config keys to resolve against; a violation when no master exists."""
    from governance.changelog.rules import KnownKeys

    if catalog.keys or any(master.text for master in catalog.masters):
        return KnownKeys(catalog.keys, catalog.files_label), []
    return None, [
        violation(
            "GOV510",
            "none of the master config files exist: " + ", ".join(settings.master_configs),
            settings.changelog,
            0,
            0,
            "set master-configs in [tool.gov], or pass --no-configs",
        )
    ]


def run_check(repo: GitRepo, settings: Settings, options: CheckOptions) -> CheckResult:
    from governance.changelog.rules import check

    path = settings.changelog
    head_bytes, head_label, head_commit = read_head(repo, settings, options)
    if head_bytes is None:
        raise UsageError(
            f"{path} does not exist in the {head_label}",
            "run gov at the root of the benchmark repository, or set `changelog` in [tool.gov]",
        )
    base_commit, base_label = check_base(repo, settings, options, head_commit)
    base_bytes = repo.read_blob(base_commit, path)
    verdict = check(
        base_bytes,
        head_bytes,
        settings.policy(),
        options.mode,
        path=path,
        trust_base=not options.full,
    )
    # Ignored codes are dropped before the plan is judged, so an ignored
    # whitespace finding does not stop rows from being generated.
    verdict.violations, ignored = split_ignored(verdict.violations, settings.ignore)
    document = None
    if options.configs and verdict.additions:
        found = plan_check(
            repo, settings, options, (base_bytes, head_bytes), head_commit, base_commit, verdict
        )
        verdict.config_keys, document = found.keys, found.document
        kept, hidden = split_ignored(found.violations, settings.ignore)
        verdict.violations += kept
        ignored += hidden
    preflight = None
    if options.configs and verdict.additions and verdict.ok:
        from governance.check.preflight import sweep_preflight

        preflight = sweep_preflight(
            repo,
            settings,
            options,
            (base_bytes, head_bytes),
            head_commit,
            base_commit,
            verdict,
            document=document,
        )
    warnings: list[Violation] = list(verdict.warnings)
    if preflight is not None:
        verdict.violations += preflight.violations
        if settings.preflight_warnings_fail:
            verdict.violations += preflight.warnings
        else:
            warnings += preflight.warnings
    files: dict[str, bytes] = dict(preflight.files) if preflight else {}
    # The head's own settings must load: once landed they are every later base.
    read = snapshot_reader(repo, options.head_source, head_commit)
    fault = settings_fault(read)
    if fault is not None:
        verdict.violations.append(fault)
        files[fault.path] = read(fault.path) or b""
    others = {v.path for v in (*verdict.violations, *warnings)} - {path} - set(files)
    if others:
        for name, data in config_sources(repo, settings, options.head_source, head_commit):
            if name in others and data is not None:
                files[name] = data
    return CheckResult(
        verdict,
        base_label,
        head_label,
        base_bytes or b"",
        head_bytes,
        files,
        settings.ignore,
        ignored,
        warnings,
        preflight,
        document,
    )


def plan_check(
    repo: GitRepo,
    settings: Settings,
    options: CheckOptions,
    changelog: tuple[bytes | None, bytes],
    head_commit: str | None,
    base_commit: str,
    verdict: Verdict,
) -> PlanFindings:
    """Would `gov plan` accept what this change appends? The same appended
    lines (`changelog.appended`, read from the same bytes), resolver and
    validation, so a change that passes check cannot fail its plan; the plan
    document comes along when it was generated. Answers are cached by their
    inputs' bytes (`findings_cache`)."""
    from governance.changelog.appended import appended
    from governance.check.findings_cache import FindingsCache, PlanFindings, digest

    found = appended(*changelog)
    if found.removed is not None and not verdict.ok:
        # Head rewrote history: the rules' own finding (GOV3xx) says where;
        # the plan refuses the same change (GOV530) and reads no entries.
        return PlanFindings([], [])
    head_files = config_sources(repo, settings, options.head_source, head_commit)
    base_files = config_sources(repo, settings, HeadSource.REF, base_commit)
    key = digest(
        [
            settings.changelog,
            str(verdict.ok),
            " ".join(map(str, found.numbers)),
            "\n".join(found.lines),
            repr(found.removed),
            " ".join(sorted(options.plan_flags)),
            *(part for path, data in (*head_files, *base_files) for part in (path, data)),
        ]
    )
    cache = FindingsCache(StateLayout(repo.git_dir).check_cache, read=not options.no_cache)
    if (hit := cache.get(key)) is not None:
        return hit
    # Only on a miss: the plan's modules are slow to import.
    from governance.matrix.additions import additions_of
    from governance.matrix.errors import MatrixError

    try:
        additions = additions_of(found, settings.changelog)
    except MatrixError as exc:  # GOV530, when an ignored history rule let it through
        answer = PlanFindings([], list(exc.violations))
    else:
        answer = _plan_findings(
            repo, settings, (head_files, base_files), additions, verdict, options
        )
    cache.put(key, answer)
    return answer


def _plan_findings(
    repo: GitRepo,
    settings: Settings,
    files: tuple[list[tuple[str, bytes | None]], list[tuple[str, bytes | None]]],
    additions: Additions,
    verdict: Verdict,
    options: CheckOptions,
) -> PlanFindings:
    """With `trust_base`, master-config blocks unchanged since the base are
    not re-validated (they were when they landed, like the changelog's
    history); `--full` validates every block."""
    from governance.check.findings_cache import PlanFindings
    from governance.core.sweep_gate import plan_kwargs
    from governance.matrix.plan import PlanOptions, plan_violations

    head_files, base_files = files
    trust_base = not options.full
    base = catalog_of(repo, base_files, trust_all=trust_base)
    head = catalog_of(repo, head_files, trusted=base if trust_base else None)
    known, missing = known_keys(head, settings)
    if known is None:
        return PlanFindings([], missing)
    plan = PlanOptions(
        base_ref="base",
        head_ref="head",
        changelog_path=settings.changelog,
        **plan_kwargs(options.plan_flags),
    )
    # Rows are generated only for changes that pass the changelog rules: a
    # malformed entry would otherwise be reported twice (GOV2xx and GOV5xx).
    keys, problems, document = plan_violations(additions, head, base, plan, generate=verdict.ok)
    return PlanFindings(keys, problems, document)
