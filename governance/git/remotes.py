"""Remotes: their URLs, fetching from them and pushing to them with a lease."""

from __future__ import annotations

from typing import TYPE_CHECKING

from governance.core.diagnostics import UsageError

if TYPE_CHECKING:
    import git


class Remotes:
    """The remotes of one repository (`GitRepo.remotes`)."""

    def __init__(self, handle: git.Repo) -> None:
        self._repo = handle

    def url(self, name: str = "origin") -> str | None:
        try:
            return self._repo.remote(name).url
        except ValueError:
            return None

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
