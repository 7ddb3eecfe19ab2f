"""Writing git objects without touching the index or the working tree: blobs,
trees with one file replaced, commits, in-memory merges and file merges.

prepare-merge builds its result entirely from these, so a failure before a ref
moves leaves the repository exactly as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from governance.core.diagnostics import UsageError

if TYPE_CHECKING:
    import git


@dataclass(frozen=True, slots=True)
class MergeTree:
    """Result of an in-memory merge: the tree and the unmerged index stages
    (path -> stage number -> (mode, blob id)); no stages means it merged cleanly."""

    tree: str
    stages: dict[str, dict[int, tuple[str, str]]]

    @property
    def conflicts(self) -> list[str]:
        return sorted(self.stages)


class Objects:
    """The object database of one repository (`GitRepo.objects`)."""

    def __init__(self, handle: git.Repo) -> None:
        self._repo = handle

    def write_blob(self, data: bytes) -> str:
        from gitdb.base import IStream

        return self._repo.odb.store(IStream("blob", len(data), BytesIO(data))).binsha.hex()

    def tree_of(self, commit: str) -> str:
        return self._repo.git.rev_parse(f"{commit}^{{tree}}").strip()

    def tree_with_file(self, tree: str, path: str, data: bytes, mode: str = "100644") -> str:
        """A copy of `tree` in which `path` holds `data` (written through a
        throwaway index, so the real index is never touched)."""
        blob = self.write_blob(data)
        import tempfile  # merges only: a check never needs a scratch folder

        with tempfile.TemporaryDirectory(prefix=f"gov-index-{os.getpid()}-") as scratch:
            env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
            self._repo.git.read_tree(tree, env=env)
            self._repo.git.update_index("--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
            return self._repo.git.write_tree(env=env).strip()

    def commit_tree(self, tree_ish: str, parents: list[str], message: str) -> str:
        """Write a commit object (no ref moves) and return its SHA."""
        import git

        args: list[str] = [f"{tree_ish}^{{tree}}"]
        for parent in parents:
            args += ["-p", parent]
        try:
            out = self._repo.git.commit_tree(*args, "-m", message)
        except git.GitCommandError as exc:
            raise UsageError(
                f"cannot write a commit for {tree_ish}",
                "check that git user.name and user.email are configured",
            ) from exc
        return out.strip()

    def merge_tree(self, ours: str, theirs: str) -> MergeTree:
        """Merge two commits without touching the index or working tree
        (`git merge-tree --write-tree`, the same `ort` strategy as `git merge`).
        Conflicted files are in the returned tree with conflict markers."""
        status, out, err = self._repo.git.merge_tree(
            "--write-tree", "-z", ours, theirs, with_extended_output=True, with_exceptions=False
        )
        if status not in (0, 1):
            raise UsageError(
                f"git merge-tree {ours[:12]} {theirs[:12]} failed: {err.strip()}",
                "gov prepare-merge needs git 2.38 or newer",
            )
        tree, _, rest = out.partition("\0")
        stages: dict[str, dict[int, tuple[str, str]]] = {}
        if status == 1:
            for record in rest.split("\0"):
                if not record:
                    break  # the empty record ends the conflicted-file list
                info, _, path = record.partition("\t")
                mode, oid, stage = info.split()
                stages.setdefault(path, {})[int(stage)] = (mode, oid)
        return MergeTree(tree.strip(), stages)

    def merge_file(
        self,
        current: Path,
        base: Path,
        other: Path,
        *,
        labels: tuple[str, str, str] = ("ours", "base", "theirs"),
        marker_size: int = 7,
    ) -> tuple[int, bytes]:
        """`git merge-file -p`: git's own three-way text merge of three files.

        Returns (status, merged bytes): status 0 is clean, 1..127 counts the
        conflicts (the bytes then hold conflict markers), anything else is an
        error and the bytes are meaningless. No file is modified.
        """
        args = ["-p", f"--marker-size={marker_size}"]
        for label in labels:
            args += ["-L", label]
        status, out, _err = self._repo.git.merge_file(
            *args,
            str(current),
            str(base),
            str(other),
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
        return status, out
