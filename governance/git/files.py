"""Reading files as gov must: regular files only, never out of the repository.

A PR controls the tree gov reads, so a symlinked changelog
(`perf-changelog.yaml -> /proc/self/environ`), a submodule at the changelog
path or a path with `..` is refused with the reason (exit 2) instead of
followed; see docs/security.md.
"""

from __future__ import annotations

import os
from pathlib import Path

from governance.core.diagnostics import UsageError

_SYMLINK_MODE, _GITLINK_MODE = 0o120000, 0o160000


def require_regular(kind: str, mode: int, path: str, where: str) -> None:
    """Refuse a tree entry gov must not read as a file (exit 2, the reason)."""
    what = (
        "a symlink"
        if mode == _SYMLINK_MODE
        else "a submodule (gitlink)"
        if mode == _GITLINK_MODE or kind == "submodule"
        else "a folder"
        if kind == "tree"
        else ""
    )
    if what:
        raise UsageError(
            f"{path} {where} is {what}, not a regular file; gov reads only regular files",
            f"commit {path} itself (not a link to it)",
        )


def read_inside(root: Path, path: str) -> bytes | None:
    """The bytes of the regular file `root/path`, refusing every way out of
    `root` (exit 2): absolute paths, `..`, symlinks, special files."""
    import stat

    parts = Path(path).parts
    if Path(path).is_absolute() or ".." in parts or "\0" in path:
        raise UsageError(f"{path}: not a path inside the repository", "use a relative path")
    current = root
    for index, part in enumerate(parts):
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise UsageError(
                f"{path}: {current.relative_to(root)} is a symlink; gov reads only regular "
                "files inside the repository",
                "replace the link with the file itself",
            )
        last = index == len(parts) - 1
        if last and not stat.S_ISREG(info.st_mode):
            if stat.S_ISDIR(info.st_mode):
                raise UsageError(f"{path} is a folder, not a file", "name the file")
            raise UsageError(f"{path} is not a regular file", "gov reads only regular files")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(root / path, flags)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def entry_mode(tree: bytes, name: str) -> int | None:
    """The mode of entry `name` in a raw git tree object (None: absent).
    Entries are `<octal mode> <name>\\0<20-byte id>`."""
    want = name.encode("utf-8", "surrogateescape")
    at = 0
    while at < len(tree):
        space = tree.index(b" ", at)
        nul = tree.index(b"\0", space)
        if tree[space + 1 : nul] == want:
            return int(tree[at:space], 8)
        at = nul + 21
    return None
