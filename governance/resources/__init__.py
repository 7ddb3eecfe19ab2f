"""Package data, read through `importlib.resources` (no Python modules here).

* `example/`                - the demo's example repository (`gov demo`).
* `slurm/array-task.py`     - the Slurm array-task wrapper, copied into each launch folder.
"""
