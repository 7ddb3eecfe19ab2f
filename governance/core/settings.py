"""Settings: [tool.gov] in pyproject.toml or .gov.toml, GOV_* variables, flags.

Precedence, lowest to highest: built-in defaults (the InferenceX layout), the
repository slug parsed from the `origin` remote, the settings file, the
environment (`GOV_<KEY>`, dashes as underscores), command-line flags.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from governance.core import settings_values
from governance.core.diagnostics import UsageError
from governance.core.layout import Layout
from governance.core.links import (
    DEFAULT_LINK_TEMPLATE,
    DEFAULT_PLACEHOLDERS,
    DEFAULT_REPOSITORY,
    LinkPolicy,
)
from governance.core.settings_coerce import coerce
from governance.core.settings_priority import DEFAULT_PRIORITY_RULES, PriorityRule
from governance.core.settings_queue import QueueSettings
from governance.core.suggest import did_you_mean
from governance.core.sweep_gate import GateRules


@dataclass(frozen=True, slots=True)
class Settings:
    changelog: str = "perf-changelog.yaml"
    master_configs: tuple[str, ...] = ("configs/amd-master.yaml", "configs/nvidia-master.yaml")
    runners: str = "configs/runners.yaml"
    repository: str = DEFAULT_REPOSITORY
    placeholders: tuple[str, ...] = DEFAULT_PLACEHOLDERS
    link_template: str = DEFAULT_LINK_TEMPLATE
    main_branch: str = "main"
    # The PR number of a squash commit: the last `(#N)` in its subject.
    pr_subject_pattern: str = r"\(#(\d+)\)"
    # Sweep labels a PR must carry exactly one of before prepare-merge (empty: none required).
    sweep_labels: tuple[str, ...] = ()
    # Sweeps (docs/sweeps.md). Relative paths are relative to the repository
    # root; an empty results/ledger means "inside the git directory".
    scripts: str = "benchmarks"
    results: str = ""
    ledger: str = ""
    # {hardware glob: [script name templates]}, first match wins; empty: the
    # reference's rule (governance.sweeps.naming.DEFAULT_SCRIPT_NAMES).
    script_names: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # prepare-merge sweeps (reuses the PR's results, launches the rest on this
    # machine) only when asked: --sweep, or this setting.
    sweep_on_merge: bool = False
    # `gov check` preflights the launch scripts of the rows a change triggers:
    # "auto" (when the scripts folder exists), "true" or "false"; --sweep-preflight.
    sweep_preflight: str = "auto"
    # Preflight warnings (GOV713) fail the check too.
    preflight_warnings_fail: bool = False
    # Globs of repository files every row runs with (its harness, docs/sweeps.md
    # 'Row identity'), besides what gov traces from the launch script.
    harness_inputs: tuple[str, ...] = ()
    # prepare-merge, a reusable run whose harness differs only in files main
    # changed after the sweep: "reuse" it (and report the drift) or "rerun" it.
    harness_change: str = "reuse"
    # `/reuse-sweep-run [RUN_ID]` comments heard at merge: the author associations
    # allowed, and whether reuse needs such a comment at all (docs/sweeps.md).
    reuse_authorizers: tuple[str, ...] = ("OWNER", "MEMBER", "COLLABORATOR")
    reuse_requires_authorization: bool = False
    # Launch order and Slurm --nice: ordered rules over config-key globs and
    # labels (governance/core/settings_priority.py; InferenceX's ci-priority.yaml).
    priority: tuple[PriorityRule, ...] = DEFAULT_PRIORITY_RULES
    # `gov results compare`: a relative change past this many percent is flagged.
    results_threshold: str = "5"
    # `gov results publish`: "" (SQLite under .git/gov), a file path, or a
    # postgresql:// URL (no password in it: PGPASSWORD); publish-on-merge: after landing.
    results_database: str = ""
    publish_on_merge: bool = False
    # The sweep gate's rules (core.sweep_gate; empty: InferenceX's run-sweep.yml).
    sweep_gate: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Stricter-than-reference codes this repository phases in (docs/rules.md).
    ignore: tuple[str, ...] = ()
    # Former ORG/NAMEs of the repository: links to them are history only
    # (accepted by `gov audit`, never for a new entry).
    former_repositories: tuple[str, ...] = ()
    # `[tool.gov.queue]`: how `gov queue` runs on GitHub (core/settings_queue.py).
    queue: QueueSettings = field(default_factory=QueueSettings)
    source: str = "defaults"  # where the settings file was found, for messages
    repository_from: str = "default"  # where `repository` came from, for messages

    def policy(self) -> LinkPolicy:
        return LinkPolicy(self.repository, self.link_template, self.placeholders)

    def layout(self) -> Layout:
        """Where the files gov reads are configured to be (`Layout.at` finds
        them in a revision that keeps them elsewhere)."""
        return Layout(self.changelog, self.master_configs, self.runners)

    def history_policy(self, *names: str) -> LinkPolicy:
        """The policy of a history replay: links to the former names (and to
        `names`, what the repository was called at that commit) count as
        canonical too."""
        former = tuple(
            dict.fromkeys(n for n in (*self.former_repositories, *names) if n != self.repository)
        )
        return LinkPolicy(self.repository, self.link_template, self.placeholders, former)

    def gate_rules(self) -> GateRules:
        return GateRules.from_setting(self.sweep_gate, self.main_branch)

    def pr_from_subject(self, subject: str) -> int | None:
        matches = re.findall(self.pr_subject_pattern, subject)
        last = matches[-1] if matches else ""
        if not (isinstance(last, str) and last.isascii() and last.isdigit() and len(last) <= 12):
            return None
        return int(last)


_NOT_KEYS = {"source", "repository_from"}
KEYS = {f.name.replace("_", "-"): f.name for f in fields(Settings) if f.name not in _NOT_KEYS}
# GOV_* variables that are not settings: what gov hands a launch script, the
# cache switch, and the crash hook of the merge tests.
# GOV_NO_CACHE: skip the remembered answers of check and plan (like --no-cache).
OTHER_VARIABLES = frozenset({"GOV_ROW_JSON", "GOV_TEST_CRASH_AFTER", "GOV_NO_CACHE"})


def variable_names() -> dict[str, str]:
    """{GOV_NAME: setting key} of every setting."""
    return {f"GOV_{name.upper()}": key for key, name in KEYS.items()}


def unknown_variables(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, did-you-mean hint) of each `GOV_*` variable that is no setting."""
    known = variable_names()
    return [
        (name, did_you_mean(name, known, limit=1))
        for name in sorted(environ)
        if name.startswith("GOV_") and name not in known and name not in OTHER_VARIABLES
    ]


def _apply(settings: Settings, values: Mapping[str, Any], where: str) -> Settings:
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key not in KEYS:
            hint = did_you_mean(key, KEYS, limit=1) or "known keys: " + ", ".join(KEYS)
            raise UsageError(f"{where}: unknown setting `{key}`", hint)
        changes[KEYS[key]] = settings_values.validate(
            KEYS[key], coerce(KEYS[key], key, value, where), key, where
        )
    return replace(settings, **changes)


SETTINGS_FILES = ("pyproject.toml", ".gov.toml")
FileReader = Callable[[str], bytes | None]


def worktree_reader(root: Path) -> FileReader:
    """Read a settings file from the working tree."""

    def read(name: str) -> bytes | None:
        file = root / name
        if not file.is_file():
            return None
        return file.read_bytes()

    return read


def settings_tables(read: FileReader, label: str) -> tuple[dict[str, Any], str]:
    """[tool.gov] of pyproject.toml, overridden by a .gov.toml next to it, as
    `read(name)` gives their bytes; `label` prefixes the file in messages."""
    values: dict[str, Any] = {}
    found = []
    for name, table in (("pyproject.toml", ("tool", "gov")), (".gov.toml", ())):
        raw = read(name)
        if raw is None:
            continue
        import tomllib  # a repository without settings files never parses TOML

        try:
            data: Any = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"{label}{name}: invalid TOML: {exc}", "fix the file's syntax"
            ) from exc
        for part in table:
            data = data.get(part, {}) if isinstance(data, dict) else {}
        if data:
            if "tool" in data and not table and isinstance(data["tool"], dict):
                data = data["tool"].get("gov", data)
            values.update(data)
            found.append(name)
    return values, " + ".join(found)


def value_fault(key: str, value: Any) -> UsageError | None:
    """Why `key = value` alone does not load (None when it does)."""
    try:
        _apply(Settings(), {key: value}, "")
    except UsageError as exc:
        return exc
    return None


def file_settings(read: FileReader, label: str = "") -> Settings:
    """The settings files alone (no `GOV_*`, no flags), validated as
    `load_settings` validates them: a UsageError when they do not load."""
    values, found = settings_tables(read, label)
    settings = Settings()
    if found:
        settings = _apply(settings, values, f"{label}{found.split(' + ')[-1]}")
    try:
        settings.policy()
    except ValueError as exc:
        raise UsageError(
            f"{label}{found.split(' + ')[-1] or '.gov.toml'}: `link-template`: {exc}",
            'e.g. "https://github.com/{repository}/pull/{number}"',
        ) from exc
    return settings


_REMOTE_SLUG = re.compile(r"github\.com[:/]+([^/\s]+/[^/\s]+?)(?:\.git)?/?$")


def slug_from_remote(url: str | None) -> str | None:
    if not url:
        return None
    match = _REMOTE_SLUG.search(url)
    return match.group(1) if match else None


def load_settings(
    root: Path,
    *,
    remote_url: Callable[[str], str | None] | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    read_changelog: Callable[[str, str], bytes | None] | None = None,
    read_file: FileReader | None = None,
    label: str | None = None,
) -> Settings:
    """Settings from the file, the environment and the flags. Unless one of
    them names the `repository`, it is inferred: the changelog's own links
    (`read_changelog(path, main_branch)`), else the `upstream` remote, else `origin` (a
    fork's origin names the fork; `remote_url(name)`, asked only when the links
    do not say), else the built-in default.

    The settings files come from `read_file` (e.g. a trusted revision's
    blobs, `label` naming it: "main@1a2b3c4:"), by default the working tree."""
    settings = Settings()
    prefix = f"{root}/" if label is None else label
    values, found = settings_tables(read_file or worktree_reader(root), prefix)
    if found:
        settings = _apply(settings, values, f"{prefix}{found.split(' + ')[-1]}")
        settings = replace(settings, source=f"{label}{found}" if label else found)
    env = os.environ if environ is None else environ
    env_values = {
        key: env[f"GOV_{name.upper()}"]
        for key, name in KEYS.items()
        if f"GOV_{name.upper()}" in env
    }
    settings = _apply(settings, env_values, "environment (GOV_*)")
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    settings = _apply(settings, given, "command line")
    if "repository" in given:
        settings = replace(settings, repository_from="command line")
    elif "repository" in env_values:
        settings = replace(settings, repository_from="environment (GOV_REPOSITORY)")
    elif "repository" in values:
        settings = replace(settings, repository_from=found)
    else:
        settings = _infer_repository(settings, remote_url, read_changelog)
    try:
        settings.policy()
    except ValueError as exc:
        raise UsageError(
            f"link-template: {exc}", 'e.g. "https://github.com/{repository}/pull/{number}"'
        ) from exc
    return settings


def _infer_repository(
    settings: Settings,
    remote_url: Callable[[str], str | None] | None,
    read_changelog: Callable[[str, str], bytes | None] | None,
) -> Settings:
    from governance.core.links import repository_from_links

    data = read_changelog(settings.changelog, settings.main_branch) if read_changelog else None
    linked = repository_from_links(data) if data else None
    if linked and linked not in settings.former_repositories:
        return replace(settings, repository=linked, repository_from=f"{settings.changelog} links")
    if remote_url is None:
        return settings
    for remote in ("upstream", "origin"):
        slug = slug_from_remote(remote_url(remote))
        if slug:
            return replace(settings, repository=slug, repository_from=f"{remote} remote")
    return settings
