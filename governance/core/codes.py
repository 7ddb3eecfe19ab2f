"""The catalogue of violation codes: one place that names every rule.

Ranges: GOV1xx file bytes and YAML, GOV2xx entry schema, GOV3xx history,
GOV4xx pr-link, GOV5xx config keys, GOV6xx merge, GOV7xx sweeps and launch,
GOV8xx settings. A rule marked `stricter`
rejects something the reference tooling accepts; docs/rules.md lists the
reason for each, and the corpus fidelity tests allow gov to disagree with the
reference only through these codes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from governance.core.diagnostics import UsageError, Violation


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    summary: str
    stricter: bool = False  # gov rejects where the reference accepts
    # A stricter rule a repository may phase in (`ignore` setting, --ignore);
    # rules the reference enforces can never be turned off.
    ignorable: bool = False


_RULES = (
    # -- file bytes and YAML (docs/rules.md) --------------------------------
    Rule("GOV101", "no-final-newline", "the file must end with a newline"),
    Rule("GOV102", "cr-bytes", "no carriage returns (CRLF line endings)"),
    Rule("GOV103", "tab-bytes", "no tab characters, not even inside quoted strings"),
    Rule("GOV104", "nul-bytes", "no NUL bytes"),
    Rule("GOV105", "not-utf8", "the file must be UTF-8"),
    Rule("GOV106", "yaml-syntax", "the file must parse as YAML"),
    Rule("GOV107", "duplicate-key", "no mapping repeats a key"),
    Rule("GOV108", "root-not-list", "the document root is a list of entries"),
    Rule("GOV109", "entry-count-mismatch", "every top-level item starts with `- config-keys:`"),
    Rule("GOV110", "entry-not-mapping", "every entry is a mapping"),
    Rule("GOV111", "too-large", "the file is larger than gov will parse"),
    Rule("GOV112", "yaml-alias", "bounded YAML aliases (no alias bombs)"),
    Rule("GOV113", "yaml-tag", "no custom YAML tags; a tagged value its tag can construct"),
    Rule(
        "GOV114",
        "line-separator",
        "only `\\n` breaks lines (no U+2028, U+2029, NEL, VT, FF)",
        stricter=True,
    ),
    Rule("GOV115", "too-deep", "YAML nesting stays within the depth bound", stricter=True),
    Rule(
        "GOV116",
        "too-long",
        "lines, entries, entry size and description lines stay within their bounds",
        stricter=True,
    ),
    Rule(
        "GOV117",
        "yaml-anchor",
        "no explicit tags, anchors, aliases or merge keys in the changelog",
        stricter=True,
    ),
    # -- entry schema (docs/rules.md) ---------------------------------------
    Rule("GOV201", "schema", "the entry does not match the changelog entry schema"),
    Rule("GOV202", "unknown-field", "only the documented fields are allowed"),
    Rule("GOV203", "missing-field", "config-keys, description and pr-link are required"),
    Rule("GOV204", "wrong-type", "field values have the documented types"),
    Rule("GOV205", "empty-list", "config-keys, description and scenario-type are non-empty"),
    Rule("GOV206", "append-only-conflict", "append-only excludes eval selection fields"),
    Rule(
        "GOV207",
        "field-spelling",
        "appended entries spell fields in kebab-case (pr-link, not pr_link)",
        stricter=True,
    ),
    Rule(
        "GOV208",
        "strict-type",
        "appended entries write booleans as true/false and integers unquoted",
        stricter=True,
    ),
    Rule(
        "GOV209",
        "hidden-control",
        "appended entries carry no raw bidirectional controls or zero-width characters (a warning)",
    ),
    # -- history (docs/rules.md) --------------------------------------------
    Rule("GOV301", "entries-deleted", "existing entries are never deleted"),
    Rule("GOV302", "entry-modified", "existing entries are immutable except pr-link corrections"),
    Rule("GOV303", "mixed-correction-and-append", "corrections and appends go in separate changes"),
    Rule("GOV304", "history-bytes-changed", "appending keeps every historical byte"),
    Rule("GOV305", "bad-history-separator", "one empty line between history and new entries"),
    Rule("GOV306", "bad-entry-separator", "one empty line between appended entries"),
    Rule("GOV307", "extra-final-newline", "the last appended entry ends with exactly one newline"),
    Rule("GOV308", "correction-line-count", "pr-link corrections add or delete no lines"),
    Rule("GOV309", "correction-outside-link", "corrections change only `  pr-link:` lines"),
    Rule("GOV310", "correction-count-mismatch", "one changed pr-link line per correction"),
    Rule("GOV311", "whitespace-only-change", "historical whitespace and formatting are immutable"),
    Rule(
        "GOV312",
        "trailing-whitespace",
        "no trailing spaces in appended lines",
        stricter=True,
        ignorable=True,
    ),
    Rule(
        "GOV313",
        "blank-line-in-entry",
        "no empty or whitespace-only lines inside or between appended entries",
        stricter=True,
        ignorable=True,
    ),
    Rule(
        "GOV314",
        "eof-whitespace",
        "nothing but the final newline after the last appended entry",
        stricter=True,
        ignorable=True,
    ),
    Rule("GOV315", "entry-reformatted", "an entry changed bytes without a semantic change"),
    Rule(
        "GOV316",
        "base-final-newline",
        "a change that adds history's missing final newline passes, with this note (a warning)",
    ),
    # -- pr-link policy (docs/rules.md) -------------------------------------
    Rule("GOV401", "pr-link-not-expected", "a PR's entries link that PR or use a placeholder"),
    Rule("GOV402", "main-link-not-canonical", "entries on main carry a canonical PR link"),
    Rule("GOV403", "correction-not-canonical", "a pr-link correction writes a canonical link"),
    Rule(
        "GOV404",
        "link-number-mismatch",
        "with --expect-pr N, entries on main link PR N",
        stricter=True,
    ),
    Rule(
        "GOV405",
        "link-number-not-plain",
        "PR numbers in links are plain ASCII decimals without leading zeros",
        stricter=True,
    ),
    # -- config keys and the matrix engine ----------------------------------
    # 50x key resolution, 51x master configs, 52x runner file, 53x changelog
    # reading, 54x append-only, 55x plan warnings.
    Rule("GOV501", "unknown-config-key", "every config key names a master config"),
    Rule("GOV502", "wildcard-matches-nothing", "every wildcard matches at least one config"),
    Rule(
        "GOV503",
        "config-key-not-ascii",
        "the config keys of appended entries are plain ASCII",
        stricter=True,
    ),
    Rule("GOV510", "master-config-unreadable", "the master config files exist and parse"),
    Rule(
        "GOV511",
        "master-config-duplicate-key",
        "no master config repeats a key within one file or entry",
        stricter=True,
        ignorable=True,
    ),
    Rule("GOV512", "master-config-wildcard-key", "master config keys contain no `*`"),
    Rule("GOV513", "master-config-unknown-field", "master configs use only documented fields"),
    Rule("GOV514", "master-config-missing-field", "master configs carry every required field"),
    Rule("GOV515", "master-config-invalid-value", "master config values have the documented types"),
    Rule("GOV516", "master-config-rule", "master configs obey the cross-field rules"),
    Rule(
        "GOV517",
        "master-config-empty-search-space",
        "a search space yields at least one row",
        stricter=True,
        ignorable=True,
    ),
    Rule(
        "GOV518",
        "master-config-key-in-two-files",
        "a config key is defined in one master file only",
    ),
    Rule(
        "GOV519",
        "master-config-name-not-ascii",
        "master config keys and the names that pick a row's script are plain ASCII",
        stricter=True,
    ),
    Rule("GOV520", "runner-file-invalid", "the runner file matches its schema"),
    Rule(
        "GOV521",
        "runner-label-unknown",
        "every config's runner is in the runner file",
        stricter=True,
        ignorable=True,
    ),
    Rule("GOV522", "runner-hardware-budget", "agentic configs fit the runner's hardware budget"),
    Rule(
        "GOV523",
        "runner-label-not-ascii",
        "runner labels (the runner file's and every config's runner) are plain ASCII",
        stricter=True,
    ),
    Rule(
        "GOV524",
        "too-many-rows",
        "a config generates at most 1,000 rows, a plan at most 20,000 (docs/security.md)",
        stricter=True,
    ),
    Rule("GOV530", "changelog-deletion", "head deletes or rewrites no non-blank changelog line"),
    Rule("GOV531", "changelog-no-additions", "the plan's changelog diff adds entries"),
    Rule("GOV532", "changelog-entry-invalid", "appended entries read by the plan are valid"),
    Rule("GOV533", "changelog-sweep-mix", "append-only entries are not mixed with others"),
    Rule("GOV540", "append-only-base-missing", "append-only entries have a base to extend"),
    Rule("GOV541", "append-only-scope", "append-only entries change only what they may"),
    Rule("GOV542", "append-only-delta", "append-only entries only add points"),
    Rule("GOV550", "plan-unrun-sequence-length", "every planned sequence length has a job family"),
    # -- merge --------------------------------------------------------------
    Rule("GOV601", "merge-refused", "the merge tool refused to continue"),
    Rule(
        "GOV602",
        "nothing-remaining",
        "after merging main, the PR keeps an entry main has not gained",
    ),
    Rule(
        "GOV603",
        "nothing-to-preserve",
        "the PR side has an appended entry or correction to carry over",
    ),
    Rule("GOV604", "main-missing-corrected", "main still has every entry the PR corrects"),
    Rule(
        "GOV605",
        "main-changed-corrected",
        "main did not change a corrected entry outside its pr-link",
    ),
    Rule("GOV606", "main-conflicting-link", "main did not correct the same link differently"),
    Rule("GOV607", "corrections-already-on-main", "the PR's corrections are not already on main"),
    Rule("GOV608", "pr-link-line", "the pr-link value of each appended entry can be located"),
    Rule(
        "GOV609",
        "unexpected-appended-link",
        "appended links are a placeholder or the link for PR N",
    ),
    Rule(
        "GOV610", "driver-not-append-only", "the merge driver merges only when both sides appended"
    ),
    Rule("GOV611", "merge-conflict", "merging main into the PR conflicts in the changelog only"),
    Rule("GOV612", "dirty-worktree", "prepare-merge starts from a clean working tree"),
    Rule("GOV613", "pr-not-open", "the PR is open and its head branch exists"),
    Rule("GOV614", "pr-from-fork", "the PR's branch lives in this repository, not a fork"),
    Rule("GOV615", "sweep-label", "the PR carries exactly one sweep label (when configured)"),
    # -- sweeps and launch (docs/sweeps.md) ---------------------------------
    Rule("GOV701", "plan-invalid", "the plan file is a `gov plan --format json` document"),
    Rule("GOV702", "no-launch-script", "every row resolves to a script in the scripts folder"),
    Rule(
        "GOV703",
        "unsafe-row-value",
        "row values used in paths are plain tokens, hex fingerprints",
        stricter=True,
    ),
    Rule("GOV704", "reuse-only-needs-run", "in reuse-only mode no row may need a fresh run"),
    Rule("GOV705", "row-failed", "every launched row succeeds and leaves its result file"),
    Rule("GOV706", "launch-rejected", "the cluster accepts every job a launch submits"),
    # -- PR-time preflight of the scripts a sweep will run (docs/sweeps.md) --
    Rule("GOV711", "script-syntax", "every launch script a PR's rows run passes `bash -n`"),
    Rule(
        "GOV712",
        "script-not-runnable",
        "an executable launch script starts with a `#!` line (else it is run through bash)",
    ),
    Rule(
        "GOV713",
        "engine-flag-value",
        "a serving-engine flag value is one that engine's scripts use (a warning)",
    ),
    Rule(
        "GOV714",
        "unsafe-tree-path",
        "every path in the scripts tree stays inside it (no `..`, `.`, `.git`, empty name)",
        stricter=True,
    ),
    # -- settings (reported, not failing: docs/security.md) -----------------
    Rule(
        "GOV801",
        "settings-changed",
        "settings changed by this change: it is checked with the base's, they apply after it lands",
    ),
    Rule(
        "GOV802",
        "settings-unloadable",
        "the change's own settings files load (else every later check would stop)",
    ),
)

RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}
_CODES_BY_NAME: dict[str, str] = {rule.name: rule.code for rule in _RULES}
STRICTER_CODES = frozenset(rule.code for rule in _RULES if rule.stricter)
IGNORABLE_CODES = frozenset(rule.code for rule in _RULES if rule.ignorable)


def ignorable_codes(codes: Iterable[str], where: str) -> tuple[str, ...]:
    """`codes` upper-cased and de-duplicated; a UsageError (exit 2) for any
    code that is unknown or that the reference enforces too."""
    out: list[str] = []
    allowed = ", ".join(sorted(IGNORABLE_CODES))
    for raw in codes:
        code = raw.strip().upper()
        if code not in RULES:
            raise UsageError(f"{where}: unknown code `{raw}` in ignore", f"ignorable: {allowed}")
        if code not in IGNORABLE_CODES:
            raise UsageError(
                f"{where}: {code} ({RULES[code].name}) cannot be ignored: "
                "only rules where gov is stricter than the reference can be phased in",
                f"ignorable: {allowed} (docs/rules.md)",
            )
        if code not in out:
            out.append(code)
    return tuple(out)


def split_ignored(
    violations: Iterable[Violation], ignore: Iterable[str]
) -> tuple[list[Violation], list[Violation]]:
    """(kept, ignored) findings."""
    skip = set(ignore)
    kept = [v for v in violations if v.code not in skip]
    return kept, [v for v in violations if v.code in skip]


def code_for(rule_name: str) -> str:
    """The code of a rule by its name (e.g. "nothing-remaining" -> "GOV602")."""
    return _CODES_BY_NAME[rule_name]


def violation(
    code: str,
    message: str,
    path: str = "",
    line: int = 0,
    column: int = 0,
    hint: str = "",
    *,
    source: str = "head",
) -> Violation:
    """Build a Violation whose rule name comes from the catalogue."""
    return Violation(
        code=code,
        rule=RULES[code].name,
        message=message,
        path=path,
        line=line,
        column=column,
        hint=hint,
        source=source,
    )
