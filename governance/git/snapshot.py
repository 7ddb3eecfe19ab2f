"""A folder of a commit written to disk: the one way a tree path becomes a file path.

A PR controls its trees, and `git mktree` builds entries git's own checkout
refuses (`..`, `.`, `.git`, an empty name); a default `git fetch` accepts
them. `inside` is the only function that joins a path read from a git tree
onto a file-system folder: it refuses those components, absolute paths and
any existing symlink on the way, so a snapshot never writes outside its
folder. A refused entry is reported (the caller turns it into a finding),
never written.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.git.repo import GitRepo

SYMLINK_MODE = "120000"
EXECUTABLE_MODE = "100755"


class UnsafeTreePath(ValueError):
    """A tree entry that must not be joined onto a folder; `reason` says why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path!r}: {reason}")
        self.path = path
        self.reason = reason


def component_problem(part: str) -> str:
    if part == "":
        return "an empty path component"
    if part in (".", ".."):
        return f"a {part!r} path component"
    if part.casefold() == ".git":
        return "a '.git' path component"
    if "\0" in part or "\\" in part:
        return "a NUL or backslash in a path component"
    return ""


def inside(root: Path, path: str) -> Path:
    """`root / path` for a path read from a git tree, refused (UnsafeTreePath)
    when it is absolute, has an empty, `.`, `..` or `.git` component, or
    passes through an existing symlink or non-folder below `root`."""
    if path.startswith("/"):
        raise UnsafeTreePath(path, "an absolute path")
    parts = path.split("/")
    for part in parts:
        problem = component_problem(part)
        if problem:
            raise UnsafeTreePath(path, problem)
    current = root
    for part in parts[:-1]:
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            break
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafeTreePath(path, f"{part!r} on the way is not a folder")
    return root.joinpath(*parts)


@dataclass(slots=True)
class Snapshot:
    """What `write_folder` wrote: repository path -> bytes and executable bit
    of each regular file, and the entries it refused (path, reason)."""

    files: dict[str, bytes] = field(default_factory=dict)
    modes: dict[str, bool] = field(default_factory=dict)
    refused: list[UnsafeTreePath] = field(default_factory=list)


def write_folder(repo: GitRepo, commit: str, folder: str, dest: Path) -> Snapshot:
    """Write `folder` of `commit` into `dest` (an empty folder): regular files
    with their executable bit, symlinks last (so no file is written through
    one). Every path goes through `inside`."""
    prefix = folder.rstrip("/")
    out = Snapshot()
    entries = sorted(
        repo.tree_files(commit, prefix).items(), key=lambda item: item[1][0] == SYMLINK_MODE
    )
    for path, (mode, blob) in entries:
        try:
            target = inside(dest, path[len(prefix) + 1 :])
            target.parent.mkdir(parents=True, exist_ok=True)
            inside(dest, path[len(prefix) + 1 :])  # no symlink appeared on the way
        except UnsafeTreePath as exc:
            out.refused.append(UnsafeTreePath(path, exc.reason))
            continue
        data = repo.read_blob_by_id(blob)
        if mode == SYMLINK_MODE:  # the resolver refuses one leaving the folder
            target.symlink_to(data.decode("utf-8", "replace"))
            continue
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(target, flags, 0o755 if mode == EXECUTABLE_MODE else 0o644)
        except FileExistsError:  # a repeated entry name
            out.refused.append(UnsafeTreePath(path, "a repeated tree entry"))
            continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(target, 0o755 if mode == EXECUTABLE_MODE else 0o644)
        out.files[path] = data
        out.modes[path] = mode == EXECUTABLE_MODE
    return out
