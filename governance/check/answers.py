"""`gov check`'s answer, rendered, and remembered by what it depends on.

The hook and CI ask the same question again and again: the same changelog
bytes at base and head, the same master configs, the same settings. The
answer (what the check prints, its step summary and its exit code) is a
function of those inputs and of gov's installed code (`code_digest`), so it is stored under
`.git/gov/check-cache/` keyed by a digest of them: the blob ids of the files
at both commits (or the bytes of the working tree or index), the base and
head commits, the settings, the options and the output format. A repeated
check then costs a few object lookups and no parse at all; the engines
(ruamel.yaml, pydantic, the matrix) are imported only on a miss.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from governance.check.findings_cache import digest
from governance.check.scripts_folder import in_repository, scripts_identity
from governance.check.service import (
    CheckOptions,
    CheckResult,
    HeadSource,
    check_base,
    run_check,
)
from governance.core.blockcache import BlockCache
from governance.core.diagnostics import UsageError
from governance.core.settings import SETTINGS_FILES, Settings
from governance.core.state import StateLayout
from governance.git.repo import GitRepo


@dataclass(frozen=True, slots=True)
class Answer:
    stdout: str
    summary: str  # markdown for $GITHUB_STEP_SUMMARY ("" unless github)
    ok: bool
    commands: str = ""  # workflow commands, printed before stdout ("" unless github)


def _content_ids(
    repo: GitRepo, paths: list[str], source: HeadSource, commit: str | None, *, strict: bool = True
) -> list[str]:
    """Something that changes exactly when a file's bytes change: its blob id
    at a commit, or the SHA-256 of its bytes in the working tree or index
    (`strict=False`: a file gov refuses to read counts as its refusal)."""
    if source is HeadSource.REF and commit is not None:
        return [repo.blob_id(commit, path) or "-" for path in paths]
    read = repo.read_staged if source is HeadSource.STAGED else repo.read_worktree
    out = []
    for path in paths:
        try:
            data = read(path)
        except UsageError as exc:
            if strict:
                raise
            out.append(f"refused: {exc}")
            continue
        out.append("-" if data is None else hashlib.sha256(data).hexdigest())
    return out


def remembered(
    repo: GitRepo, parts: list[str], compute: Callable[[], Answer], *, read: bool = True
) -> Answer:
    """The answer stored under the digest of `parts`, else `compute()` stored
    (`read=False`: always computed, and stored)."""
    cache = BlockCache(StateLayout(repo.git_dir).check_cache)
    key = digest(parts)
    hit = cache.get(key) if read else None
    if isinstance(hit, dict) and set(hit) == {"stdout", "summary", "ok", "commands"}:
        return Answer(
            str(hit["stdout"]), str(hit["summary"]), bool(hit["ok"]), str(hit["commands"])
        )
    found = compute()
    cache.put(
        key,
        {
            "stdout": found.stdout,
            "summary": found.summary,
            "ok": found.ok,
            "commands": found.commands,
        },
    )
    return found


def _inputs(settings: Settings) -> list[str]:
    return [settings.changelog, *settings.master_configs, settings.runners]


def render(result: CheckResult, fmt: str) -> Answer:
    from governance.check import render as out

    if fmt == "json":
        return Answer(out.render_json(result), "", result.verdict.ok)
    if fmt == "github":
        summary = out.render_markdown_summary(result)
        commands = out.github_commands(result)
        return Answer(out.render_text(result), summary, result.verdict.ok, commands)
    return Answer(out.render_text(result), "", result.verdict.ok)


def check_answer(
    repo: GitRepo,
    settings: Settings,
    options: CheckOptions,
    fmt: str,
    *,
    summary_plan: tuple[str, str] | None = None,
) -> Answer:
    """The rendered answer of `gov check`, from the cache when its inputs are
    unchanged. `summary_plan` (the base and head names `gov plan` would echo):
    when the check passes, its step summary ends with what `gov plan --format
    markdown --empty-ok` prints, from the plan the check built."""
    head_commit = None
    if options.head_source is HeadSource.REF:
        head_commit = repo.resolve(options.head_ref or "HEAD")
    base_commit, base_label = check_base(repo, settings, options, head_commit)
    settings_files = list(SETTINGS_FILES)  # GOV801 compares them (check.trusted)
    head_scripts = scripts_identity(repo, settings, head_commit)
    parts = [
        "check",
        fmt,
        repr(settings),
        repr(options),
        head_commit or options.head_source.value,
        base_commit,
        base_label,
        *_content_ids(repo, _inputs(settings), options.head_source, head_commit),
        *_content_ids(repo, _inputs(settings), HeadSource.REF, base_commit),
        head_scripts,
        # A folder outside the repository is on disk for both sides: stamped once.
        scripts_identity(repo, settings, base_commit) if in_repository(repo, settings) else "-",
        *_content_ids(repo, settings_files, options.head_source, head_commit, strict=False),
        *_content_ids(repo, settings_files, HeadSource.REF, base_commit, strict=False),
        repr(summary_plan),
    ]

    def compute() -> Answer:
        from dataclasses import replace

        from governance.check.trusted import settings_change

        taken = replace(options, head_scripts_id=head_scripts)  # the preflight's key reuses it
        result = run_check(repo, settings, taken)
        changed = settings_change(repo, base_commit, options, head_commit)
        result.warnings += [changed] if changed else []
        answer = render(result, fmt)
        if summary_plan is None or not answer.ok or head_commit is None:
            return answer
        commits = (base_commit, head_commit)
        plan = plan_summary(repo, settings, result.plan, options, commits, summary_plan)
        return replace(answer, summary=answer.summary + plan)

    return remembered(repo, parts, compute, read=not options.no_cache)


def appends_nothing(repo: GitRepo, path: str, base: str, head: str) -> bool:
    """No line added or removed (blank lines aside): nothing for a plan."""
    from governance.changelog.appended import appended

    found = appended(repo.read_blob(base, path), repo.read_blob(head, path))
    return found.removed is None and not any(line.strip() for line in found.lines)


def nothing_markdown(changelog: str) -> str:
    """`gov plan --format markdown --empty-ok` on a change that appends nothing."""
    return f"### Sweep plan\n\nnothing appended to `{changelog}`: no sweep\n"


def plan_summary(
    repo: GitRepo,
    settings: Settings,
    document: dict[str, Any] | None,
    options: CheckOptions,
    commits: tuple[str, str],
    echo: tuple[str, str],
) -> str:
    """What `gov plan --base-ref B --head-ref H --format markdown --empty-ok`
    prints for the change a passing check judged (same row options), from
    the plan document the check built; planned here only when it built none
    (e.g. an ignored plan finding stopped it), as `gov plan` plans."""
    from governance.matrix import render as out
    from governance.matrix.plan import PlanOptions, PlanResult, unrun_bucket_warnings

    base, head = commits
    if appends_nothing(repo, settings.changelog, base, head):
        return nothing_markdown(settings.changelog)
    flags = options.plan_flags
    if document is None:
        no_cache = options.no_cache
        return plan_answer(
            repo, settings, base, head, echo, flags, "markdown", no_cache=no_cache
        ).stdout
    from governance.core.sweep_gate import plan_kwargs

    meta = document["changelog_metadata"]
    echoed = {**document, "changelog_metadata": {**meta, "base_ref": echo[0], "head_ref": echo[1]}}
    plan = PlanOptions(echo[0], echo[1], settings.changelog, **plan_kwargs(flags))
    return out.plan_markdown(PlanResult(echoed, unrun_bucket_warnings(echoed, plan)))


def plan_answer(
    repo: GitRepo,
    settings: Settings,
    base: str,
    head: str,
    echo: tuple[str, str],
    flags: frozenset[str],
    fmt: str,
    *,
    no_cache: bool = False,
) -> Answer:
    """The rendered `gov plan` between two commits (`echo`: the base and head
    names the document repeats; `flags`: the row options that are on, by
    their option names), cached likewise."""

    def compute() -> Answer:
        from governance.core.sweep_gate import plan_kwargs
        from governance.matrix import render as out
        from governance.matrix import sources

        result = sources.plan_between(
            repo,
            echo[0],
            echo[1],
            **plan_kwargs(flags),
            layout=settings.layout(),
            cache=sources.default_cache(repo),
        )
        renderers = {"json": out.plan_json, "text": out.plan_text, "markdown": out.plan_markdown}
        return Answer(renderers[fmt](result), "", True)

    parts = ["plan", fmt, " ".join(sorted(flags)), repr(settings), base, head, *echo]
    parts += _content_ids(repo, _inputs(settings), HeadSource.REF, head)
    parts += _content_ids(repo, _inputs(settings), HeadSource.REF, base)
    return remembered(repo, parts, compute, read=not no_cache)
