"""Floor 3, sweeps: the run ledger, reuse by recipe fingerprint, and launching rows
(docs/sweeps.md, docs/slurm.md).

* `identity`       - what identifies a plan row for launching and reuse.
* `naming`         - row -> launch script: the naming rule as data.
* `jobs`           - plan row -> `LaunchJob`: environment, result file name, folders.
* `extra_env`      - the allow-list of `additional-settings` names a row may export.
* `launcher`       - the seam between gov and whatever runs a row; launchers by name.
* `local_launcher` - run jobs on this machine, K at a time.
* `slurm_client`   - talking to a Slurm cluster: tools, job states, queries, cancel.
* `slurm_manifest` - a Slurm launch folder (manifest, wrapper) and its sbatch line.
* `slurm_launcher` - one job array per launch, followed until every task ends.
* `orphans`        - processes a dead run launched: found by their GOV_RUN_OWNER, ended.
* `ledger`         - the run ledger: one SQLite row per launched plan row.
* `reuse`          - per-row reuse at merge time (pure).
* `dispatch`       - the launch service: plan -> resolved jobs -> launcher -> ledger.
"""
