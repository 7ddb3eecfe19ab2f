"""The `gov check` service: read the two snapshots, run the rules, return data.

The same function serves the three doors: the pre-commit hook (worktree or
index bytes), CI (two refs and the PR number) and the merge tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from governance.changelog.keys import top_level_keys
from governance.changelog.rules import CheckMode, KnownKeys, Verdict, check
from governance.codes import violation
from governance.diagnostics import UsageError
from governance.gitrepo import GitRepo
from governance.settings import Settings


class HeadSource(StrEnum):
    REF = "ref"
    WORKTREE = "worktree"
    STAGED = "staged"


@dataclass(frozen=True, slots=True)
class CheckOptions:
    mode: CheckMode
    base_ref: str | None = None  # default: merge-base of HEAD with the main branch
    head_ref: str | None = None  # default: HEAD
    head_source: HeadSource = HeadSource.REF
    configs: bool = True  # resolve config keys against the master configs at head
    full: bool = False  # validate the whole base too, not only what head appends


@dataclass(slots=True)
class CheckResult:
    verdict: Verdict
    base_label: str  # e.g. "origin/main@1a2b3c4" or "merge-base 1a2b3c4"
    head_label: str
    base_bytes: bytes
    head_bytes: bytes


def resolve_base(repo: GitRepo, settings: Settings, base_ref: str | None) -> tuple[str, str]:
    """(commit, label) of the base: the given ref, or the merge-base with main."""
    if base_ref:
        sha = repo.resolve(base_ref)
        return sha, f"{base_ref}@{sha[:10]}"
    main = repo.default_main_ref(settings.main_branch)
    head = repo.resolve("HEAD")
    sha = repo.merge_base(head, repo.resolve(main))
    return sha, f"merge-base with {main} ({sha[:10]})"


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


def known_keys_at(
    repo: GitRepo, settings: Settings, commit: str | None, worktree: bool
) -> tuple[KnownKeys | None, list]:
    """Top-level master-config keys at the head snapshot (+ violations for files
    that cannot be read)."""
    keys: list[str] = []
    problems = []
    present = 0
    for path in settings.master_configs:
        data = (
            repo.read_worktree(path) if worktree or commit is None else repo.read_blob(commit, path)
        )
        if data is None:
            continue
        present += 1
        try:
            keys += top_level_keys(data.decode("utf-8"))
        except UnicodeDecodeError:
            problems.append(
                violation("GOV510", f"{path} is not UTF-8", path, 1, 1, "re-save it as UTF-8")
            )
    if not present:
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
    return KnownKeys(keys, " / ".join(settings.master_configs)), problems


def run_check(repo: GitRepo, settings: Settings, options: CheckOptions) -> CheckResult:
    path = settings.changelog
    head_bytes, head_label, head_commit = read_head(repo, settings, options)
    if head_bytes is None:
        raise UsageError(
            f"{path} does not exist in the {head_label}",
            "run gov at the root of the benchmark repository, or set `changelog` in [tool.gov]",
        )
    base_commit, base_label = resolve_base(repo, settings, options.base_ref)
    base_bytes = repo.read_blob(base_commit, path)
    known, config_problems = (None, [])
    if options.configs:
        worktree = options.head_source is not HeadSource.REF
        known, config_problems = known_keys_at(repo, settings, head_commit, worktree)
    verdict = check(
        base_bytes,
        head_bytes,
        settings.policy(),
        options.mode,
        path=path,
        trust_base=not options.full,
        known_keys=known,
    )
    verdict.violations += config_problems
    return CheckResult(verdict, base_label, head_label, base_bytes or b"", head_bytes)
