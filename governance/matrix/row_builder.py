"""Sweep rows from validated master-config entries: one row per runner,
scenario, search-space entry and concurrency, built from the raw YAML (which
keeps the user's key order, e.g. inside workers), with the DRAM budget check
of KV offloading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from governance.core.codes import violation
from governance.matrix.catalog import Catalog
from governance.matrix.errors import MatrixError
from governance.matrix.plan_entry import AGENTIC, FIXED, SCENARIO_KINDS
from governance.matrix.rowbounds import MAX_PLAN_ROWS, RowCount
from governance.matrix.runners import RunnerData

AGENTIC_DURATION = 3600
DRAM_CAP_MIB = 2_861_022  # 3 TB (decimal) expressed in MiB
SEQ_LEN_NAMES = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}


@dataclass(frozen=True, slots=True)
class Filters:
    """Optional generator filters (docs/matrix.md, 'Row generation'). None means "no filter"."""

    scenario_types: tuple[str, ...] | None = None
    seq_lens: tuple[str, ...] | None = None
    conc: tuple[int, ...] | None = None
    runner_node_filter: str | None = None


def seq_len_name(isl: int, osl: int) -> str:
    return SEQ_LEN_NAMES.get((isl, osl), f"{isl}_{osl}")


def conc_range(start: int, end: int) -> list[int]:
    """Doubling steps from start, always ending exactly at end."""
    values = [start]
    current = start
    while current != end:
        current = min(current * 2, end)
        values.append(current)
    return values


# -- row building ---------------------------------------------------------------


def build_rows(
    catalog: Catalog, keys: Sequence[str], filters: Filters, max_rows: int = MAX_PLAN_ROWS
) -> list[dict[str, Any]]:
    """The rows of `keys`, counted before they are built (`rowbounds`): a
    config past MAX_CONFIG_ROWS or an invocation past `max_rows` is GOV524."""
    count = RowCount(max_rows)
    runner = catalog.runner  # loaded and validated on every invocation, as the reference does
    kinds = filters.scenario_types or SCENARIO_KINDS
    rows: list[dict[str, Any]] = []
    for key in keys:
        config = catalog.entry(key)
        multinode = bool(config.get("multinode"))
        runners = _runner_values(config["runner"], runner, filters.runner_node_filter)
        if not runners:
            continue
        scenarios = config["scenarios"]
        if FIXED in kinds:
            for block_index, block in enumerate(scenarios.get(FIXED) or ()):
                name = seq_len_name(block["isl"], block["osl"])
                if filters.seq_lens is not None and name not in filters.seq_lens:
                    continue
                for entry_index, entry in enumerate(block["search-space"]):
                    concs = _keep(_fixed_concs(entry), filters.conc)
                    made = len(runners) * (bool(concs) if multinode else len(concs))
                    loc = ("scenarios", FIXED, block_index, "search-space", entry_index)
                    count.add(catalog, key, loc, made)
                    if multinode:
                        if concs:
                            rows.extend(
                                _multinode_fixed_row(config, block, entry, concs, name)
                                for name in runners
                            )
                    else:
                        rows.extend(
                            _single_node_fixed_row(config, block, entry, conc, name)
                            for conc in concs
                            for name in runners
                        )
        if AGENTIC in kinds:
            for block_index, block in enumerate(scenarios.get(AGENTIC) or ()):
                for entry_index, entry in enumerate(block["search-space"]):
                    where = (AGENTIC, block_index, "search-space", entry_index)
                    budget = _dram_budget(catalog, key, config, block, entry, runner, where)
                    concs = _keep(_agentic_concs(entry), filters.conc)
                    count.add(catalog, key, ("scenarios", *where), len(runners) * len(concs))
                    if multinode:
                        rows.extend(
                            _multinode_agentic_row(config, entry, [conc], budget, name)
                            for name in runners
                            for conc in concs
                        )
                    else:
                        rows.extend(
                            _single_node_agentic_row(config, entry, conc, budget, name)
                            for conc in concs
                            for name in runners
                        )
    return rows


def _runner_values(label: str, runner: RunnerData, node_filter: str | None) -> list[str]:
    if node_filter is None:
        return [label]
    candidates = ([label] if node_filter in label else []) + list(runner.labels.get(label, ()))
    chosen: list[str] = []
    for name in candidates:
        if node_filter in name and name not in chosen:
            chosen.append(name)
    return chosen


def _keep(values: list[int], allowed: tuple[int, ...] | None) -> list[int]:
    return values if allowed is None else [v for v in values if v in allowed]


def _fixed_concs(entry: dict[str, Any]) -> list[int]:
    # fixed-seq-len: a present `conc-list` wins even when empty (reference quirk)
    if entry.get("conc-list") is not None:
        return list(entry["conc-list"])
    return conc_range(entry["conc-start"], entry["conc-end"])


def _agentic_concs(entry: dict[str, Any]) -> list[int]:
    if entry.get("conc-list"):
        return list(entry["conc-list"])
    return conc_range(entry["conc-start"], entry["conc-end"])


def _scoped(entry: dict[str, Any], config: dict[str, Any], field: str) -> Any:
    """Component scope: a key present in the entry wins even when null."""
    return entry[field] if field in entry else config.get(field)


def _worker(raw: dict[str, Any]) -> dict[str, Any]:
    """The worker as written, then pp/dcp-size/pcp-size defaults."""
    worker = dict(raw)
    for name in ("pp", "dcp-size", "pcp-size"):
        worker.setdefault(name, 1)
    return worker


def _head(config: dict[str, Any], runner: str) -> dict[str, Any]:
    return {
        "image": config["image"],
        "model": config["model"],
        "model-prefix": config["model-prefix"],
        "precision": config["precision"],
        "framework": config["framework"],
        "runner": runner,
    }


def _add_components(
    row: dict[str, Any], entry: dict[str, Any], config: dict[str, Any], fields: Sequence[str]
) -> None:
    for field in fields:
        value = _scoped(entry, config, field)
        if value is not None:
            row[field] = value


def _single_node_fixed_row(
    config: dict[str, Any], block: dict[str, Any], entry: dict[str, Any], conc: int, runner: str
) -> dict[str, Any]:
    isl, osl = block["isl"], block["osl"]
    row = _head(config, runner)
    row.update(
        {
            "isl": isl,
            "osl": osl,
            "tp": entry["tp"],
            "pp": entry.get("pp", 1),
            "dcp-size": entry.get("dcp-size", 1),
            "pcp-size": entry.get("pcp-size", 1),
            "conc": conc,
            "max-model-len": isl + osl + 256,
            "ep": entry.get("ep", 1),
            "dp-attn": entry.get("dp-attn", False),
            "spec-decoding": entry.get("spec-decoding", "none"),
            "exp-name": f"{config['model-prefix']}_{seq_len_name(isl, osl)}",
            "disagg": config.get("disagg", False),
            "run-eval": False,
        }
    )
    _add_components(row, entry, config, ("router",))
    return row


def _multinode_fixed_row(
    config: dict[str, Any],
    block: dict[str, Any],
    entry: dict[str, Any],
    concs: list[int],
    runner: str,
) -> dict[str, Any]:
    isl, osl = block["isl"], block["osl"]
    row = _head(config, runner)
    row.update(
        {
            "isl": isl,
            "osl": osl,
            "spec-decoding": entry.get("spec-decoding", "none"),
            "prefill": _worker(entry["prefill"]),
            "decode": _worker(entry["decode"]),
            "conc": list(concs),
            "max-model-len": isl + osl + 256,
            "exp-name": f"{config['model-prefix']}_{seq_len_name(isl, osl)}",
            "disagg": config.get("disagg", False),
            "run-eval": False,
        }
    )
    _add_components(row, entry, config, ("router", "kv-p2p-transfer"))
    return row


def _offload_tag(entry: dict[str, Any], offloading: str) -> str:
    if offloading == "none":
        return "kvnone"
    return f"kv{offloading}-{entry['kv-offload-backend']['name']}"


def _single_node_agentic_row(
    config: dict[str, Any], entry: dict[str, Any], conc: int, budget: int, runner: str
) -> dict[str, Any]:
    spec = entry.get("spec-decoding", "none")
    offloading = entry["kv-offloading"]
    name = f"{config['model-prefix']}_tp{entry['tp']}_conc{conc}_{_offload_tag(entry, offloading)}"
    if spec != "none":
        name += f"_spec-{spec}"
    row = _head(config, runner)
    row.update(
        {
            "tp": entry["tp"],
            "pp": entry.get("pp", 1),
            "dcp-size": entry.get("dcp-size", 1),
            "pcp-size": entry.get("pcp-size", 1),
            "ep": entry.get("ep", 1),
            "dp-attn": entry.get("dp-attn", False),
            "spec-decoding": spec,
            "conc": conc,
            "kv-offloading": offloading,
            "total-cpu-dram-gb": budget,
            "duration": AGENTIC_DURATION,
            "exp-name": name,
            "scenario-type": AGENTIC,
        }
    )
    if entry.get("kv-offload-backend") is not None:
        row["kv-offload-backend"] = dict(entry["kv-offload-backend"])
    _add_components(row, entry, config, ("router",))
    return row


def worker_tag(letter: str, worker: dict[str, Any]) -> str:
    """A worker in a name or a table: P2x8ep8dpa = 2 workers, TP 8, EP 8, DP attention."""
    tag = f"{letter}{worker.get('num-worker')}x{worker.get('tp')}"
    if worker.get("ep", 1) != 1:
        tag += f"ep{worker['ep']}"
    if worker.get("dp-attn"):
        tag += "dpa"
    return tag


def _multinode_agentic_row(
    config: dict[str, Any], entry: dict[str, Any], concs: list[int], budget: int, runner: str
) -> dict[str, Any]:
    offloading = entry.get("kv-offloading") or "none"
    prefill, decode = entry["prefill"], entry["decode"]
    name = (
        f"{config['model-prefix']}_{worker_tag('p', prefill)}_{worker_tag('d', decode)}"
        f"_conc{'x'.join(str(c) for c in concs)}"
    )
    if offloading != "none":
        name += "_" + _offload_tag(entry, offloading)
    row = _head(config, runner)
    row.update(
        {
            "spec-decoding": entry.get("spec-decoding", "none"),
            "prefill": _worker(prefill),
            "decode": _worker(decode),
            "conc": list(concs),
            "kv-offloading": offloading,
            "total-cpu-dram-gb": budget,
            "duration": AGENTIC_DURATION,
            "exp-name": name,
            "disagg": config.get("disagg", False),
            "scenario-type": AGENTIC,
        }
    )
    if entry.get("kv-offload-backend") is not None:
        row["kv-offload-backend"] = dict(entry["kv-offload-backend"])
    _add_components(row, entry, config, ("router", "kv-p2p-transfer"))
    return row


# -- DRAM budget -----------------------------------------------------------------


def _dram_budget(
    catalog: Catalog,
    key: str,
    config: dict[str, Any],
    block: dict[str, Any],
    entry: dict[str, Any],
    runner: RunnerData,
    where: tuple[Any, ...],
) -> int:
    if entry.get("kv-offloading") != "dram":
        return 0
    label = config["runner"]
    hardware = runner.hardware.get(label)

    def fail(message: str, *loc: Any) -> MatrixError:
        path, line, column = catalog.field_location(key, *loc)
        return MatrixError([violation("GOV522", message, path, line, column)])

    if hardware is None:
        available = ", ".join(sorted(runner.hardware))
        raise fail(
            f"Runner '{label}' requires 'available-cpu-dram-mib' in runner hardware metadata. "
            f"Available hardware keys: {available}",
            "runner",
        )
    gpus = hardware.gpus_per_node
    if "prefill" in entry and "tp" not in entry:
        worker = entry["prefill"]
        size = worker["tp"] * worker.get("pp", 1) * worker.get("pcp-size", 1)
        if size > gpus:
            if size % gpus:
                raise fail(
                    f"worker tp*pp*pcp-size={size} spans multiple nodes but is not a multiple "
                    f"of gpus-per-node={gpus}",
                    "scenarios",
                    *where,
                )
            count = gpus
        else:
            if gpus % size:
                raise fail(
                    f"worker tp*pp*pcp-size={size} does not divide gpus-per-node={gpus} evenly",
                    "scenarios",
                    *where,
                )
            count = size
    else:
        tp, pp, pcp = entry["tp"], entry.get("pp", 1), entry.get("pcp-size", 1)
        count = tp * pp * pcp
        if count > gpus:
            raise fail(
                f"tp={tp} with pp={pp} and pcp-size={pcp} requires {count} GPUs and exceeds "
                f"gpus-per-node={gpus} for runner '{label}'",
                "scenarios",
                *where,
            )
    from decimal import Decimal  # exact arithmetic: only agentic rows need it
    from fractions import Fraction

    available_mib = min(hardware.available_cpu_dram_mib, DRAM_CAP_MIB)
    # exact decimal of the float's shortest text (0.8 is 8/10, not binary 0.8)
    utilization = Fraction(Decimal(repr(float(block["dram-utilization"]))))
    budget = Fraction(available_mib) * 1_048_576 * utilization * count / gpus / 10**9
    return int(budget)  # all factors positive: int() truncates like floor
