"""`GitRepo`: a repository opened once per command, with its refs, blobs and
history; its object database, working tree and remotes hang off it as
`objects`, `worktree` and `remotes` (modules of their own). Every git process
it starts runs without the variables a hook leaks (`hookenv`).
"""

from __future__ import annotations

import os
import subprocess
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from governance.core.diagnostics import UsageError
from governance.git.catfile import CatFile
from governance.git.files import entry_mode, read_inside, require_regular
from governance.git.hookenv import strip_leaked_git_env
from governance.git.objects import Objects
from governance.git.remotes import Remotes
from governance.git.worktrees import NO_DIFF_DRIVERS, Worktree

_BLOB_CACHE_SIZE = 64


@dataclass(frozen=True, slots=True)
class CommitInfo:
    sha: str
    parent: str | None
    subject: str


# What opening a repository asks git, in one process (a bare repository
# answers the first three lines, then refuses --show-toplevel).
_REV_PARSE_FACTS = (
    "git",
    "rev-parse",
    "--is-bare-repository",
    "--path-format=absolute",
    "--git-common-dir",
    "--absolute-git-dir",
    "--show-toplevel",
)


def _is_sha(name: str) -> bool:
    return len(name) == 40 and all(c in "0123456789abcdef" for c in name)


class GitRepo:
    """A repository on disk, opened once per command.

    Opening costs one `git rev-parse`; plain object reads (refs, blobs, the
    index) go through one `git cat-file` process (`catfile`), and gitpython,
    the model behind `objects`, `worktree` and `remotes`, is imported the
    first time one of those is used, so the everyday read-only doors never
    pay for it.
    """

    def __init__(self, path: str | Path = ".") -> None:
        strip_leaked_git_env()
        where = Path(os.path.abspath(path))  # lexically: `sub/..` need not exist
        try:
            done = subprocess.run(
                [*_REV_PARSE_FACTS],
                cwd=where,
                capture_output=True,
                text=True,
                check=False,
            )
        except (FileNotFoundError, NotADirectoryError) as exc:
            raise UsageError(
                f"not a git repository: {where.resolve()}",
                "run gov inside a git checkout, or pass --repo PATH",
            ) from exc
        facts = done.stdout.splitlines()
        if len(facts) < 3 or (facts[0] != "true" and len(facts) < 4):
            raise UsageError(
                f"not a git repository: {where.resolve()}",
                "run gov inside a git checkout, or pass --repo PATH",
            )
        self._common_dir = Path(facts[1])
        self._own_git_dir = Path(facts[2])
        self._root = Path(facts[3]) if facts[0] != "true" else self._own_git_dir
        self._objects = CatFile(self._root)
        # Bounded: a history replay reads thousands of blobs; memory must not
        # grow with history length.
        self._blob_cache: OrderedDict[tuple[str, str], bytes | None] = OrderedDict()
        self._ancestry: dict[tuple[str, str], bool] = {}

    @cached_property
    def _repo(self) -> Any:  # git.Repo
        import git  # gitpython: only for what changes the repository

        return git.Repo(self._root)

    @cached_property
    def _git_module(self) -> Any:
        import git

        return git

    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A plain git query (no gitpython): stdout as text, never raising."""
        return subprocess.run(
            ["git", *args], cwd=self._root, capture_output=True, text=True, check=False
        )

    # -- basic facts -----------------------------------------------------

    @property
    def root(self) -> Path:
        return self._root

    @property
    def git_dir(self) -> Path:
        return self._common_dir

    def is_shallow(self) -> bool:
        return (self._own_git_dir / "shallow").exists()

    @cached_property
    def objects(self) -> Objects:
        return Objects(self._repo)

    @cached_property
    def worktree(self) -> Worktree:
        return Worktree(self._repo, self.root)

    @cached_property
    def remotes(self) -> Remotes:
        return Remotes(self._root, lambda: self._repo)

    # -- refs ------------------------------------------------------------

    def resolve(self, ref: str) -> str:
        """Full commit SHA of `ref`, or a UsageError that names it."""
        info = None if ref.startswith("-") else self._objects.info(f"{ref}^{{commit}}")
        if info is None:
            hint = "check the spelling, or fetch it first (git fetch origin)"
            if self.is_shallow():
                hint = "this is a shallow clone: run `git fetch --unshallow`, or pass --base-ref"
            raise UsageError(f"unknown git revision '{ref}'", hint)
        return info.sha

    def merge_base(self, a: str, b: str, *more: str) -> str:
        """The best common ancestor of `a` and `b`; with `more`, of `a` and a
        hypothetical merge of `b` and `more` (git's own rule): an in-progress
        merge's base against main."""
        done = self._git("merge-base", "--end-of-options", a, b, *more)
        if done.returncode != 0 or not done.stdout.strip():
            if self.is_shallow():
                raise UsageError(
                    f"no merge-base between {a} and {b}: this is a shallow clone",
                    "run `git fetch --unshallow` (or fetch more history), or pass --base-ref",
                )
            raise UsageError(
                f"no merge-base between {a} and {b}",
                "the branches share no history; pass --base-ref explicitly",
            )
        return done.stdout.split()[0]

    # -- content ---------------------------------------------------------

    def blob_id(self, commit: str, path: str) -> str | None:
        """Blob SHA of `path` at `commit` (or inside a tree), None when absent
        or not a file."""
        info = self._objects.info(f"{commit}:{path}")
        return info.sha if info is not None and info.type == "blob" else None

    def read_blob(self, commit: str, path: str) -> bytes | None:
        """Bytes of `path` at `commit`; None when absent. Cached per (commit, path)."""
        key = (commit, path)
        if len(commit) != 40:  # a ref name can move: only SHAs are safe cache keys
            self._blob_cache.pop(key, None)
        if key in self._blob_cache:
            self._blob_cache.move_to_end(key)
            return self._blob_cache[key]
        self._require_regular_at(commit, path)
        found = self._objects.contents(f"{commit}:{path}")
        data = found[1] if found is not None and found[0].type == "blob" else None
        self._blob_cache[key] = data
        while len(self._blob_cache) > _BLOB_CACHE_SIZE:
            self._blob_cache.popitem(last=False)
        return data

    def _require_regular_at(self, commit: str, path: str) -> None:
        """Refuse (exit 2) a symlink, submodule or folder at `path` in `commit`:
        the mode of its entry in the parent tree, through the batch reader."""
        parent, _, name = path.rpartition("/")
        tree = self._objects.contents(f"{commit}:{parent}" if parent else f"{commit}^{{tree}}")
        if tree is None or tree[0].type != "tree":
            return
        mode = entry_mode(tree[1], name)
        if mode is not None:
            kind = "tree" if mode == 0o040000 else "blob"
            require_regular(kind, mode, path, f"at {commit[:10]}")

    def blob_ids(self, commit: str, paths: Iterable[str]) -> dict[str, str | None]:
        """Blob SHA of each path at `commit` (None when absent or not a file);
        no blob is loaded."""
        return {path: self.blob_id(commit, path) for path in paths}

    def file_paths(self, commit: str) -> list[str]:
        """Every file path in `commit`'s tree."""
        out = self._git("ls-tree", "-r", "--name-only", "-z", "--end-of-options", commit).stdout
        return [path for path in out.split("\0") if path]

    def tree_id(self, commit: str, folder: str) -> str | None:
        """The tree id of `folder` at `commit` (None when it is not a folder there)."""
        info = self._objects.info(f"{commit}:{folder.rstrip('/')}")
        return info.sha if info is not None and info.type == "tree" else None

    def tree_files(self, commit: str, folder: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob id) of every file below `folder` at `commit`."""
        out = self._git(
            "ls-tree", "-r", "-z", "--end-of-options", commit, "--", folder.rstrip("/") + "/"
        ).stdout
        files: dict[str, tuple[str, str]] = {}
        for item in out.split("\0"):
            meta, _, path = item.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                files[path] = (parts[0], parts[2])
        return files

    def read_blob_from_tree(self, tree: str, path: str) -> bytes | None:
        """Bytes of `path` inside a tree object (e.g. an in-memory merge result)."""
        blob = self.blob_id(tree, path)  # `<tree>:<path>` resolves like `<commit>:<path>`
        return None if blob is None else self.read_blob_by_id(blob)

    def read_blobs_by_id(self, blob_shas: list[str]) -> list[bytes]:
        """Blobs' bytes by SHA, many in one pass; a missing one is exit 2."""
        found = self._objects.contents_of(blob_shas)
        for sha, data in zip(blob_shas, found, strict=True):
            if data is None:
                raise UsageError(f"git object {sha} is missing", "run `git fsck`")
        return [data for data in found if data is not None]

    def read_blob_by_id(self, blob_sha: str) -> bytes:
        return self.read_blobs_by_id([blob_sha])[0]

    def _index_blob(self, name: str) -> bytes | None:
        # A fresh process: the long-lived reader loaded the index when it
        # started, and the index changes under a command (`git add`, merges).
        done = subprocess.run(
            ["git", "cat-file", "blob", name], cwd=self._root, capture_output=True, check=False
        )
        return done.stdout if done.returncode == 0 else None

    def read_staged(self, path: str) -> bytes | None:
        """Bytes of `path` in the index (stage 0), None when not staged; a
        symlink or submodule there is refused (exit 2)."""
        entry = self._git("ls-files", "-s", "--", path).stdout.split(" ", 1)[0]
        if entry:
            require_regular("blob", int(entry, 8), path, "in the index")
        return self._index_blob(f":{path}")

    def read_stage(self, path: str, stage: int) -> bytes | None:
        """Bytes of an unmerged index stage (1 base, 2 ours, 3 theirs)."""
        return self._index_blob(f":{stage}:{path}")

    def staged_paths(self) -> list[str]:
        """Paths whose staged bytes differ from HEAD's (what a commit would change)."""
        out = self._git("diff", *NO_DIFF_DRIVERS, "--cached", "--name-only", "-z").stdout
        return [name for name in out.split("\0") if name]

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

    def commit_message(self, sha: str) -> str | None:
        """The full message of commit `sha` (None: no such commit here)."""
        done = self._git("log", "-1", "--format=%B", self.resolve(sha), "--")
        return done.stdout if done.returncode == 0 else None

    def commits_between(self, base: str, head: str) -> list[str]:
        """Commits reachable from `head` but not from `base`, oldest first."""
        return self._repo.git.rev_list("--reverse", f"{base}..{head}").split()

    def paths_touched(self, base: str, head: str) -> frozenset[str] | None:
        """Every path a commit of `base..head` changed, merges included where
        they differ from all their parents (None: git could not tell). Each
        commit counts, so a file changed and then restored is touched."""
        done = self._git(
            "log", *NO_DIFF_DRIVERS, "-z", "--no-renames", "--cc", "--format=", "--name-only",
            f"{base}..{head}", "--",
        )  # fmt: skip
        if done.returncode != 0:
            return None
        return frozenset(name for name in done.stdout.replace("\n", "\0").split("\0") if name)

    def commits_touching(self, base: str, head: str, path: str) -> list[str]:
        """Non-merge commits of `base..head` that changed `path`, newest first."""
        done = self._git(
            "--literal-pathspecs", "log", *NO_DIFF_DRIVERS, "--no-merges", "--format=%H",
            f"{base}..{head}", "--", path,
        )  # fmt: skip
        return done.stdout.split() if done.returncode == 0 else []

    # -- refs and commits for the embedded forge ---------------------------

    def ref_sha(self, ref: str) -> str | None:
        """Commit SHA a full ref name (e.g. `refs/heads/main`) points to; None if absent."""
        info = None if ref.startswith("-") else self._objects.info(f"{ref}^{{commit}}")
        return None if info is None else info.sha

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
        key = (ancestor, descendant)
        if ancestor == descendant and _is_sha(ancestor):
            return True  # a commit is its own ancestor (git says so too)
        if key not in self._ancestry:  # commits never change: one answer per pair
            done = self._git("merge-base", "--is-ancestor", ancestor, descendant)
            if not (_is_sha(ancestor) and _is_sha(descendant)):
                return done.returncode == 0  # a ref name can move
            self._ancestry[key] = done.returncode == 0
        return self._ancestry[key]

    # -- repository-local configuration (merge driver) ------------------------

    def config_get(self, key: str) -> str | None:
        """The repository-local value of `key` (None when unset)."""
        done = self._git("config", "--local", "--get", key)
        return done.stdout.removesuffix("\n") if done.returncode == 0 else None

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
