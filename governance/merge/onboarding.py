"""`gov init`: onboard a benchmark repository.

Finds the changelog, the master configs, the runner file and the scripts
folder (a configured path that exists is kept; a missing one is looked for in
the working tree), and proposes every file a repository needs: the settings
(only where the defaults do not fit), the pre-commit config, the
`check-changelog` workflow and the `.gitattributes` line that routes the
changelog to the merge driver (`governance.merge.driver`, hence this floor).
`plan` says what is in place and what would be written; `apply` writes what
is missing, never replacing an existing file unless forced, so a second run
changes nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from governance.core.atomic import write_atomically
from governance.core.diagnostics import UsageError
from governance.core.settings import Settings
from governance.merge.driver import attributes_line

PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"
WORKFLOW = ".github/workflows/check-changelog.yml"
CHECK_JOB = "check-changelog"  # the job (and check) gov's workflow adds
ATTRIBUTES = ".gitattributes"
DEFAULT_ACTION = "<org>/gov@<commit>"
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "deprecated"}
_MAX_DEPTH = 4


class Status(StrEnum):
    OK = "ok"  # in place
    CREATE = "create"  # missing: written by apply
    APPEND = "append"  # a file that exists gains lines (history kept)
    DIFFERS = "differs"  # exists with other content: replaced only when forced


@dataclass(frozen=True, slots=True)
class Proposal:
    path: str
    status: Status
    text: str  # what would be written (the whole file, or the appended lines)
    note: str = ""


@dataclass(slots=True)
class InitPlan:
    found: list[tuple[str, str, str]] = field(default_factory=list)  # (what, value, how)
    proposals: list[Proposal] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# -- detection -----------------------------------------------------------------


def _walk(root: Path) -> Iterator[str]:
    """Repository-relative paths of the working tree's files (bounded depth)."""
    for folder, dirs, files in os.walk(root):
        depth = len(Path(folder).relative_to(root).parts)
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and depth < _MAX_DEPTH)
        for name in sorted(files):
            yield (Path(folder) / name).relative_to(root).as_posix()


def _is_changelog(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    lines = [line for line in head.splitlines() if line.strip() and not line.startswith(b"#")]
    return bool(lines) and lines[0].startswith(b"- config-keys:")


def _origin(settings: Settings, name: str) -> str:
    """Where a kept path came from: the default, or the settings file."""
    return "default" if getattr(settings, name) == getattr(Settings(), name) else settings.source


def detect(root: Path, settings: Settings) -> tuple[Settings, list[tuple[str, str, str]]]:
    """The settings with each missing path replaced by what the tree has."""
    files = list(_walk(root))
    found: list[tuple[str, str, str]] = []
    changes: dict[str, Any] = {}

    changelog = settings.changelog
    if (root / changelog).is_file():
        found.append(("changelog", changelog, _origin(settings, "changelog")))
    else:
        named = [f for f in files if "changelog" in f.lower() and f.endswith((".yaml", ".yml"))]
        hits = sorted(
            (f for f in named if _is_changelog(root / f)), key=lambda f: (f.count("/"), f)
        )
        if not hits:
            raise UsageError(
                f"no changelog found: {changelog} does not exist and no YAML file named "
                "*changelog* starts with `- config-keys:`",
                "create it with its first entry, or set `changelog` in [tool.gov]",
            )
        changelog = hits[0]
        changes["changelog"] = changelog
        found.append(("changelog", changelog, "found"))

    masters = settings.master_configs
    if all((root / m).is_file() for m in masters):
        found.append(("master configs", ", ".join(masters), _origin(settings, "master_configs")))
    else:
        candidates = [f for f in files if f.endswith("-master.yaml")]
        by_folder: dict[str, list[str]] = {}
        for name in candidates:
            by_folder.setdefault(str(Path(name).parent), []).append(name)
        if by_folder:
            folder = max(by_folder, key=lambda d: (len(by_folder[d]), -d.count("/")))
            masters = tuple(sorted(by_folder[folder]))
            changes["master_configs"] = masters
            found.append(("master configs", ", ".join(masters), "found"))
        else:
            found.append(("master configs", "none", "not found: gov check needs --no-configs"))

    runners = settings.runners
    if (root / runners).is_file():
        found.append(("runner file", runners, _origin(settings, "runners")))
    else:
        beside = [str(Path(m).parent / "runners.yaml") for m in masters]
        hits = [r for r in beside if (root / r).is_file()] or [
            f for f in files if Path(f).name == "runners.yaml"
        ]
        if hits:
            runners = hits[0]
            changes["runners"] = runners
            found.append(("runner file", runners, "found"))
        else:
            found.append(("runner file", runners, "not found"))

    scripts = settings.scripts
    if (root / scripts).is_dir():
        found.append(("scripts folder", scripts, _origin(settings, "scripts")))
    else:
        # the reference layout: <scripts>/single_node/<scenario>/<name>.sh
        layouts = sorted(
            {
                f.split("/single_node/")[0]
                for f in files
                if "/single_node/" in f and f.endswith(".sh")
            },
            key=lambda d: (d.count("/"), d),
        )
        if layouts:
            changes["scripts"] = layouts[0]
            found.append(("scripts folder", layouts[0], "found"))
        else:
            found.append(("scripts folder", scripts, "not found: sweeps need `scripts`"))

    return replace(settings, **changes), found


# -- what to write ---------------------------------------------------------------

_PATH_KEYS = ("changelog", "master_configs", "runners", "scripts")


def settings_toml(settings: Settings) -> str:
    """The `[tool.gov]` keys whose values are not the defaults (paths only)."""
    defaults = Settings()
    lines = []
    for name in _PATH_KEYS:
        value = getattr(settings, name)
        if value != getattr(defaults, name):
            key = name.replace("_", "-")
            shown = json.dumps(list(value) if isinstance(value, tuple) else value)
            lines.append(f"{key} = {shown}")
    return "".join(line + "\n" for line in lines)


def pre_commit_text() -> str:
    return (
        '# gov\'s changelog check on every commit (README "Pre-commit hook"). It runs the\n'
        "# gov-pre-commit that is installed where git runs; to pin gov's repository and a\n"
        "# commit instead, see the README.\n"
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        "      - id: gov-check\n"
        "        name: gov check (changelog)\n"
        "        entry: gov-pre-commit\n"
        "        language: system\n"
        "        always_run: true\n"
        "        pass_filenames: true\n"
        "        require_serial: true\n"
    )


def workflow_text(action: str) -> str:
    return (
        "name: check-changelog\n"
        "on: pull_request\n"
        "jobs:\n"
        "  check-changelog:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "        with:\n"
        "          fetch-depth: 0  # the check compares with the merge-base\n"
        f"      - uses: {action}\n"
    )


def _whole_file(root: Path, path: str, text: str, present: str | None = None) -> Proposal:
    target = root / path
    if not target.is_file():
        return Proposal(path, Status.CREATE, text)
    current = target.read_text(encoding="utf-8", errors="replace")
    if current == text or (present is not None and present in current):
        return Proposal(path, Status.OK, "")
    return Proposal(path, Status.DIFFERS, text, "exists with other content")


def existing_checks(root: Path) -> list[tuple[str, str, list[str]]]:
    """(workflow file, job id, jobs that need it) of each job of the
    repository's other workflows named, or with the id, `check-changelog`."""
    from governance.core.yamlsafe import YamlLoadError, load

    found = []
    folder = root / ".github" / "workflows"
    files = sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")]) if folder.is_dir() else []
    for file in files:
        name = file.relative_to(root).as_posix()
        if name == WORKFLOW:
            continue
        try:
            document = load(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, YamlLoadError):
            continue  # not a workflow gov can read: nothing to say about it
        jobs = document.get("jobs") if isinstance(document, dict) else None
        if not isinstance(jobs, dict):
            continue
        for job, body in jobs.items():
            title = body.get("name") if isinstance(body, dict) else None
            if CHECK_JOB not in (job, title):
                continue
            needed = []
            for other, spec in jobs.items():
                needs = spec.get("needs") if isinstance(spec, dict) else None
                if needs == job or (isinstance(needs, list) and job in needs):
                    needed.append(str(other))
            found.append((name, str(job), needed))
    return found


def plan(root: Path, settings: Settings, *, action: str = DEFAULT_ACTION) -> InitPlan:
    detected, found = detect(root, settings)
    result = InitPlan(found)
    wanted = settings_toml(detected)
    if detected == settings:
        result.notes.append(
            "settings: the defaults fit"
            if settings.source == "defaults"
            else f"settings: {settings.source} fits"
        )
    elif settings.source != "defaults" and (root / ".gov.toml").is_file():
        result.proposals.append(_whole_file(root, ".gov.toml", wanted))
    elif settings.source != "defaults":
        result.proposals.append(
            Proposal(
                ".gov.toml",
                Status.CREATE if not (root / ".gov.toml").exists() else Status.DIFFERS,
                wanted,
                f"overrides the [tool.gov] of {settings.source}",
            )
        )
    elif (root / "pyproject.toml").is_file():
        result.proposals.append(
            Proposal(
                "pyproject.toml", Status.APPEND, "\n[tool.gov]\n" + wanted, "a [tool.gov] table"
            )
        )
    else:
        result.proposals.append(Proposal(".gov.toml", Status.CREATE, wanted))
    result.proposals.append(_whole_file(root, PRE_COMMIT_CONFIG, pre_commit_text(), "gov-check"))
    workflow = _whole_file(root, WORKFLOW, workflow_text(action))
    clashes = existing_checks(root)
    if clashes and workflow.status is Status.CREATE:
        file, _job, _needed = clashes[0]
        workflow = replace(
            workflow, status=Status.DIFFERS, note=f"{file} already has a job `{CHECK_JOB}`"
        )
    result.proposals.append(workflow)
    for file, job, needed in clashes:
        needs = f" (needed by {', '.join(needed)})" if needed else ""
        result.notes.append(
            f"{file}: job `{job}`{needs} already reports a check named `{CHECK_JOB}`, the name "
            "prepare-merge waits on; a second workflow would add another check of that name. "
            f"Replace that job's changelog steps with `uses: {action}` (after actions/checkout "
            f"with fetch-depth: 0), or rename one of the two jobs and run `gov init --write "
            f"--force` to add {WORKFLOW}"
        )
    line = attributes_line(detected.changelog)
    attributes = root / ATTRIBUTES
    lines = attributes.read_text(encoding="utf-8").splitlines() if attributes.is_file() else []
    if line in lines:
        result.proposals.append(Proposal(ATTRIBUTES, Status.OK, ""))
    else:
        status = Status.APPEND if attributes.is_file() else Status.CREATE
        result.proposals.append(Proposal(ATTRIBUTES, status, line + "\n"))
    if action == DEFAULT_ACTION:
        result.notes.append(
            f"{WORKFLOW}: replace `{DEFAULT_ACTION}` with gov's repository and a commit "
            "(or pass --action ORG/NAME@REV)"
        )
    result.notes.append(
        "each clone: `gov install-merge-driver` configures the driver in git and routes the "
        "changelog in .git/info/attributes too, so PR branches forked before .gitattributes "
        "had the line merge main with the driver"
    )
    return result


def apply(root: Path, proposals: list[Proposal], *, force: bool = False) -> list[Proposal]:
    """Write the proposals that are missing (and, when forced, those that
    differ); the ones written."""
    written = []
    for item in proposals:
        target = root / item.path
        if item.status is Status.OK or (item.status is Status.DIFFERS and not force):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if item.status is Status.APPEND:
            old = target.read_bytes()
            sep = b"" if not old or old.endswith(b"\n") else b"\n"
            write_atomically(target, old + sep + item.text.encode("utf-8"))
        else:
            write_atomically(target, item.text.encode("utf-8"))
        written.append(item)
    return written


def render(result: InitPlan, written: list[Proposal], *, write: bool) -> str:
    """What `gov init` prints on stdout: what was found, then each file's state."""
    out = [f"{what}: {value} ({how})" for what, value, how in result.found]
    for item in result.proposals:
        if item.status is Status.OK:
            out.append(f"ok: {item.path}")
        elif item in written:
            out.append(f"{'added to' if item.status is Status.APPEND else 'wrote'} {item.path}")
        elif write:
            out.append(f"kept {item.path}: {item.note}; --force replaces it")
        else:
            verb = "would add to" if item.status is Status.APPEND else "would write"
            note = f" ({item.note})" if item.note else ""
            out.append(f"{verb} {item.path}{note}:")
            out += [f"    {line}" for line in item.text.splitlines()]
    return "".join(line + "\n" for line in out)


def pending(result: InitPlan) -> bool:
    return any(item.status is not Status.OK for item in result.proposals)
