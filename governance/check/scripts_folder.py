"""The scripts folder as the preflight judges it: a commit's, or the working tree's.

A commit's folder is looked up in its listing and only the scripts the rows
reach are written to a temporary folder (`bash -n` reads a file), when the
listing answers "does this path exist" exactly: no symlink and no entry that
`governance.git.snapshot.write_folder` would refuse. Otherwise, or when the
resolver asks for a path with a `.` in it, the whole folder is written, as
before, so the findings never depend on which way was taken.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from governance.core.settings import Settings
from governance.git.repo import GitRepo
from governance.git.snapshot import (
    EXECUTABLE_MODE,
    SYMLINK_MODE,
    UnsafeTreePath,
    component_problem,
    inside,
    write_folder,
)


@dataclass(slots=True)
class ScriptsFolder:
    """The scripts folder as judged. `files`/`modes`: every regular file's
    bytes and executable bit; `blobs`: their blob ids (a commit's folder);
    `listing`: the paths below `folder` when a lookup answers "does it exist"
    exactly (no symlink, no entry write_folder would refuse), so only the
    scripts the rows reach are written (`materialize` writes the rest)."""

    folder: Path
    files: dict[str, bytes]
    modes: dict[str, bool]
    refused: list[UnsafeTreePath] = field(default_factory=list)
    blobs: dict[str, str] | None = None
    listing: frozenset[str] | None = None
    materialize: Callable[[], None] | None = None

    def on_disk(self, path: str, prefix: str) -> Path:
        """`path` (a repository path of a regular file) written below `folder` if not yet."""
        target = self.folder / path[len(prefix) + 1 :]
        if self.listing is not None and not target.exists():
            target = inside(self.folder, path[len(prefix) + 1 :])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.files[path])
            target.chmod(0o755 if self.modes[path] else 0o644)
        return target


def in_repository(repo: GitRepo, settings: Settings) -> bool:
    """Is the scripts folder a path inside the repository (so commits hold it)?
    A folder elsewhere (an absolute `scripts`) is read from the file system."""
    folder = Path(settings.scripts)
    if folder.is_absolute() or ".." in folder.parts:
        return False
    return (repo.root / folder).resolve().is_relative_to(repo.root.resolve())


def scripts_identity(repo: GitRepo, settings: Settings, commit: str | None) -> str:
    """What changes when a script the preflight would read changes: the
    folder's tree id at `commit` (a folder inside the repository), else the
    names, sizes, modification times and modes of the files on disk (a
    `chmod +x` changes what the launcher does with a script)."""
    if commit is not None and in_repository(repo, settings):
        return repo.tree_id(commit, settings.scripts) or "-"
    folder = repo.root / settings.scripts
    if not folder.is_dir():
        return "-"
    return hashlib.sha256("\n".join(sorted(file_stats(str(folder)))).encode()).hexdigest()


def file_stats(folder: str) -> Iterator[str]:
    """`path:size:mtime:mode` (lstat) of every file under `folder` as
    `Path.rglob` finds them: symlinks to files count, symlinked folders are
    not entered. One stat per plain file (`is_file` on each path was a second)."""
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            path = os.path.join(root, name)
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) or (stat.S_ISLNK(info.st_mode) and os.path.isfile(path)):
                yield f"{path}:{info.st_size}:{info.st_mtime_ns}:{info.st_mode:o}"


def _lookup_is_exact(entries: Mapping[str, tuple[str, str]], prefix: str) -> bool:
    """Would `write_folder` write every entry as a plain file, refusing none?
    (No symlink, every component plain, no file where another needs a folder.)"""
    folders: set[str] = set()
    for path, (mode, _blob) in entries.items():
        if mode == SYMLINK_MODE:
            return False
        parts = path[len(prefix) + 1 :].split("/")
        if any(component_problem(part) for part in parts):
            return False
        folders.update("/".join(parts[:k]) for k in range(1, len(parts)))
    return not any(path[len(prefix) + 1 :] in folders for path in entries)


def _working_tree_files(root: Path, prefix: str) -> tuple[dict[str, bytes], dict[str, bool]]:
    """Every regular file below `root` (symlinks, and folders behind them,
    skipped), its bytes and whether it is executable, in path order. One
    `scandir` per folder: a hook runs this on every commit."""
    found: list[tuple[list[str], str, str]] = []  # (path parts, repository path, file)
    folders: list[tuple[str, list[str]]] = [(root.as_posix(), [])] if root.is_dir() else []
    while folders:
        folder, parts = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append((entry.path, [*parts, entry.name]))
                elif entry.is_file(follow_symlinks=False):
                    names = [*parts, entry.name]
                    found.append((names, f"{prefix}/{'/'.join(names)}", entry.path))
    found.sort(key=lambda item: item[0])  # the order pathlib's sorted paths had
    files, modes = {}, {}
    for _parts, path, file in found:
        with open(file, "rb") as handle:
            files[path] = handle.read()
        modes[path] = os.access(file, os.X_OK)
    return files, modes


@contextmanager
def scripts_folder(
    repo: GitRepo, settings: Settings, commit: str | None
) -> Iterator[ScriptsFolder]:
    """The scripts folder as judged: the commit's tree (`governance.git.snapshot`
    refuses entries leaving the folder) in a temporary folder, or the working tree."""
    prefix = settings.scripts.rstrip("/")
    if commit is None:
        root = repo.root / prefix
        files, modes = _working_tree_files(root, prefix)
        yield ScriptsFolder(root, files, modes)
        return
    import tempfile  # a commit's folder only: the hook reads the working tree

    temp = Path(tempfile.mkdtemp(prefix="gov-preflight-"))
    try:
        entries = repo.tree_files(commit, prefix)
        if not _lookup_is_exact(entries, prefix):
            written = write_folder(repo, commit, prefix, temp)
            yield ScriptsFolder(temp, written.files, written.modes, written.refused)
            return
        contents = repo.read_blobs_by_id([blob for _mode, blob in entries.values()])
        scripts = ScriptsFolder(
            temp,
            dict(zip(entries, contents, strict=True)),
            {path: mode == EXECUTABLE_MODE for path, (mode, _blob) in entries.items()},
            blobs={path: blob for path, (_mode, blob) in entries.items()},
            listing=frozenset(path[len(prefix) + 1 :] for path in entries),
        )

        def materialize() -> None:
            for path in scripts.files:
                scripts.on_disk(path, prefix)
            scripts.listing = None

        scripts.materialize = materialize
        yield scripts
    finally:
        shutil.rmtree(temp, ignore_errors=True)
