"""Floor 4, the check service: what `gov check`, `gov audit` and `gov schema` do.

* `options`        - `CheckOptions`: what a check is asked, shared by the service and the preflight.
* `service`        - `run_check`: read base and head, apply the rules, resolve keys, plan.
* `snapshots`      - what a check judges: a commit, the index or the worktree, and its master configs.
* `audit`          - replay a branch's history through the check.
* `preflight`      - the sweep preflight: the scripts a change's rows run, checked at PR time.
* `preflight_cache` - the preflight's answer, remembered by its rows, scripts and settings.
* `scripts_folder` - the scripts folder as judged (and its identity): only the reached scripts
                     written when exact.
* `hook`           - the pre-commit door: its arguments, and whether to run at all.
* `authoring`      - `gov add` and `gov check --fix`: validate, then write once, atomically.
* `render`         - findings as text, JSON, GitHub annotations and markdown.
* `findings_cache` - the plan half of a check, cached by the bytes it judged.
* `flag_cache`     - launch scripts' serving-engine flag uses, remembered by their bytes.
* `syntax`         - GOV711, `bash -n` on a launch script, its answer remembered by the bytes.
* `answers`        - rendered check and plan answers, remembered by their inputs.
* `schemas`        - the JSON Schemas under `schemas/`, generated from the models.
* `sides`          - the settings of one side (the checkout, a revision, main's tip): the one loader.
* `trusted`        - settings from the trusted side (the base; main), and GOV801 when a change edits them.
"""
