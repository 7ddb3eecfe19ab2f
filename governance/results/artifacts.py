"""A sweep run's downloaded artifacts in, its points out, checked for consistency (pure).

The layout is the one InferenceX's job templates leave (docs/results.md,
"Importing a sweep run"): per job a `bmk_<RF>/agg_<RF>.json` object, the
aggregate list `results_bmk/agg_bmk.json`, agentic points under
`bmk_agentic_*/`, one folder per eval job (`eval_*/`, its `meta_env.json`
naming the row) and the eval aggregate under `eval_results_all/`. Before a
run's points may be reused, the repository's own rules must hold, and gov
checks the same:

* the aggregate and the per-job artifacts describe the same points: none
  missing, none extra (throughput and agentic points against `agg_bmk.json`,
  evals against `eval_results_all/`);
* no point appears twice in an aggregate;
* an eval run more than once stands by its newest (its `timestamp`); the
  older ones are dropped, and said so.

Every refusal names the artifact and the point. A point's identity is
`point_identity`: the fields that make two results the same point, with the
defaults of the spec; `row_point` computes the same for a plan row, so a
point maps to the row of the plan that it measured.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from governance.core import jsonsafe

Identity = tuple[Any, ...]
AGGREGATE = "results_bmk/agg_bmk.json"
EVAL_AGGREGATE = "eval_results_all/"
META = "meta_env.json"
_PARALLEL = (("tp", None), ("pp", 1), ("dcp_size", 1), ("pcp_size", 1), ("ep", 1))
_WORKER = (*_PARALLEL, ("num_workers", 1))


@dataclass(frozen=True, slots=True)
class ArtifactPoint:
    """One measured point: its kind, identity, where it came from and its file."""

    kind: str  # throughput | agentic | eval
    identity: Identity
    artifact: str  # the artifact path it was read from
    data: Mapping[str, Any]  # the processed object (evals: meta_env.json plus the result)
    files: Mapping[str, bytes]  # name -> bytes to keep as the run's files
    timestamp: str = ""

    def label(self) -> str:
        return describe(self.identity)


@dataclass(slots=True)
class Collected:
    points: list[ArtifactPoint] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # "<artifact>: <point>: <why>"
    dropped: list[str] = field(default_factory=list)  # older reruns of an eval


def _text(value: Any, default: Any = None) -> Any:
    if value is None or value == "":
        value = default
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return None if value is None else str(value).strip().lower()


def _get(obj: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for name in names:
        if name in obj and obj[name] is not None and obj[name] != "":
            return obj[name]
    return default


def _parallel(obj: Mapping[str, Any], prefix: str, fields: tuple[tuple[str, Any], ...]) -> Identity:
    out = []
    for name, default in fields:
        dashed = name.replace("_", "-")
        short = name.removesuffix("_size")
        value = _get(
            obj, f"{prefix}{name}", f"{prefix}{dashed}", f"{prefix}{short}", default=default
        )
        out.append(_text(value, default))
    dpa = _get(obj, f"{prefix}dp_attention", f"{prefix}dp-attn", f"{prefix}dp_attn", default=False)
    out.append(_text(dpa, False))
    return tuple(out)


def point_identity(
    obj: Mapping[str, Any], kind: str, runners: frozenset[str] = frozenset()
) -> Identity:
    """What makes two results the same point (docs/results.md): the runner,
    model prefix, framework, precision, spec-decoding [none], disagg [false],
    isl/osl (not for agentic; evals default to 8192/1024), the parallelism
    (single node) or the prefill and decode parallelism and workers (multi
    node), the KV-offloading choice of an agentic point, and conc. Field
    names are read in the artifact's spelling (`infmax_model_prefix`,
    `dp_attention`) and the plan's (`model-prefix`, `dp-attn`). A runner node
    name (`mi300x-amds_00`) counts as the runner of `runners` it names."""
    runner = str(_get(obj, "hw", "runner", default="")).strip()
    runner = normal_runner(runner, runners)
    prefix = _get(obj, "infmax_model_prefix", "model_prefix", "model-prefix", default="")
    common: list[Any] = [
        kind,
        runner.lower(),
        _text(prefix, ""),
        _text(_get(obj, "framework"), ""),
        _text(_get(obj, "precision"), ""),
        _text(_get(obj, "spec_decoding", "spec-decoding"), "none"),
        _text(_get(obj, "disagg"), False),
    ]
    if kind != "agentic":
        isl, osl = (8192, 1024) if kind == "eval" else (None, None)
        common += [_text(_get(obj, "isl"), isl), _text(_get(obj, "osl"), osl)]
    multinode = _multinode(obj)
    common.append("multi" if multinode else "single")
    if multinode:
        common += [_parallel(_side(obj, "prefill"), "", _WORKER)]
        common += [_parallel(_side(obj, "decode"), "", _WORKER)]
    else:
        common += [_parallel(obj, "", _PARALLEL)]
    if kind == "agentic":
        offload = _text(_get(obj, "kv_offloading", "kv-offloading", "offloading"), "none")
        backend = _get(obj, "kv_offloading_backend", "kv-offloading-backend", default="")
        common += ["none" if offload in ("none", "false") else offload, _text(backend, "")]
    common.append(_text(_get(obj, "conc"), ""))
    return tuple(common)


def _multinode(obj: Mapping[str, Any]) -> bool:
    return isinstance(obj.get("prefill"), Mapping) or any(
        str(key).startswith(("prefill_", "decode_")) for key in obj
    )


def _side(obj: Mapping[str, Any], side: str) -> dict[str, Any]:
    """A multi-node side as one mapping, from `prefill: {...}` or `prefill_tp`, ..."""
    nested = obj.get(side)
    if isinstance(nested, Mapping):
        out = dict(nested)
        if "num-worker" in out and "num_workers" not in out:
            out["num_workers"] = out["num-worker"]
        return out
    return {key[len(side) + 1 :]: value for key, value in obj.items() if key.startswith(f"{side}_")}


def normal_runner(name: str, runners: frozenset[str]) -> str:
    """A runner node name as its runner: the longest of `runners` it equals or
    starts (followed by `-` or `_`); unchanged when none."""
    if name in runners:
        return name
    # `cluster:b300-nv` runs on nodes named `b300-nv_00`
    found = [r for r in runners if _starts(name, r) or _starts(name, r.rpartition(":")[2])]
    return max(found, key=len) if found else name


def _starts(name: str, runner: str) -> bool:
    return bool(runner) and (name == runner or name.startswith((f"{runner}-", f"{runner}_")))


def describe(identity: Identity) -> str:
    """A point for a message: its kind, runner, model, framework, precision and conc."""
    kind, runner, prefix, framework, precision = identity[:5]
    return f"{kind} {prefix} {precision} {runner} {framework} conc {identity[-1]}"


def _load(path: str, data: bytes) -> tuple[Any, str]:
    try:
        return jsonsafe.loads(data), ""
    except (jsonsafe.JsonBoundError, ValueError) as exc:
        return None, f"{path}: not readable JSON ({exc})"


def collect(files: Mapping[str, bytes], runners: frozenset[str] = frozenset()) -> Collected:
    """The points of a downloaded run (`files`: path below the download folder
    -> bytes), checked against the repository's consistency rules."""
    out = Collected()
    raw: list[ArtifactPoint] = []
    for path, data in sorted(files.items()):
        top = path.split("/", 1)[0]
        name = posixpath.basename(path)
        if top.startswith("bmk_agentic_") and name.endswith(".json"):
            kind = "agentic"
        elif top.startswith("bmk_") and name.startswith("agg_") and name.endswith(".json"):
            kind = "throughput"
        else:
            continue
        obj, why = _load(path, data)
        if why or not isinstance(obj, Mapping):
            out.refusals.append(why or f"{path}: not one result object")
            continue
        identity = point_identity(obj, kind, runners)
        raw.append(ArtifactPoint(kind, identity, path, obj, {name: data}))
    _against_aggregate(files, raw, out, runners)
    _evals(files, out, runners)
    return out


def _against_aggregate(
    files: Mapping[str, bytes], raw: list[ArtifactPoint], out: Collected, runners: frozenset[str]
) -> None:
    aggregate: dict[Identity, int] = {}
    if raw and AGGREGATE not in files:
        out.refusals.append(f"{AGGREGATE}: missing, so the job artifacts cannot be checked")
        return
    if AGGREGATE in files:
        listing, why = _load(AGGREGATE, files[AGGREGATE])
        if why or not isinstance(listing, list):
            out.refusals.append(why or f"{AGGREGATE}: not a list of result objects")
            return
        for k, obj in enumerate(listing):
            if not isinstance(obj, Mapping):
                out.refusals.append(f"{AGGREGATE}[{k}]: not a result object")
                continue
            kind = "agentic" if _agentic(obj) else "throughput"
            identity = point_identity(obj, kind, runners)
            if identity in aggregate:
                out.refusals.append(f"{AGGREGATE}[{k}]: {describe(identity)}: appears twice")
            aggregate[identity] = k
    seen: dict[Identity, str] = {}
    for point in raw:
        if point.identity in seen:
            out.refusals.append(
                f"{point.artifact}: {point.label()}: the same point as {seen[point.identity]}"
            )
            continue
        seen[point.identity] = point.artifact
        if point.identity not in aggregate:
            out.refusals.append(f"{point.artifact}: {point.label()}: no row in {AGGREGATE}")
            continue
        out.points.append(point)
    for identity, k in aggregate.items():
        if identity not in seen:
            out.refusals.append(
                f"{AGGREGATE}[{k}]: {describe(identity)}: no job artifact (bmk_*/agg_*.json)"
            )


def _agentic(obj: Mapping[str, Any]) -> bool:
    scenario = str(_get(obj, "scenario_type", "scenario-type", "scenario", default=""))
    return "agentic" in scenario.lower()


def _evals(files: Mapping[str, bytes], out: Collected, runners: frozenset[str]) -> None:
    """Eval jobs (`eval_*/` with `meta_env.json`) against `eval_results_all/`;
    reruns collapse to the newest by `timestamp`."""
    folders: dict[str, dict[str, bytes]] = {}
    for path, data in files.items():
        top, _, rest = path.partition("/")
        if top.startswith("eval_") and not top.startswith(("eval_results_all", "eval_server_logs",
                                                           "eval_gpu_metrics")) and rest:  # fmt: skip
            folders.setdefault(top, {})[rest] = data
    newest: dict[Identity, ArtifactPoint] = {}
    for top, contents in sorted(folders.items()):
        if META not in contents:
            out.refusals.append(f"{top}/: no {META} naming the row it ran")
            continue
        meta, why = _load(f"{top}/{META}", contents[META])
        if why or not isinstance(meta, Mapping):
            out.refusals.append(why or f"{top}/{META}: not an object")
            continue
        results = sorted(
            n for n in contents if "/" not in n and n.startswith("results") and n.endswith(".json")
        )
        if not results:
            out.refusals.append(f"{top}/: no results*.json (lm-eval's result)")
            continue
        identity = point_identity(meta, "eval", runners)
        keep = {name: contents[name] for name in (META, results[-1])}
        point = ArtifactPoint(
            "eval", identity, f"{top}/", meta, keep, str(meta.get("timestamp", ""))
        )
        older = newest.get(identity)
        if older is not None:
            stale, point = sorted((older, point), key=lambda p: (p.timestamp, p.artifact))
            out.dropped.append(
                f"{stale.artifact}: {stale.label()}: rerun; {point.artifact} is newer"
            )
        newest[identity] = point
    aggregate = _eval_aggregate(files, out, runners)
    if newest and aggregate is None:
        out.refusals.append(f"{EVAL_AGGREGATE}: missing, so the eval artifacts cannot be checked")
        return
    for identity, point in newest.items():
        if aggregate is not None and identity not in aggregate:
            out.refusals.append(f"{point.artifact}: {point.label()}: no row in {EVAL_AGGREGATE}")
            continue
        out.points.append(point)
    for identity, where in (aggregate or {}).items():
        if identity not in newest:
            out.refusals.append(f"{where}: {describe(identity)}: no eval job artifact (eval_*/)")


def _eval_aggregate(
    files: Mapping[str, bytes], out: Collected, runners: frozenset[str]
) -> dict[Identity, str] | None:
    """Identity -> where, of the eval aggregate's rows (reruns collapsed: the
    aggregate lists every attempt); None when there is none."""
    paths = sorted(p for p in files if p.startswith(EVAL_AGGREGATE) and p.endswith(".json"))
    if not paths:
        return None
    found: dict[Identity, tuple[str, str]] = {}
    for path in paths:
        listing, why = _load(path, files[path])
        if why:
            out.refusals.append(why)
            continue
        rows = listing if isinstance(listing, list) else [listing]
        for k, obj in enumerate(rows):
            if not isinstance(obj, Mapping):
                out.refusals.append(f"{path}[{k}]: not an eval row")
                continue
            identity = point_identity(obj, "eval", runners)
            stamp = str(obj.get("timestamp", ""))
            where = f"{path}[{k}]"
            if identity in found and found[identity][1] == stamp:
                out.refusals.append(f"{where}: {describe(identity)}: appears twice")
            if identity not in found or stamp > found[identity][1]:
                found[identity] = (where, stamp)
    return {identity: where for identity, (where, _stamp) in found.items()}


def row_point(row: Mapping[str, Any], kind: str) -> Identity:
    """A plan row's point identity, comparable with `point_identity` of what measured it."""
    return point_identity(row, kind, frozenset())
