"""gov: changelog-centric merge governance for performance-benchmark repositories.

Floors, each importing only from the floors below it (enforced by the
import-linter contracts in pyproject.toml):

* `core`      - findings, codes, settings, safe YAML, atomic writes, caches.
* `git`       - repository access (the only importer of gitpython).
* `changelog`, `matrix`, `forge`, `sweeps` - the domains.
* `check`     - the check service: rules, audit, the sweep preflight, rendering, the findings cache.
* `results`   - beside check: what launched rows measured, compared with main.
* `merge`     - the git merge driver and the prepare-merge state machine.
* `demo`      - the quickstart's walkthrough.
* `cli`       - the typer adapters (`gov`).
* `resources` - package data: the demo's example repository, the Slurm wrapper.
"""

__version__ = "0.1.0"
