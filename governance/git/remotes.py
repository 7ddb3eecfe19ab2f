"""Remotes: their URLs, fetching from them and pushing to them with a lease."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from governance.core.diagnostics import UsageError

if TYPE_CHECKING:
    import git


class Remotes:
    """The remotes of one repository (`GitRepo.remotes`). Reading a URL is a
    plain config read; gitpython is opened only to fetch or push."""

    def __init__(self, root: Path, handle: Callable[[], git.Repo]) -> None:
        self._root = root
        self._handle = handle
        self._urls: dict[str, str] | None = None

    @cached_property
    def _repo(self) -> git.Repo:
        return self._handle()

    def url(self, name: str = "origin") -> str | None:
        if self._urls is None:  # one config read per command, for every remote
            self._urls = self._read_urls()
        return self._urls.get(name)

    def _read_urls(self) -> dict[str, str]:
        """Every remote's URL (the last one given, as `git config --get` says)."""
        done = subprocess.run(
            ["git", "config", "-z", "--get-regexp", r"^remote\..*\.url$"],
            cwd=self._root,
            capture_output=True,
            text=True,
            check=False,
        )
        urls: dict[str, str] = {}
        for item in done.stdout.split("\0") if done.returncode == 0 else ():
            key, _, value = item.partition("\n")  # -z: the key, a newline, the value
            if key.startswith("remote.") and key.endswith(".url") and value.strip():
                urls[key[len("remote.") : -len(".url")]] = value.strip()
        return urls

    def default_branch(self, name: str = "origin") -> str | None:
        """The branch `<name>/HEAD` points at (the forge's default branch, as
        the clone recorded it), or None."""
        done = subprocess.run(
            ["git", "symbolic-ref", "-q", f"refs/remotes/{name}/HEAD"],
            cwd=self._root,
            capture_output=True,
            text=True,
            check=False,
        )
        prefix = f"refs/remotes/{name}/"
        ref = done.stdout.strip()
        return ref.removeprefix(prefix) or None if ref.startswith(prefix) else None

    def fetch(self, remote: str, refspec: str) -> None:
        import git

        try:
            self._repo.git.fetch("-q", "--no-tags", remote, refspec)
        except git.GitCommandError as exc:
            raise UsageError(
                f"git fetch {remote} {refspec} failed: {exc.stderr.strip()}",
                "check the remote and your network, then re-run",
            ) from exc

    def push_lease(self, remote: str, sha: str, branch: str, expected: str) -> bool:
        """Push `sha` to `branch` on `remote` only if it still points at
        `expected` (`--force-with-lease`): a compare-and-swap on the remote."""
        import git

        try:
            self._repo.git.push(
                "-q",
                f"--force-with-lease=refs/heads/{branch}:{expected}",
                remote,
                f"{sha}:refs/heads/{branch}",
            )
        except git.GitCommandError:
            return False
        return True
