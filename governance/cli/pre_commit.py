"""pre-commit entry point: `gov check --worktree` against the merge-base with main.

`gov-pre-commit [CHECK OPTIONS...] [FILES...]`: the options (e.g. `--pr 2194`,
`--no-configs`) go to `gov check`; the file names (what pre-commit stages, or
nothing from the plain git hook, which then reads the index) decide whether
the check runs at all (`governance.check.hook`).

Git exports GIT_DIR, GIT_INDEX_FILE and friends to hooks. pre-commit runs its
hooks with a temporary index in some modes, and a GIT_INDEX_FILE that leaks
into our own git calls would make gov read the wrong index, so they are
removed before anything else runs. The hook never touches the network.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from governance.git.hookenv import strip_leaked_git_env


def _value_options(group: Any) -> set[str]:
    """The `gov check` options that take a value (from the command itself)."""
    command = group.commands["check"]
    return {
        name
        for param in command.params
        if not getattr(param, "is_flag", False) and param.param_type_name == "option"
        for name in param.opts
    }


def main(argv: list[str] | None = None) -> None:
    strip_leaked_git_env()
    from typer.main import get_command

    from governance.check.hook import check_argv, should_run, split_args
    from governance.cli.app import build_app
    from governance.cli.common import err, guarded, state

    group = get_command(build_app("check"))  # built once: for its options, then to run
    args = split_args(list(sys.argv[1:] if argv is None else argv), _value_options(group))

    def decide() -> tuple[bool, str]:
        repo = state.take_repo()
        state.opened = (state.repo_path, repo)  # the check that follows reuses it
        return should_run(repo, args.files)

    try:
        run, why = guarded(decide)()
    except typer.Exit as exc:  # a usage error, already printed
        raise SystemExit(exc.exit_code) from None
    if not run:
        err(why)
        raise SystemExit(0)
    group(check_argv(args.options), prog_name="gov-pre-commit")


if __name__ == "__main__":
    main()
