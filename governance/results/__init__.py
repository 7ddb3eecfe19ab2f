"""Floor 4 (beside check), results: what the launched rows measured, compared with main
(docs/results.md).

* `reader`  - result files (fixed-seq-len, aggregated/agentic, eval) -> figures (pure).
* `compare` - a PR's points beside main's newest, per config and concurrency (pure).
* `service` - the ledger and each run's own verified files -> a comparison (`gov results compare`).
* `render`  - a comparison as text, markdown or JSON.
* `html`    - a comparison as a self-contained HTML page with plotly charts.
* `database` - the results database (SQLite or PostgreSQL): schema, migrations, idempotent insert.
* `artifacts` - a sweep run's downloaded artifacts -> points, checked for consistency (pure).
* `importer` - `gov runs import`: those points mapped to plan rows and recorded in the ledger.
* `publish` - a landed commit's verified rows from the ledger into the results database.
"""
