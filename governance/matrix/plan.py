"""The changelog processor: appended perf-changelog entries -> plan document.

Pure (docs/matrix.md, 'From the changelog to the plan'): the caller supplies
the base and head bytes of perf-changelog.yaml and the head (and, for
append-only sweeps, base) catalogs; nothing here runs git.

Pipeline, in the reference's order (docs/matrix.md, 'The plan document'):
  base and head bytes -> added lines -> YAML list -> `PlanEntry`s -> sweep rules
  -> head catalog valid -> keys resolved -> [append-only scope checks]
  -> per entry: throughput rows + eval rows (generator invocations grouped
     by scenario kinds, deduplicated by two ledgers)
  -> [trim-conc] -> recipe fingerprints -> buckets -> normalised document.

`build_plan` returns the reference-shaped document plus gov's own warnings
(kept outside the document so it stays byte-compatible with the reference).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from governance.changelog.keys import wildcard_matches
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.core.fingerprint import recipe_fingerprint
from governance.matrix.additions import (
    Additions,
    Where,
    changelog_additions,
    parse_additions,
    resolve_entry_keys,
    validate_entries,
)
from governance.matrix.append_only import append_only_delta, append_only_scope
from governance.matrix.catalog import Catalog
from governance.matrix.errors import MatrixError
from governance.matrix.expand import EvalMode, generate
from governance.matrix.plan_entry import AGENTIC, SCENARIO_KINDS, PlanEntry
from governance.matrix.row_builder import Filters, seq_len_name
from governance.matrix.row_fields import normalise_row
from governance.matrix.rowbounds import MAX_PLAN_ROWS

# Buckets the CI job families run; rows elsewhere would never be benchmarked.
DEFAULT_RUN_BUCKETS = ("1k1k", "8k1k", "agentic")


@dataclass(frozen=True, slots=True)
class PlanOptions:
    base_ref: str
    head_ref: str
    changelog_path: str  # the file named in findings: the settings' `changelog`
    trim_conc: bool = False
    evals_only: bool = False
    all_evals: bool = False
    run_buckets: tuple[str, ...] = DEFAULT_RUN_BUCKETS
    # True: like the reference, any invalid master entry fails the plan.
    # False: only the configs the entries select are parsed and validated
    # (much faster on a cold parse cache; unrelated faults do not block).
    validate_all: bool = True


@dataclass(frozen=True, slots=True)
class PlanResult:
    document: dict[str, Any]  # exactly the reference processor's output shape
    warnings: list[Violation] = field(default_factory=list)


def plan_violations(
    additions: Additions,
    head: Catalog,
    base: Catalog | None,
    options: PlanOptions,
    *,
    generate: bool = True,
) -> tuple[list[str], list[Violation], dict[str, Any] | None]:
    """For `gov check`: the keys the appended entries resolve to, every
    fault that would stop their plan, located in the changelog or in the
    master config where the fault is, and the plan's document when it was
    generated (`generate`, and no fault). Key and config faults are
    collected all at once; plan-level faults (append-only deltas, sweep
    rules) are reported as the processor meets them."""
    try:
        raw_entries = parse_additions(additions)
    except MatrixError as exc:
        return [], list(exc.violations), None
    where = Where(additions.path, additions.lines, additions.contents)
    keys: list[str] = []
    problems: list[Violation] = []
    for raw in raw_entries:
        patterns = raw.get("config-keys") if isinstance(raw, Mapping) else None
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            continue  # the changelog schema check reports malformed entries
        resolved, unresolved = resolve_entry_keys(raw, patterns, head, where)
        keys.extend(key for key in resolved if key not in keys)
        problems.extend(unresolved)
    problems.extend(head.violations(None if options.validate_all else keys))
    # Faults row generation tolerates but that would make rows never run:
    # a runner label missing from the runner file, an empty search space.
    problems.extend(head.advisory_violations(keys))
    if problems or not generate:
        return keys, problems, None
    try:
        document = plan_additions(additions, head, options, base, raw_entries=raw_entries).document
    except MatrixError as exc:
        return keys, [*problems, *exc.violations], None
    return keys, problems, document


# -- the processor ---------------------------------------------------------------


def build_plan(
    changelog: tuple[bytes | None, bytes | None],
    head: Catalog,
    options: PlanOptions,
    base: Catalog | None = None,
) -> PlanResult:
    """`process_changelog` (7): the changelog's (base, head) bytes + catalogs
    -> plan. The appended lines come from the blobs, as `gov check` reads
    them (`changelog.appended`), not from diff text. `base` is needed only
    when the sweep is append-only."""
    additions = changelog_additions(*changelog, options.changelog_path)
    return plan_additions(additions, head, options, base)


def plan_additions(
    additions: Additions,
    head: Catalog,
    options: PlanOptions,
    base: Catalog | None = None,
    *,
    raw_entries: list[Any] | None = None,
) -> PlanResult:
    """The processor from the appended lines on (parse, validate, resolve,
    generate); `raw_entries`: `parse_additions(additions)` when the caller
    already parsed them (a round-trip parse is the slow kind)."""
    if raw_entries is None:
        raw_entries = parse_additions(additions)
    where = Where(options.changelog_path, additions.lines, additions.contents)
    entries = validate_entries(raw_entries, where)
    append_only = _sweep_rules(entries, options, additions)
    if options.validate_all:
        head.require_valid()
    elif file_problems := head.file_violations():
        raise MatrixError(file_problems)
    resolved: list[list[str]] = []
    problems: list[Violation] = []
    for raw, entry in zip(raw_entries, entries, strict=True):
        keys, unresolved = resolve_entry_keys(raw, entry.config_keys, head, where)
        resolved.append(keys)
        problems.extend(unresolved)
    if problems:
        raise MatrixError(problems)
    if not options.validate_all:
        head.require_valid([key for keys in resolved for key in keys])
    if append_only:
        if base is None:
            raise MatrixError(
                [
                    violation(
                        "GOV540",
                        "append-only sweeps need the base revision's master configs",
                        options.changelog_path,
                    )
                ]
            )
        append_only_scope(entries, resolved, head, base)
    throughput, evals = _process(entries, resolved, head, base, options)
    if options.trim_conc:
        throughput = trim_conc(throughput)
    for row in throughput:
        row["recipe-fingerprint"] = recipe_fingerprint(row)
    document = assemble(throughput, evals, entries, options)
    return PlanResult(document, unrun_bucket_warnings(document, options))


def _sweep_rules(entries: list[PlanEntry], options: PlanOptions, additions: Additions) -> bool:
    flags = [entry.append_only for entry in entries]
    line = additions.first_line
    if any(flags) and not all(flags):
        raise MatrixError(
            [
                violation(
                    "GOV533",
                    "append-only entries cannot share a sweep with regular changelog entries",
                    options.changelog_path,
                    line,
                    1,
                    hint="split the append-only entry into its own pull request",
                )
            ]
        )
    if any(flags) and (options.all_evals or options.evals_only):
        raise MatrixError(
            [
                violation(
                    "GOV533",
                    "append-only sweeps cannot use all-evals or evals-only modifiers",
                    options.changelog_path,
                    line,
                    1,
                )
            ]
        )
    return bool(flags) and all(flags)


def _process(
    entries: list[PlanEntry],
    resolved: list[list[str]],
    head: Catalog,
    base: Catalog | None,
    options: PlanOptions,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Generator invocations per entry, deduplicated by ledgers. The plan's
    throughput rows are at most `rowbounds.MAX_PLAN_ROWS`, and no invocation
    builds more than what is left of them; an eval selection builds at most
    as many (GOV524)."""
    order = sorted(range(len(entries)), key=lambda i: not entries[i].all_evals)  # stable
    throughput_seen: dict[str, set[str]] = {}
    eval_seen: dict[str, set[str]] = {}
    throughput: list[dict[str, Any]] = []
    evals: list[dict[str, Any]] = []
    strict = options.validate_all

    def run(catalog: Catalog, keys: list[str], mode: EvalMode, filters: Filters, most: int) -> Any:
        return generate(catalog, keys, mode, filters, validate_all=strict, max_rows=most)

    for index in order:
        entry, keys = entries[index], resolved[index]
        expand = options.all_evals or entry.all_evals
        suppress = options.evals_only or entry.evals_only or entry.all_evals
        if not suppress:
            for kinds, group in _groups(keys, entry.scenarios, throughput_seen):
                filters = Filters(scenario_types=None if kinds == SCENARIO_KINDS else kinds)
                left = MAX_PLAN_ROWS - len(throughput)
                rows = run(head, group, EvalMode.NO_EVALS, filters, left)
                if entry.append_only:
                    assert base is not None
                    base_rows = run(base, group, EvalMode.NO_EVALS, filters, MAX_PLAN_ROWS)
                    rows = append_only_delta(base_rows, rows)
                throughput.extend(rows)
        if entry.append_only:
            continue
        mode = EvalMode.ALL_EVALS if expand else EvalMode.EVALS_ONLY
        for kinds, group in _groups(keys, entry.scenarios, eval_seen):
            rows = run(head, group, mode, Filters(scenario_types=kinds), MAX_PLAN_ROWS)
            if entry.eval_min_prefill_ep is not None:
                rows = [r for r in rows if _prefill_ep_ok(r, entry.eval_min_prefill_ep)]
            evals.extend(rows)
    return throughput, evals


def _groups(
    keys: list[str], scenarios: tuple[str, ...], ledger: dict[str, set[str]]
) -> list[tuple[tuple[str, ...], list[str]]]:
    """Keys grouped by the scenario kinds not yet covered."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for key in keys:
        seen = ledger.setdefault(key, set())
        unseen = tuple(kind for kind in scenarios if kind not in seen)
        if unseen:
            seen.update(unseen)
            groups.setdefault(unseen, []).append(key)
    return list(groups.items())


def _prefill_ep_ok(row: dict[str, Any], minimum: int) -> bool:
    prefill = row.get("prefill")
    if not isinstance(prefill, dict):
        return True
    ep = prefill.get("ep", 1)
    return isinstance(ep, int) and not isinstance(ep, bool) and ep >= minimum


# -- assembling -------------------------------------------------------------------


def trim_conc(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """trim-conc: one lowest-concurrency point per recipe."""
    keep: dict[str, int] = {}  # recipe -> index of its smallest-conc row
    for index, row in enumerate(rows):
        if row.get("prefill") is not None:
            continue
        recipe = json.dumps(
            {k: v for k, v in row.items() if k not in ("conc", "exp-name")}, sort_keys=True
        )
        best = keep.get(recipe)
        if best is None or row["conc"] < rows[best]["conc"]:
            keep[recipe] = index
    survivors = set(keep.values())
    out: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        if row.get("prefill") is not None:
            if isinstance(row["conc"], list) and len(row["conc"]) > 1:
                row = {**row, "conc": [min(row["conc"])]}
            out.append(row)
        elif index in survivors:
            out.append(row)
    return out


def assemble(
    throughput: list[dict[str, Any]],
    evals: list[dict[str, Any]],
    entries: list[PlanEntry],
    options: PlanOptions,
) -> dict[str, Any]:
    single: dict[str, list[dict[str, Any]]] = {}
    multi: dict[str, list[dict[str, Any]]] = {}
    for row in throughput:
        multinode = row.get("prefill") is not None
        if row.get("scenario-type") == AGENTIC:
            bucket = "agentic"
        else:
            bucket = seq_len_name(row["isl"], row["osl"])
        (multi if multinode else single).setdefault(bucket, []).append(normalise_row(row))
    split: dict[str, list[dict[str, Any]]] = {
        "evals": [],
        "agentic_evals": [],
        "multinode_evals": [],
        "multinode_agentic_evals": [],
    }
    for row in evals:
        agentic = row.get("scenario-type") == AGENTIC
        if row.get("prefill") is None:
            name = "agentic_evals" if agentic else "evals"
        else:
            name = "multinode_agentic_evals" if agentic else "multinode_evals"
        split[name].append(normalise_row(row))
    return {
        "single_node": single,
        "multi_node": multi,
        **split,
        "changelog_metadata": {
            "base_ref": options.base_ref,
            "head_ref": options.head_ref,
            "entries": [entry.dump() for entry in entries],
        },
    }


def unrun_bucket_warnings(document: dict[str, Any], options: PlanOptions) -> list[Violation]:
    """Rows in buckets no CI job family runs would silently never be
    benchmarked: say so (the document itself stays reference-shaped)."""
    warnings: list[Violation] = []
    for section in ("single_node", "multi_node"):
        for bucket, rows in document[section].items():
            if bucket not in options.run_buckets:
                keys = sorted({row["model-prefix"] for row in rows})
                warnings.append(
                    violation(
                        "GOV550",
                        f"{len(rows)} {section} row(s) in bucket '{bucket}' (model prefixes: "
                        f"{', '.join(keys)}) use a sequence length no job family runs",
                        options.changelog_path,
                        hint="use 1k1k (1024/1024) or 8k1k (8192/1024), or add a job for "
                        f"'{bucket}'",
                    )
                )
    return warnings


# -- gov log ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HistoryItem:
    index: int  # position in the changelog (0 = oldest)
    entry: Any  # the raw changelog entry
    patterns: tuple[str, ...]  # the patterns of the entry that named the key


def history(config_key: str, entries: Sequence[Any]) -> list[HistoryItem]:
    """Every changelog entry that named `config_key` directly or through a
    `*` wildcard (processor semantics), oldest first."""
    found: list[HistoryItem] = []
    for index, entry in enumerate(entries):
        patterns = entry.get("config-keys") if isinstance(entry, Mapping) else None
        if not isinstance(patterns, list):
            continue
        hits = tuple(p for p in patterns if isinstance(p, str) and wildcard_matches(p, config_key))
        if hits:
            found.append(HistoryItem(index, entry, hits))
    return found
