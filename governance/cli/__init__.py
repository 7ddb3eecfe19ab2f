"""Floor 5, the command line: typer adapters only, registered in `app`.

* `app`       - the `gov` application, the shared options and every registration.
* `common`    - error handling, opening the repository, the output helper.
* `output`    - the output boundary: stdout and stderr escaped for the command's `--format`.
* `check`     - `gov check`, `gov audit`, `gov schema`, `gov demo`, `gov version`.
* `author`    - `gov add`: append one well-formed entry, then check.
* `init`      - `gov init`: onboard a benchmark repository.
* `matrix`    - `gov matrix`, `gov plan`, `gov log`.
* `merge`     - `gov prepare-merge`, `gov canonicalize`, `gov resolve-conflict`.
* `driver`    - `gov merge-driver`, `gov install-merge-driver`.
* `pr`        - `gov pr open|list|show|check` on the local forge.
* `queue`     - `gov queue add|remove|status|pause|resume|run|sync`: the merge queue.
* `queue_github` - `gov queue sync` and `add|run --forge github`: the queue on GitHub.
* `queue_report` - `gov queue report`: what the queue landed, refused and cost.
* `queue_watch` - `gov queue run --watch`, and SIGTERM interrupting a run as Ctrl-C does.
* `sweeps`    - `gov launch`, `gov runs list|show`.
* `gate`      - `gov sweep-gate`, and the `--labels` / `--event` modifiers of check and plan.
* `launch_text` - `gov launch --dry-run`'s runner note and `--show-env` lines.
* `results`   - `gov results compare`, `gov results publish`, `gov runs import`.
* `pre_commit`- the pre-commit hook's entry point (`gov-pre-commit`).
"""
