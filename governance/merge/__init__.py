"""Floor 4, merging: the git merge driver, `gov prepare-merge` (docs/prepare-merge.md)
and `gov queue` (docs/queue.md).

* `driver`         - `gov merge-driver` (git's %O %A %B contract) and its installation.
* `prepare`        - the prepare-merge state machine and its rollback.
* `work`           - what the steps share: a run's options and state, a refusal, the results they hand on.
* `steps`          - the local steps: preflight, validate, commit, check, plan.
* `changelog_steps` - merge and canonicalize: the merged changelog's bytes, in memory.
* `landing`        - the forge-facing steps: push, checks, land, finish.
* `decisions`      - prepare-merge's pure decisions (which PRs, which conflicts, what commit).
* `journal`        - where every ref was and how far a run got, for crash recovery.
* `scratch`        - the scratch ref and the shared checkout: locked, compare-and-swap, stepped off.
* `report`         - what prepare-merge did, as text or JSON.
* `sweep_seam`     - the sweep hook's type, what it is handed and what it returns.
* `sweep_step`     - the sweep step: the merged tree's scripts in a temporary worktree.
* `sweep_service`  - reuse per row from the ledger, launch the rest.
* `sweep_section`  - the sweep part of a merge report: per row reused or rerun, and why.
* `sweep_keys`     - the config keys of a plan's rows and the launch schedule (priority, canary).
* `queue`          - `gov queue run`: land the waiting cars one at a time through prepare-merge.
* `queue_ahead`    - `gov queue run --ahead N`: candidates built ahead, parked and deferred cars, landing in order.
* `candidate`      - one car's candidate: prepare-merge's steps run dry on a base (main or the car ahead's candidate); its ref, released.
* `queue_store`    - the queue database (`.git/gov/queue.sqlite3`): cars, states, the paused flag.
* `queue_github`   - who may enqueue on GitHub: label and `/gov queue` asks, writers only, no forks, dequeue-on-push.
* `queue_github_run` - `gov queue run --forge github`: cars through prepare-merge's GitHub route, the tree read back, one comment per PR.
* `queue_render`   - the queue's status and run lines as text and JSON.
* `queue_green`    - `gov queue add --all-green`: which open PRs' head checks are green.
* `queue_report`   - `gov queue report`, pure: cars and ledger rows in, a typed report out.
* `queue_costs`    - what each landed car's rows cost: the ledger's rows and their GPU counts.
* `queue_report_render` - `gov queue report` as text, JSON or markdown.
* `car_rows`       - a car's sweep rows by decision: by the PR, by a car ahead, run.
* `onboarding`     - `gov init`: detect the layout, propose settings, hooks, CI and attributes.
* `worktree_edits` - `gov canonicalize` and `gov resolve-conflict` on the working tree.
"""
