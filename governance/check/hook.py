"""The pre-commit door: which `gov check` to run, and whether to run it at all.

pre-commit calls the hook as `ENTRY [ARGS...] [FILES...]`: the manifest's
`args:` (e.g. `--pr 2194`) followed by the staged file names (every file with
`--all-files`). The hook always runs (`always_run: true`), so a repository whose
`changelog` setting is not `perf-changelog.yaml` is checked too; it decides
here, from the file names and the settings, whether a file the check reads is
among them, and skips in a few milliseconds when none is. Called without file
names (the plain git hook under `hooks/`), the caller passes the staged paths.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from governance.core.settings import Settings

if TYPE_CHECKING:
    from governance.git.repo import GitRepo

# Files that change what the check decides besides the configured paths.
SETTINGS_FILES = ("pyproject.toml", ".gov.toml")
# Where head comes from unless the hook's args say otherwise.
HEAD_OPTIONS = ("--worktree", "--staged", "--head-ref")


@dataclass(frozen=True, slots=True)
class HookArgs:
    options: tuple[str, ...]  # the check's options, values kept after their flag
    files: tuple[str, ...]  # the file names pre-commit appended


def split_args(argv: Sequence[str], takes_value: Collection[str]) -> HookArgs:
    """Options (with the value of each option in `takes_value`) apart from
    the file names: `--pr 2194 a.yaml` -> (`--pr`, `2194`), (`a.yaml`,)."""
    options: list[str] = []
    files: list[str] = []
    items = iter(argv)
    for arg in items:
        if arg == "--":
            files.extend(items)
        elif arg.startswith("-"):
            options.append(arg)
            if "=" not in arg and arg in takes_value:
                value = next(items, None)
                if value is not None:
                    options.append(value)
        else:
            files.append(arg)
    return HookArgs(tuple(options), tuple(files))


def watched_paths(settings: Settings) -> tuple[str, ...]:
    """Every path whose change the check must see."""
    return (settings.changelog, *settings.master_configs, settings.runners, *SETTINGS_FILES)


def relevant(files: Sequence[str], settings: Settings) -> list[str]:
    """The names among `files` that the check reads (in their order)."""
    watched = set(watched_paths(settings))
    return [name for name in files if name.removeprefix("./") in watched]


def check_argv(options: Sequence[str]) -> list[str]:
    """`check` with the hook's options; the working tree is head unless they
    name another source."""
    source = [] if any(o.split("=")[0] in HEAD_OPTIONS for o in options) else ["--worktree"]
    return ["check", *source, *options]


def should_run(repo: GitRepo, files: Sequence[str]) -> tuple[bool, str]:
    """(run the check?, why not) for `repo`: `files` are pre-commit's names,
    or none from the plain hook (the index's staged paths are read instead).
    Only the settings' paths are needed, not the slug."""
    from governance.check.sides import worktree_settings

    settings = worktree_settings(repo, infer_repository=False)
    names = list(files) or repo.staged_paths()
    if relevant(names, settings):
        return True, ""
    return False, f"gov-pre-commit: no change to {settings.changelog} or its configs; skipped"
