"""Floor 3, the changelog domain: `perf-changelog.yaml` read, judged and edited.
Pure: bytes in, data or bytes out (docs/rules.md, docs/prepare-merge.md).

* `document`     - bytes -> `Changelog`: entries with byte spans, lines, parsed values.
* `entries`      - `Entry` and `Changelog`: the types `document` builds and its helpers read.
* `bounds`       - size bounds and line separators, checked on bytes before any YAML.
* `model`        - the pydantic schema of one entry.
* `entry_fields` - the entry's field names and its plain case, without pydantic.
* `entry_schema` - an entry's schema faults as located violations.
* `layout`       - the byte layout rules (regimes, whitespace of appended entries).
* `positions`    - where a key, item or value sits inside one entry.
* `keys`         - resolve appended entries' config keys against the master configs.
* `modes`        - `CheckMode`: draft, PR N or main (light: no parser behind it).
* `rules`        - `check(base, head, policy, mode)`: the append-only rules.
* `appended`     - the lines head adds to base, from the blobs: the one reading check and plan share.
* `linediff`     - which lines changed, placed where git's default diff places them.
* `splice`       - rewrite pr-link values by splicing their byte spans.
* `edit`         - canonicalize links at merge time; the shared edit results.
* `author`       - `gov add` and `gov check --fix`: render, append, fix appended bytes.
* `reappend`     - re-append a PR's additions after main's bytes.
* `move`         - move entries inserted in the middle of history to the end (the GOV302 repair).
* `conflict`     - resolve a conflicted changelog from its index stages.
* `merge_driver` - the pure git merge driver (both sides only appended).
"""
