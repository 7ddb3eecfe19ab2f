"""The operations that change a repository: commits, merges, refs, config,
worktrees, pushes (the demo, the merge driver and prepare-merge use them).

A mixin of `gitrepo.GitRepo`, which stays the only importer of gitpython:
these methods reach git through the `_repo` and `_git_module` it opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from governance.core.diagnostics import UsageError


@dataclass(frozen=True, slots=True)
class MergeTree:
    """Result of an in-memory merge: the tree and the unmerged index stages
    (path -> stage number -> (mode, blob id)); no stages means it merged cleanly."""

    tree: str
    stages: dict[str, dict[int, tuple[str, str]]]

    @property
    def conflicts(self) -> list[str]:
        return sorted(self.stages)


class GitWrites:
    _repo: Any  # git.Repo, set by GitRepo.__init__

    @property
    def root(self) -> Path:  # overridden by GitRepo
        raise NotImplementedError

    _git_module: Any  # the gitpython module

    def head_sha(self) -> str:
        return self._repo.head.commit.hexsha

    def checkout(self, branch: str, *, create_from: str | None = None) -> None:
        if create_from is not None:
            self._repo.git.checkout("-q", "-b", branch, create_from)
        else:
            self._repo.git.checkout("-q", branch)

    def commit_all(self, message: str) -> str:
        self._repo.git.add("-A")
        self._repo.git.commit("-q", "--no-verify", "-m", message)
        return self.head_sha()

    def merge(self, ref: str) -> list[str]:
        """Merge `ref` into the current branch; returns unmerged paths (empty: merged)."""
        try:
            self._repo.git.merge("--no-ff", "--no-edit", "-q", ref)
        except self._git_module.GitCommandError:
            unmerged = self.unmerged_paths()
            if not unmerged:
                raise
            return unmerged
        return []

    def unmerged_paths(self) -> list[str]:
        out = self._repo.git.diff("--name-only", "--diff-filter=U")
        return sorted(set(out.split()))

    def stage(self, path: str) -> None:
        self._repo.git.add("--", path)

    def commit_merge(self) -> str:
        """Conclude a merge whose conflicts were resolved and staged."""
        self._repo.git.commit("-q", "--no-edit", "--no-verify")
        return self.head_sha()

    # -- config, attributes and file merges (merge driver) -------------------

    def config_get(self, key: str) -> str | None:
        """The repository-local value of `key` (None when unset)."""
        try:
            return self._repo.git.config("--local", "--get", key)
        except self._git_module.GitCommandError:
            return None

    def config_set(self, key: str, value: str) -> None:
        self._repo.git.config("--local", key, value)

    def attribute(self, path: str, name: str) -> str:
        """The value of attribute `name` for `path` as git sees it right now
        (`unspecified`, `set`, `unset`, or the value)."""
        out = self._repo.git.check_attr(name, "--", path)
        return out.rsplit(": ", 1)[-1].strip()

    def git_path(self, name: str) -> Path:
        """`git rev-parse --git-path NAME`: where git keeps NAME (worktree aware)."""
        out = self._repo.git.rev_parse("--git-path", name)
        path = Path(out.strip())
        return path if path.is_absolute() else self.root / path

    def rebase_in_progress(self) -> bool:
        return any(self.git_path(name).exists() for name in ("rebase-merge", "rebase-apply"))

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

    # -- prepare-merge: in-memory merges, scratch refs, worktree state --------

    def status_porcelain(self) -> list[str]:
        """`git status --porcelain` lines (untracked files count as dirty)."""
        out = self._repo.git.status("--porcelain", "--untracked-files=normal")
        return [line for line in out.splitlines() if line.strip()]

    def current_branch(self) -> str | None:
        """The branch HEAD is attached to, or None when detached (read from
        the HEAD file, no git process)."""
        head = self._repo.head
        if head.is_detached:
            return None
        return head.reference.path.removeprefix("refs/heads/")

    def detach_head(self) -> None:
        """Detach HEAD at its commit; the index and working tree stay as they are."""
        self._repo.git.checkout("-q", "--detach")

    def merge_in_progress(self) -> bool:
        return (Path(self._repo.git_dir) / "MERGE_HEAD").exists()

    def merge_tree(self, ours: str, theirs: str) -> MergeTree:
        """Merge two commits without touching the index or working tree
        (`git merge-tree --write-tree`, the same `ort` strategy as `git merge`).
        Conflicted files are in the returned tree with conflict markers."""
        status, out, _err = self._repo.git.merge_tree(
            "--write-tree", "-z", ours, theirs, with_extended_output=True, with_exceptions=False
        )
        if status not in (0, 1):
            raise UsageError(
                f"git merge-tree {ours[:12]} {theirs[:12]} failed: {_err.strip()}",
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

    def add_worktree(self, path: Path, commit: str) -> None:
        """A detached checkout of `commit` at `path` (a linked worktree)."""
        self._repo.git.worktree("add", "--detach", "--quiet", str(path), commit)

    def remove_worktree(self, path: Path) -> None:
        """Remove a linked worktree made by `add_worktree`, even if it is dirty."""
        try:
            self._repo.git.worktree("remove", "--force", str(path))
        except self._git_module.GitCommandError:
            self._repo.git.worktree("prune")

    def commits_between(self, base: str, head: str) -> list[str]:
        """Commits reachable from `head` but not from `base`, oldest first."""
        return self._repo.git.rev_list("--reverse", f"{base}..{head}").split()

    def write_blob(self, data: bytes) -> str:
        from io import BytesIO

        from gitdb.base import IStream

        return self._repo.odb.store(IStream("blob", len(data), BytesIO(data))).binsha.hex()

    def tree_with_file(self, tree: str, path: str, data: bytes, mode: str = "100644") -> str:
        """A copy of `tree` in which `path` holds `data` (written through a
        throwaway index, so the real index is never touched)."""
        import tempfile

        blob = self.write_blob(data)
        with tempfile.TemporaryDirectory(prefix="gov-index-") as scratch:
            env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
            self._repo.git.read_tree(tree, env=env)
            self._repo.git.update_index("--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
            return self._repo.git.write_tree(env=env).strip()

    def tree_of(self, commit: str) -> str:
        return self._repo.git.rev_parse(f"{commit}^{{tree}}").strip()

    def delete_ref(self, ref: str, expected: str | None = None) -> bool:
        """Delete `ref` (only if it still points at `expected`, when given)."""
        args = [ref] + ([expected] if expected else [])
        try:
            self._repo.git.update_ref("-d", *args)
        except self._git_module.GitCommandError:
            return False
        return True

    def fetch(self, remote: str, refspec: str) -> None:
        try:
            self._repo.git.fetch("-q", "--no-tags", remote, refspec)
        except self._git_module.GitCommandError as exc:
            raise UsageError(
                f"git fetch {remote} {refspec} failed: {exc.stderr.strip()}",
                "check the remote and your network, then re-run",
            ) from exc

    def push_lease(self, remote: str, sha: str, branch: str, expected: str) -> bool:
        """Push `sha` to `branch` on `remote` only if it still points at
        `expected` (`--force-with-lease`): a compare-and-swap on the remote."""
        try:
            self._repo.git.push(
                "-q",
                f"--force-with-lease=refs/heads/{branch}:{expected}",
                remote,
                f"{sha}:refs/heads/{branch}",
            )
        except self._git_module.GitCommandError:
            return False
        return True
