"""Which commit "main" is: the one rule every command uses.

A clone has up to two candidates: the local branch `<main>` and the
remote-tracking `<remote>/<main>`. The local branch wins when it contains the
remote one (it is the same or further along: the local forge lands there, and
a maintainer who pulled has both equal); otherwise the remote-tracking branch
wins (the local branch is stale or diverged). When only one exists, it is main.
A caller that lands on one side only (the GitHub forge pushes to the remote;
the local forge moves the local branch) asks for that side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from governance.core.diagnostics import UsageError

if TYPE_CHECKING:
    from governance.git.repo import GitRepo


@dataclass(frozen=True, slots=True)
class MainRef:
    ref: str  # short name as a user would type it: "main" or "origin/main"
    sha: str
    why: str  # one phrase: why this candidate is main

    @property
    def label(self) -> str:
        return f"{self.ref}@{self.sha[:10]}"


def main_ref(
    repo: GitRepo,
    main_branch: str,
    *,
    remote: str | None = "origin",
    local: bool = True,
) -> MainRef:
    """The commit main names here. `remote=None` considers only the local
    branch; `local=False` only the remote-tracking one."""
    local_sha = repo.ref_sha(f"refs/heads/{main_branch}") if local else None
    remote_name = f"{remote}/{main_branch}" if remote else ""
    remote_sha = repo.ref_sha(f"refs/remotes/{remote_name}") if remote else None
    if local_sha and remote_sha:
        if repo.is_ancestor(remote_sha, local_sha):
            why = "up to date with" if local_sha == remote_sha else "contains"
            return MainRef(main_branch, local_sha, f"local {main_branch} {why} {remote_name}")
        return MainRef(
            remote_name, remote_sha, f"local {main_branch} does not contain {remote_name}"
        )
    if local_sha:
        return MainRef(main_branch, local_sha, f"local {main_branch}")
    if remote_sha:
        return MainRef(remote_name, remote_sha, f"no local {main_branch}")
    names = " nor ".join(
        f"'{name}'" for name, on in ((main_branch, local), (remote_name, bool(remote))) if on
    )
    raise UsageError(
        f"cannot find the main branch: neither {names} exists"
        if " nor " in names
        else f"cannot find the main branch {names}",
        "fetch it (git fetch origin), pass --base-ref or --main-branch, or name it in "
        "main-branch of the settings (.gov.toml or [tool.gov]) on that branch",
    )
