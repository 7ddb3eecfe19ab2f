"""The matrix engine: master configs -> sweep rows -> changelog plan.

Module map (one responsibility each):

* `model`        - the strict schema base, the runner file, the changelog sweep entry.
* `master_entry` - the schema of one master-config entry (search spaces, scenarios).
* `output`       - normalised output rows and the plan document.
* `master_plain` - the plain case of a master-config entry, without pydantic.
* `row_fields`   - output rows in the schema's order and defaults, without pydantic.
* `plan_entry`   - an appended entry as the plan reads it (plain data; the scenario kinds).
* `errors`       - `MatrixError`, the exception that carries located violations.
* `masterfile`   - split a master config into per-key blocks (or parse it whole).
* `runners`      - the runner file: labels and hardware.
* `locate`       - positions of master-config and runner-file findings.
* `names`        - plain names: master keys, script-picking values and runner labels are ASCII.
* `catalog`      - master configs + runner file -> a validated, lazily parsed `Catalog`.
* `row_builder`  - rows from validated entries; the DRAM budget of KV offloading.
* `rowbounds`    - rows counted before they are built: per config and per plan (GOV524).
* `evals`        - which generated rows also run evals.
* `expand`       - one generator invocation: rows for some keys in an eval mode.
* `additions`    - the entries a change appends, read from the diff, keys resolved.
* `append_only`  - append-only entries may only add points to existing curves.
* `plan`         - the changelog processor: appended entries -> plan document.
* `render`       - text / markdown / JSON views of rows and plans.
* `sources`      - thin adapter that reads the inputs from git (the only I/O).

The contract is docs/matrix.md; deliberate differences from the reference are in
docs/matrix-differences.md.
"""
