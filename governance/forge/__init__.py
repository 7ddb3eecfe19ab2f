"""Forges: where pull requests, labels, comments, check runs and merges live.

`open_forge` picks the embedded local forge (SQLite + the repository's refs)
or GitHub's REST API; `prepare-merge` only sees the `Forge` interface.

* `base`    - the `Forge` interface, its records and its errors.
* `local`   - the embedded forge: pull requests without a server.
* `localdb` - the embedded forge's SQLite database.
* `github`  - GitHub's REST API: pull requests, labels, comments, checks, the merge.
* `rest`    - GitHub's REST transport (the only importer of httpx with `github`): deadline, size and page caps, retries.
* `github_shapes` - GitHub's JSON answers shape-checked into the records (the PR asked for, its head).
* `github_queue` - the queue's GitHub routes: label events, collaborator permission, a comment edited, a commit's tree.
* `github_runs` - GitHub Actions runs and their artifact zips (bounded, unpacked safely), for `gov runs import`.
* `tokens`  - tokens stripped, validated and redacted in every form.
* `render`  - plain-text views for `gov pr list` / `gov pr show`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Literal

from governance.forge.base import (
    CheckRun,
    ChecksFailedError,
    ChecksTimeoutError,
    Comment,
    Forge,
    ForgeError,
    ForgeRefusal,
    HeadMovedError,
    MergeRefusedError,
    MergeResult,
    PullRequest,
)
from governance.git.repo import GitRepo

__all__ = [
    "CheckRun",
    "ChecksFailedError",
    "ChecksTimeoutError",
    "Comment",
    "Forge",
    "ForgeError",
    "ForgeRefusal",
    "HeadMovedError",
    "MergeRefusedError",
    "MergeResult",
    "PullRequest",
    "open_forge",
]


def open_forge(
    kind: Literal["local", "github"],
    repo: GitRepo,
    repository_slug: str,
    *,
    main_branch: str = "main",
    base_url: str | None = None,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] | None = None,
) -> Forge:
    """The forge for `kind`. GitHub's token comes from `token`, else from
    GH_TOKEN / GITHUB_TOKEN in `env` (default: the process environment), and
    its API root from `base_url`, else `GITHUB_API_URL` in `env`, else api.github.com."""
    if kind == "local":
        from governance.forge.local import LocalForge

        return LocalForge(repo, main_branch=main_branch, repository_slug=repository_slug)
    if kind == "github":
        import os

        from governance.forge.github import GitHubForge, api_root
        from governance.forge.tokens import token_from_env

        return GitHubForge(
            repository_slug,
            token=token or token_from_env(env),
            base_url=base_url or api_root(os.environ if env is None else env),
            sleep=sleep or time.sleep,
        )
    raise ForgeError(f"unknown forge kind {kind!r}", "use --forge local or --forge github")
