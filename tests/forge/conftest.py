"""Temporary git repositories with a fixed identity and no signing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from governance.git.repo import GitRepo, strip_leaked_git_env


def git(cwd: Path, *args: str, input: str | None = None, index: Path | None = None) -> str:
    env = strip_leaked_git_env(dict(os.environ))
    # Keep the developer's own ~/.gitconfig (signing, hooks paths) out of the test.
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        input=input,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


class Sandbox:
    """A repository on `main` with helpers to make commits on branches."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q", "-b", "main")
        git(path, "config", "user.name", "Gov Tester")
        git(path, "config", "user.email", "gov@example.invalid")
        git(path, "config", "commit.gpgsign", "false")
        self.commit("main", {"perf-changelog.yaml": "- config-keys: [a]\n"}, "initial")

    def git(self, *args: str, input: str | None = None, index: Path | None = None) -> str:
        return git(self.path, *args, input=input, index=index)

    def sha(self, ref: str) -> str:
        return self.git("rev-parse", ref)

    def commit(self, branch: str, files: dict[str, str], message: str) -> str:
        """Commit `files` on top of `branch` (created on first use) with plumbing only,
        so the worktree and its checkout never change."""
        parent = self.git("rev-parse", "--verify", "--quiet", branch) if self._has(branch) else ""
        index = self.path / ".git" / "sandbox-index"
        if parent:
            self.git("read-tree", parent, index=index)
        for name, text in files.items():
            blob = self.git("hash-object", "-w", "--stdin", input=text)
            self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", index=index)
        tree = self.git("write-tree", index=index)
        index.unlink()
        sha = self.git("commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
        self.git("update-ref", f"refs/heads/{branch}", sha, parent or "0" * 40)
        return sha

    def _has(self, branch: str) -> bool:
        return bool(self.git("for-each-ref", f"refs/heads/{branch}"))

    def branch(self, name: str, start: str = "main") -> str:
        self.git("branch", name, start)
        return self.sha(name)

    def merge_into(self, branch: str, other: str, message: str) -> str:
        """A merge commit of `other` into `branch`, keeping `branch`'s tree plus `other`'s files."""
        tree = self.git("merge-tree", "--write-tree", branch, other).splitlines()[0]
        parent = self.sha(branch)
        sha = self.git("commit-tree", tree, "-p", parent, "-p", self.sha(other), "-m", message)
        self.git("update-ref", f"refs/heads/{branch}", sha, parent)
        return sha

    def repo(self) -> GitRepo:
        return GitRepo(self.path)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path / "repo")


@pytest.fixture
def sandbox_repo(sandbox: Sandbox) -> GitRepo:
    return sandbox.repo()
