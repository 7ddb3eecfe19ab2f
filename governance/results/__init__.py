"""Floor 4 (beside check), results: what the launched rows measured, compared with main
(docs/results.md).

* `reader`  - result files (fixed-seq-len, aggregated/agentic, eval) -> figures (pure).
* `compare` - a PR's points beside main's newest, per config and concurrency (pure).
* `archive` - each succeeded run's row and result, kept under its run id.
* `service` - the ledger and result folders -> a comparison (`gov results compare`).
* `render`  - a comparison as text, markdown or JSON.
* `html`    - a comparison as a self-contained HTML page with plotly charts.
"""
