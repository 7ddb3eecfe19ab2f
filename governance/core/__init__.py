"""Floor 1, the core: what every other floor builds on. No git, no network, no CLI.

* `diagnostics` - findings (`Violation`), `GovError` and the exit codes.
* `codes`       - the table of finding codes and their messages.
* `settings`    - `[tool.gov]` / `.gov.toml` / `GOV_*` read into one `Settings` (from a revision or the worktree).
* `settings_coerce` - each setting's type (bool, list, table, checked string) from a file or a variable.
* `settings_priority` - the `priority` setting: ordered rules over config-key globs and labels.
* `settings_queue` - the `queue` setting (`[tool.gov.queue]`): label, priorities, max-cars, checks, dequeue-on-push.
* `settings_values` - each settings value validated when read (paths, templates, patterns).
* `layout`      - where a revision keeps the changelog, master configs and runner file (moves followed).
* `settings_faults` - settings files that do not load, as a located finding (GOV802).
* `sweep_gate`  - the sweep gate (run-sweep.yml's rules as settings): an event -> sweeps or not, why, the label modifiers.
* `gate_event`  - a GitHub event payload read as untrusted input (bounded, every field type-checked).
* `links`       - the pr-link policy (placeholders, the canonical link of PR N).
* `yamlsafe`    - the safe YAML loader every parse goes through (bounded, standard tags only).
* `yamlfast`    - plain documents built straight from the parser's events (the loader's shortcut).
* `jsonsafe`    - bounded JSON reading (depth, integer size) for files launched scripts wrote.
* `suggest`     - did-you-mean hints: the spellings a user probably meant.
* `plain`       - plain names: look-alike characters folded to ASCII, hidden bidi and zero-width characters.
* `safe_text`   - the output boundary per format: terminal, JSON, GitHub workflow log, markdown.
* `schema_faults` - pydantic validation errors as located `Violation`s.
* `fingerprint` - content identities of plan rows: recipe fingerprints, eval recipes, git blob ids.
* `atomic`      - write a file so that readers see the old bytes or the new ones.
* `blockcache`  - content-addressed cache of parsed blocks under `.git/gov/`.
* `crash`       - test-only crash points (GOV_TEST_CRASH_AFTER) for the kill tests.
* `locks`       - kernel locks (flock) under `.git/gov/locks/` that die with their process.
* `state`       - the `.git/gov/` layout (forge, ledger, results, caches, journals, locks) and the one SQLite helper.
"""
