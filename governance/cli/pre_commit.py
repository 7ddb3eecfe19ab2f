"""pre-commit entry point: `gov check --worktree` against the merge-base with main.

Git exports GIT_DIR, GIT_INDEX_FILE and friends to hooks. pre-commit runs its
hooks with a temporary index in some modes, and a GIT_INDEX_FILE that leaks
into our own git calls would make gov read the wrong index, so they are
removed before anything else runs. The hook never touches the network.
"""

from __future__ import annotations

import sys

from governance.git.repo import strip_leaked_git_env


def main(argv: list[str] | None = None) -> None:
    strip_leaked_git_env()
    args = list(sys.argv[1:] if argv is None else argv)
    # pre-commit may pass file names; the check always reads the configured paths.
    options = [a for a in args if a.startswith("-")]
    from governance.cli.app import app

    app(["check", "--worktree", *options], prog_name="gov-pre-commit")


if __name__ == "__main__":
    main()
