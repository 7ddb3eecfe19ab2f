"""The checked-out side of a repository: HEAD, the index, the working tree,
git's own per-worktree files, and linked worktrees (the demo, the merge
driver and prepare-merge use them)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import git

# Every `git diff` gov runs: the repository's textconv and external diff
# drivers (its attributes and config) never shape what gov reads. gov reads
# file contents from blobs, never from diff text; the diffs it runs list names.
NO_DIFF_DRIVERS = ("--no-ext-diff", "--no-textconv")


class Worktree:
    """The main working tree of one repository (`GitRepo.worktree`)."""

    def __init__(self, handle: git.Repo, root: Path) -> None:
        self._repo = handle
        self.root = root

    # -- HEAD and commits ------------------------------------------------------

    def head_sha(self) -> str:
        return self._repo.head.commit.hexsha

    def current_branch(self) -> str | None:
        """The branch HEAD is attached to, or None when detached (read from
        the HEAD file, no git process)."""
        head = self._repo.head
        if head.is_detached:
            return None
        return head.reference.path.removeprefix("refs/heads/")

    def checkout(self, branch: str, *, create_from: str | None = None) -> None:
        if create_from is not None:
            self._repo.git.checkout("-q", "-b", branch, create_from)
        else:
            self._repo.git.checkout("-q", branch)

    def detach_head(self) -> None:
        """Detach HEAD at its commit; the index and working tree stay as they are."""
        self._repo.git.checkout("-q", "--detach")

    def commit_all(self, message: str) -> str:
        self._repo.git.add("-A")
        self._repo.git.commit("-q", "--no-verify", "-m", message)
        return self.head_sha()

    # -- the index and an ordinary merge ----------------------------------------

    def status_porcelain(self) -> list[str]:
        """`git status --porcelain` lines (untracked files count as dirty)."""
        out = self._repo.git.status("--porcelain", "--untracked-files=normal")
        return [line for line in out.splitlines() if line.strip()]

    def merge(self, ref: str) -> list[str]:
        """Merge `ref` into the current branch; returns unmerged paths (empty: merged)."""
        import git

        try:
            self._repo.git.merge("--no-ff", "--no-edit", "-q", ref)
        except git.GitCommandError:
            unmerged = self.unmerged_paths()
            if not unmerged:
                raise
            return unmerged
        return []

    def unmerged_paths(self) -> list[str]:
        out = self._repo.git.diff(*NO_DIFF_DRIVERS, "--name-only", "--diff-filter=U")
        return sorted(set(out.split()))

    def stage(self, path: str) -> None:
        self._repo.git.add("--", path)

    def merge_in_progress(self) -> bool:
        return (Path(self._repo.git_dir) / "MERGE_HEAD").exists()

    def rebase_in_progress(self) -> bool:
        return any(self.git_path(name).exists() for name in ("rebase-merge", "rebase-apply"))

    # -- what git keeps per worktree -------------------------------------------

    def git_path(self, name: str) -> Path:
        """`git rev-parse --git-path NAME`: where git keeps NAME (worktree aware)."""
        out = self._repo.git.rev_parse("--git-path", name)
        path = Path(out.strip())
        return path if path.is_absolute() else self.root / path

    def attribute(self, path: str, name: str) -> str:
        """The value of attribute `name` for `path` as git sees it right now
        (`unspecified`, `set`, `unset`, or the value)."""
        out = self._repo.git.check_attr(name, "--", path)
        return out.rsplit(": ", 1)[-1].strip()

    # -- linked worktrees --------------------------------------------------------

    def add_linked(self, path: Path, commit: str) -> None:
        """A detached checkout of `commit` at `path` (a linked worktree)."""
        self._repo.git.worktree("add", "--detach", "--quiet", str(path), commit)

    @contextmanager
    def temporary_checkout(self, commit: str, prefix: str) -> Iterator[Path]:
        """A detached linked worktree of `commit` at `<new folder named prefix…>/tree`,
        removed with its folder afterwards whatever happens. Put the pid in
        `prefix` when a later run must recognise a dead process's leftovers
        (`merge.scratch.clean_litter`)."""
        folder = Path(tempfile.mkdtemp(prefix=prefix))
        tree = folder / "tree"
        try:
            self.add_linked(tree, commit)
            try:
                yield tree
            finally:
                self.remove_linked(tree)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def remove_linked(self, path: Path) -> None:
        """Remove a linked worktree made by `add_linked`, even if it is dirty."""
        import git

        try:
            self._repo.git.worktree("remove", "--force", str(path))
        except git.GitCommandError:
            self._repo.git.worktree("prune")

    def linked_paths(self) -> list[Path]:
        """The folders of the linked worktrees (not the main one)."""
        out = self._repo.git.worktree("list", "--porcelain")
        paths = [
            Path(line[len("worktree ") :])
            for line in out.splitlines()
            if line.startswith("worktree ")
        ]
        return paths[1:]

    def prune_linked(self) -> None:
        """Forget linked worktrees whose folders are gone."""
        self._repo.git.worktree("prune")
