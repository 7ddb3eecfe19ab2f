"""Result files in, figures out (pure: bytes and a row in, data out).

Three shapes, as the reference's scripts leave them (docs/results.md):

* fixed-seq-len `<RF>.json`: the serving benchmark's `--save-result` file
  (`total_token_throughput` in tokens/s for the whole server, `median_ttft_ms`,
  `median_tpot_ms`, ...);
* the aggregated shape (`agg_<RF>.json`, and the agentic `<RF>.json` the
  agentic aggregation writes): `tput_per_gpu`, latencies in seconds
  (`median_ttft`, or `p50_ttft`), `median_intvty`;
* eval results (`results*.json`, lm-eval's): `results: {task: {metric: value}}`.

Throughput per GPU divides the server's throughput by the row's GPU count
(TP x PP x PCP single node; the workers' sum multi node). Interactivity is
tokens/s per user, 1000 / median TPOT (ms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from governance.core import jsonsafe

# A result or row file gov parses (the serving benchmark's and lm-eval's are tens
# of KB); bigger is "too large" (docs/security.md, "Bounds").
MAX_RESULT_BYTES = 4 * 1024 * 1024


class ResultError(ValueError):
    """A result file that cannot be read; the message says what is missing."""


@dataclass(frozen=True, slots=True)
class Figures:
    kind: str  # "throughput" or "eval"
    tput_per_gpu: float | None = None  # tokens/s per GPU
    ttft_ms: float | None = None  # median time to first token
    tpot_ms: float | None = None  # median time per output token
    interactivity: float | None = None  # tokens/s per user
    scores: dict[str, float] = field(default_factory=dict)  # eval: "task metric" -> value

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "tput_per_gpu": self.tput_per_gpu,
            "median_ttft_ms": self.ttft_ms,
            "median_tpot_ms": self.tpot_ms,
            "median_interactivity": self.interactivity,
            "scores": dict(self.scores),
        }


def gpu_count(row: Mapping[str, Any]) -> int:
    """The GPUs a row's server spans (at least 1)."""

    def size(part: Mapping[str, Any]) -> int:
        total = 1
        for name in ("tp", "pp", "pcp-size"):
            value = part.get(name, 1)
            total *= value if type(value) is int and value > 0 else 1
        return total

    workers = [row.get(role) for role in ("prefill", "decode")]
    if all(isinstance(w, Mapping) for w in workers):
        total = 0
        for worker in workers:
            if isinstance(worker, Mapping):
                count = worker.get("num-worker")
                total += size(worker) * (count if type(count) is int and count > 0 else 1)
        return max(1, total)
    return size(row)


def _number(data: Mapping[str, Any], *names: str) -> float | None:
    for name in names:
        value = data.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
            if math.isfinite(number):
                return number
    return None


def _interactivity(tpot_ms: float | None) -> float | None:
    return 1000.0 / tpot_ms if tpot_ms else None


def figures(data: Any, row: Mapping[str, Any]) -> Figures:
    """The figures of one parsed result document of `row`."""
    if not isinstance(data, Mapping):
        raise ResultError("the result is not a JSON object")
    if isinstance(data.get("results"), Mapping):
        return _eval(data["results"])
    if "tput_per_gpu" in data:  # the aggregated shape (seconds)
        ttft = _number(data, "median_ttft", "p50_ttft")
        tpot = _number(data, "median_tpot", "p50_tpot")
        ttft_ms = ttft * 1000.0 if ttft is not None else None
        tpot_ms = tpot * 1000.0 if tpot is not None else None
        interactivity = _number(data, "median_intvty", "p50_intvty") or _interactivity(tpot_ms)
        return Figures("throughput", _number(data, "tput_per_gpu"), ttft_ms, tpot_ms, interactivity)
    total = _number(data, "total_token_throughput")
    if total is None:
        raise ResultError(
            "no total_token_throughput, tput_per_gpu or results: not a result file gov can read"
        )
    tpot_ms = _number(data, "median_tpot_ms")
    return Figures(
        "throughput",
        total / gpu_count(row),
        _number(data, "median_ttft_ms"),
        tpot_ms,
        _interactivity(tpot_ms),
    )


def _eval(results: Mapping[str, Any]) -> Figures:
    scores: dict[str, float] = {}
    for task, metrics in sorted(results.items()):
        if not isinstance(metrics, Mapping):
            continue
        for name, value in sorted(metrics.items()):
            if "stderr" in name or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)) and math.isfinite(float(value)):
                scores[f"{task} {name}"] = float(value)
    if not scores:
        raise ResultError("an eval result without a numeric score")
    return Figures("eval", scores=scores)


def read_result(data: bytes, row: Mapping[str, Any]) -> Figures:
    """Figures from a result file's bytes (ResultError when unreadable: not
    JSON, or past a bound of `governance.core.jsonsafe`)."""
    try:
        document = jsonsafe.loads(data)
    except jsonsafe.JsonBoundError as exc:
        raise ResultError(str(exc)) from exc
    return figures(document, row)
