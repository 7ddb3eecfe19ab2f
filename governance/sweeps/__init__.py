"""Floor 3, sweeps: the run ledger, reuse by recipe fingerprint, and launching rows
(docs/sweeps.md, docs/slurm.md).

* `identity`       - what identifies a plan row for launching and reuse.
* `plan_file`      - a plan document read for launching: JSON, shape, recomputed fingerprints.
* `harness`        - the files a row runs, traced from its launch script (pure).
* `harness_files`  - reading a harness from the checkout rows run from.
* `naming`         - row -> launch script: the naming rule as data.
* `multinode`      - multi-node rows: per-family script or recipe rules, node counts.
* `jobs`           - plan row -> `LaunchJob`: environment, result file name, folders.
* `extra_env`      - the allow-list of `additional-settings` names a row may export.
* `launcher`       - the seam between gov and whatever runs a row; the registry of launchers.
* `local_launcher` - run jobs on this machine, K at a time.
* `launch_record`  - what a local launch leaves in its row's folder (lock, pid, exit status).
* `launches`       - the ledger's open launches: handed to a launcher, not recorded yet.
* `adopt`          - a restarted run takes over a dead gov's launches instead of relaunching.
* `runner_contract` - the runner launcher's contract as data: scripts, environment, files.
* `runner_jobs`    - rows -> runner jobs: node, runner script, the job template's environment.
* `runner_launcher` - each row through its runner's `runners/launch_<prefix>.sh` in a workspace.
* `slurm_client`   - talking to a Slurm cluster: tools, job states, queries, cancel.
* `slurm_manifest` - a Slurm launch folder (manifest, wrapper) and its sbatch line.
* `slurm_launcher` - one job array per launch, followed until every task ends.
* `slurm_adopt`    - a submitted task recorded in its row's folder, for a restarted run.
* `orphans`        - processes a dead run launched: found by their GOV_RUN_OWNER, ended
                     unless their launch still runs (then adopted).
* `runfiles`       - a run's own folder, the files it left (size, SHA-256), their check.
* `ledger`         - the run ledger: launched rows, their files, what each commit's results are.
* `shellwords`     - a small shell lexer: script text -> simple commands as words (pure).
* `shellscan`      - serving-engine flag uses in launch scripts (pure).
* `flagindex`      - the uses of many scripts indexed, and the GOV713 rule (pure).
* `reuse`          - per-row reuse at merge time (pure).
* `reuse_pin`      - `/reuse-sweep-run [RUN_ID]` comments: who is heard, which pins reuse (pure).
* `resolve`        - plan rows -> launch scripts: which script each row runs (dry run, preflight).
* `dispatch`       - the launch service: resolved rows -> launcher -> ledger.
* `resolution_counts` - a dry run's multi-node rows by how they resolve.
* `priority`       - launch order: rows scored by the `priority` rules, canaries (pure).
* `schedule`       - launching in that order, the canary phase and fail-fast.
"""
