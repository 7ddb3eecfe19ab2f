"""Each settings value checked when it is read: a bad value is a usage error
(exit 2) naming the file, the key and why, never a crash later.

`validate(name, value, key, where)` receives the coerced value of one field
of `Settings` and raises `UsageError` when gov could not use it safely:
repository paths that leave the repository, templates with fields gov does
not fill, a PR-subject pattern without a number group.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from governance.core.diagnostics import UsageError

# Paths gov reads from the repository (a commit's tree or the working tree).
_REPO_PATHS = {"changelog", "runners"}
_REPO_PATH_LISTS = {"master_configs"}
# Paths that may live outside the repository (gov's own output; an outside scripts folder).
_OUTPUT_PATHS = {"results", "ledger", "scripts"}  # scripts may live outside (read from disk)
# The number group of `pr-subject-pattern`: digits and nothing else.
_NUMBER_GROUP = re.compile(r"\((?:\?P<\w+>)?(?:\\d|\[0-9\])\+\)")
_BRANCH = re.compile(r"[A-Za-z0-9._/-]+")


def _fail(where: str, key: str, why: str, example: str) -> UsageError:
    return UsageError(f"{where}: `{key}` {why}", f"e.g. {key} = {example}")


def repository_path(value: str, key: str, where: str) -> str:
    """A path inside the repository: relative, no `..`, no NUL or control
    characters, not empty."""
    example = '"perf-changelog.yaml"'
    if any(ord(ch) < 32 or ch == "\x7f" for ch in value):
        raise _fail(where, key, "contains a control character (NUL, newline...)", example)
    if "\\" in value:
        raise _fail(where, key, f"'{value}' uses a backslash; write / between folders", example)
    path = PurePosixPath(value)
    if path.is_absolute():
        raise _fail(
            where, key, f"'{value}' is absolute; gov reads only inside the repository", example
        )
    if ".." in path.parts:
        raise _fail(where, key, f"'{value}' leaves the repository (`..`)", example)
    if value.strip() in ("", ".") or value != value.strip():
        raise _fail(where, key, f"'{value}' is not a file path", example)
    return value


def _fields(template: str, key: str, where: str, allowed: set[str], example: str) -> set[str]:
    """The `{field}` names of a str.format template; refuses positional or
    unknown fields, conversions and format specs."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise _fail(where, key, f"is not a valid template ({exc})", example) from exc
    names = set()
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in allowed:
            shown = "{" + name + "}"
            known = ", ".join("{" + a + "}" for a in sorted(allowed))
            raise _fail(where, key, f"uses {shown}; the only fields are {known}", example)
        if spec or conversion:
            raise _fail(where, key, f"formats {{{name}}}; write it plainly", example)
        names.add(name)
    return names


def link_template(value: str, key: str, where: str) -> str:
    example = '"https://github.com/{repository}/pull/{number}"'
    names = _fields(value, key, where, {"repository", "number"}, example)
    if "number" not in names:
        raise _fail(where, key, "must contain {number}", example)
    if value.count("{number}") != 1:
        raise _fail(where, key, "must contain {number} exactly once", example)
    return value


def placeholders(values: tuple[str, ...], key: str, where: str) -> tuple[str, ...]:
    example = '["XXX", "https://github.com/{repository}/pull/XXX"]'
    for value in values:
        _fields(value, key, where, {"repository"}, example)
        if not value.strip() or any(ord(ch) < 32 for ch in value):
            raise _fail(where, key, f"{value!r} is not a usable placeholder", example)
    return values


def pr_subject_pattern(value: str, key: str, where: str) -> str:
    example = r'"\(#(\d+)\)"'
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise _fail(where, key, f"is not a regular expression ({exc})", example) from exc
    if compiled.groups != 1 or not _NUMBER_GROUP.search(value):
        raise _fail(
            where,
            key,
            "must have exactly one group, the PR number: `(\\d+)` or `([0-9]+)`",
            example,
        )
    return value


def main_branch(value: str, key: str, where: str) -> str:
    if not _BRANCH.fullmatch(value) or value.startswith(("-", "/")) or ".." in value:
        raise _fail(where, key, f"{value!r} is not a branch name", '"main"')
    return value


def output_path(value: str, key: str, where: str) -> str:
    if any(ord(ch) < 32 for ch in value):
        raise _fail(where, key, "contains a control character (NUL, newline...)", '".git/gov/x"')
    return value


def validate(name: str, value: Any, key: str, where: str) -> Any:
    """The value of field `name` (already of the right type), checked."""
    if name in _REPO_PATHS:
        return repository_path(value, key, where)
    if name in _REPO_PATH_LISTS:
        return tuple(repository_path(v, key, where) for v in value)
    if name in _OUTPUT_PATHS:
        return output_path(value, key, where)
    checks: dict[str, Callable[[Any, str, str], Any]] = {
        "link_template": link_template,
        "placeholders": placeholders,
        "pr_subject_pattern": pr_subject_pattern,
        "main_branch": main_branch,
    }
    check = checks.get(name)
    return check(value, key, where) if check else value
