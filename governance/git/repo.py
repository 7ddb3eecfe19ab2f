"""`GitRepo`: a repository opened once per command, with its refs, blobs and
history; its object database, working tree and remotes hang off it as
`objects`, `worktree` and `remotes` (modules of their own).

Git sets `GIT_DIR`, `GIT_INDEX_FILE` and friends when it runs a hook; a tool
called from a hook that inherits them talks to the wrong repository or index,
so every git process started here runs with those variables removed.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from governance.core.diagnostics import UsageError
from governance.git.files import read_inside, require_regular
from governance.git.objects import Objects
from governance.git.remotes import Remotes
from governance.git.worktrees import Worktree

_BLOB_CACHE_SIZE = 64

# Variables git exports to hooks that would redirect our own git calls.
_LEAKED_GIT_VARS = (
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
)


def strip_leaked_git_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """Return (and, for os.environ, apply) the environment without hook leaks."""
    target = os.environ if env is None else env
    for name in _LEAKED_GIT_VARS:
        target.pop(name, None)
    return dict(target)


@dataclass(frozen=True, slots=True)
class CommitInfo:
    sha: str
    parent: str | None
    subject: str


class GitRepo:
    """A repository on disk, opened once per command."""

    def __init__(self, path: str | Path = ".") -> None:
        import git  # gitpython, imported lazily so `gov --help` stays fast

        strip_leaked_git_env()
        try:
            self._repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise UsageError(
                f"not a git repository: {Path(path).resolve()}",
                "run gov inside a git checkout, or pass --repo PATH",
            ) from exc
        self._git_module = git
        # Bounded: a history replay reads thousands of blobs; memory must not
        # grow with history length.
        self._blob_cache: OrderedDict[tuple[str, str], bytes | None] = OrderedDict()

    # -- basic facts -----------------------------------------------------

    @property
    def root(self) -> Path:
        if self._repo.working_tree_dir is None:
            return Path(self._repo.git_dir)
        return Path(self._repo.working_tree_dir)

    @property
    def git_dir(self) -> Path:
        return Path(self._repo.common_dir)

    def is_shallow(self) -> bool:
        return (Path(self._repo.git_dir) / "shallow").exists()

    @cached_property
    def objects(self) -> Objects:
        return Objects(self._repo)

    @cached_property
    def worktree(self) -> Worktree:
        return Worktree(self._repo, self.root)

    @cached_property
    def remotes(self) -> Remotes:
        return Remotes(self._repo)

    # -- refs ------------------------------------------------------------

    def resolve(self, ref: str) -> str:
        """Full commit SHA of `ref`, or a UsageError that names it."""
        git = self._git_module
        try:
            return self._repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
        except git.GitCommandError as exc:
            hint = "check the spelling, or fetch it first (git fetch origin)"
            if self.is_shallow():
                hint = "this is a shallow clone: run `git fetch --unshallow`, or pass --base-ref"
            raise UsageError(f"unknown git revision '{ref}'", hint) from exc

    def merge_base(self, a: str, b: str) -> str:
        git = self._git_module
        try:
            out = self._repo.git.merge_base(a, b)
        except git.GitCommandError as exc:
            if self.is_shallow():
                raise UsageError(
                    f"no merge-base between {a} and {b}: this is a shallow clone",
                    "run `git fetch --unshallow` (or fetch more history), or pass --base-ref",
                ) from exc
            raise UsageError(
                f"no merge-base between {a} and {b}",
                "the branches share no history; pass --base-ref explicitly",
            ) from exc
        return out.strip()

    # -- content ---------------------------------------------------------

    def blob_id(self, commit: str, path: str) -> str | None:
        """Blob SHA of `path` at `commit`, or None when the file is absent."""
        try:
            out = self._repo.git.rev_parse("--verify", "--quiet", f"{commit}:{path}")
        except self._git_module.GitCommandError:
            return None
        return out.strip() or None

    def read_blob(self, commit: str, path: str) -> bytes | None:
        """Bytes of `path` at `commit`; None when absent. Cached per (commit, path)."""
        key = (commit, path)
        if len(commit) != 40:  # a ref name can move: only SHAs are safe cache keys
            self._blob_cache.pop(key, None)
        if key in self._blob_cache:
            self._blob_cache.move_to_end(key)
            return self._blob_cache[key]
        try:
            tree = self._repo.commit(commit).tree
            blob = tree / path
        except (KeyError, ValueError, self._git_module.BadName):
            blob = None
        data: bytes | None = None
        if blob is not None:
            require_regular(blob.type, blob.mode, path, f"at {commit[:10]}")
            data = blob.data_stream.read()
        self._blob_cache[key] = data
        while len(self._blob_cache) > _BLOB_CACHE_SIZE:
            self._blob_cache.popitem(last=False)
        return data

    def blob_ids(self, commit: str, paths: Iterable[str]) -> dict[str, str | None]:
        """Blob SHA of each path at `commit` (None when absent or not a file),
        from one read of the commit's tree; no blob is loaded."""
        tree = self._repo.commit(commit).tree
        out: dict[str, str | None] = {}
        for path in paths:
            try:
                item = tree / path
            except KeyError:
                out[path] = None
                continue
            out[path] = item.hexsha if item.type == "blob" else None
        return out

    def file_paths(self, commit: str) -> list[str]:
        """Every file path in `commit`'s tree."""
        out = self._repo.git.ls_tree("-r", "--name-only", "-z", commit)
        return [path for path in out.split("\0") if path]

    def read_blob_from_tree(self, tree: str, path: str) -> bytes | None:
        """Bytes of `path` inside a tree object (e.g. an in-memory merge result)."""
        blob = self.blob_id(tree, path)  # `<tree>:<path>` resolves like `<commit>:<path>`
        return None if blob is None else self.read_blob_by_id(blob)

    def read_blob_by_id(self, blob_sha: str) -> bytes:
        return self._repo.odb.stream(bytes.fromhex(blob_sha)).read()

    def read_staged(self, path: str) -> bytes | None:
        """Bytes of `path` in the index (stage 0), None when not staged; a
        symlink or submodule there is refused (exit 2)."""
        entry = self._repo.git.ls_files("-s", "--", path).split(" ", 1)[0]
        if entry:
            require_regular("blob", int(entry, 8), path, "in the index")
        try:
            return self._repo.git.show(
                f":{path}", stdout_as_string=False, strip_newline_in_stdout=False
            )
        except self._git_module.GitCommandError:
            return None

    def read_stage(self, path: str, stage: int) -> bytes | None:
        """Bytes of an unmerged index stage (1 base, 2 ours, 3 theirs)."""
        try:
            return self._repo.git.show(
                f":{stage}:{path}", stdout_as_string=False, strip_newline_in_stdout=False
            )
        except self._git_module.GitCommandError:
            return None

    def read_worktree(self, path: str) -> bytes | None:
        """Bytes of the regular file `path` inside the working tree; None when
        absent. Anything else is refused (exit 2): an absolute path or `..`,
        a symlink anywhere on the way, a device, a folder, `/proc`."""
        return read_inside(self.root, path)

    # -- history ---------------------------------------------------------

    def first_parent_commits(
        self,
        rev: str,
        path: str | None = None,
        *,
        max_count: int | None = None,
        since: str | None = None,
    ) -> Iterator[CommitInfo]:
        """First-parent history of `rev` (a revision or a range `A..B`),
        oldest first, optionally touching `path`; `max_count` keeps the newest
        N, `since` those committed after a date git understands."""
        args = ["--first-parent", "--reverse", "--format=%H%x00%P%x00%s"]
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        if since:
            args.append(f"--since={since}")
        args.append(rev)
        if path:
            args += ["--", path]
        out = self._repo.git.log(*args)
        for line in out.splitlines():
            sha, parents, subject = line.split("\x00", 2)
            parent = parents.split()[0] if parents else None
            yield CommitInfo(sha, parent, subject)

    def commit_subject(self, rev: str) -> str:
        return self._repo.git.log("-1", "--format=%s", rev)

    def commits_between(self, base: str, head: str) -> list[str]:
        """Commits reachable from `head` but not from `base`, oldest first."""
        return self._repo.git.rev_list("--reverse", f"{base}..{head}").split()

    # -- refs and commits for the embedded forge ---------------------------

    def ref_sha(self, ref: str) -> str | None:
        """Commit SHA a full ref name (e.g. `refs/heads/main`) points to; None if absent."""
        try:
            out = self._repo.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
        except self._git_module.GitCommandError:
            return None
        return out.strip() or None

    def compare_and_swap_ref(self, ref: str, new: str, old: str | None, reason: str) -> bool:
        """Point `ref` at `new` only if it still points at `old` (None: must not exist).

        `git update-ref` takes the ref lock and checks the old value under it, so
        a ref moved by someone else is never clobbered. False when the swap lost.
        """
        expected = old if old is not None else "0" * 40
        try:
            self._repo.git.update_ref("-m", reason, ref, new, expected)
        except self._git_module.GitCommandError:
            return False
        return True

    def delete_ref(self, ref: str, expected: str | None = None) -> bool:
        """Delete `ref` (only if it still points at `expected`, when given)."""
        args = [ref] + ([expected] if expected else [])
        try:
            self._repo.git.update_ref("-d", *args)
        except self._git_module.GitCommandError:
            return False
        return True

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        try:
            self._repo.git.merge_base("--is-ancestor", ancestor, descendant)
        except self._git_module.GitCommandError:
            return False
        return True

    # -- diffs (matrix engine) ---------------------------------------------

    def diff_text(self, base: str, head: str, path: str) -> str:
        """`git diff base head -- path` (two-dot, unified, git's defaults)
        as text: the plan reads its `+` lines (docs/matrix.md, 'From the changelog to the plan').
        Colour and external diff drivers are switched off so user config
        cannot change the text."""
        out = self._repo.git.diff(
            "--no-color", "--no-ext-diff", base, head, "--", path, strip_newline_in_stdout=False
        )
        return out

    # -- repository-local configuration (merge driver) ------------------------

    def config_get(self, key: str) -> str | None:
        """The repository-local value of `key` (None when unset)."""
        try:
            return self._repo.git.config("--local", "--get", key)
        except self._git_module.GitCommandError:
            return None

    def config_set(self, key: str, value: str) -> None:
        self._repo.git.config("--local", key, value)

    # -- new repositories (demo, tests) ----------------------------------------

    @classmethod
    def init(cls, path: Path, *, main_branch: str = "main") -> GitRepo:
        """Create a repository with a local identity and no commit signing."""
        import git

        repo = git.Repo.init(path, initial_branch=main_branch)
        with repo.config_writer() as config:
            config.set_value("user", "name", "gov")
            config.set_value("user", "email", "gov@localhost")
            config.set_value("commit", "gpgsign", "false")
        return cls(path)
