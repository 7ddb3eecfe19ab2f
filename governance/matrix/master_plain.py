"""The plain case of a master-config entry, without pydantic (pure).

A PR that adds or edits a config gets its blocks validated, and building
the pydantic schema (`master_entry`) costs every such check about a tenth
of a second before it reads a byte. `plainly_valid` accepts exactly the
entries whose every key is known, every value of exactly its declared type
and every rule of the schema met; anything else, or anything it is unsure
of, is False, and the schema judges the entry and words its faults. It
never accepts an entry the schema rejects: tests/matrix/test_master_plain.py
holds it to the schema on every block of the corpus history and on blocks
broken on purpose. Rule by rule it follows `master_entry`, whose docstrings
say why each rule exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

Check = Callable[[Any], bool]


def _int(value: Any) -> bool:
    return type(value) is int


def _positive(value: Any) -> bool:
    return type(value) is int and value > 0


def _bool(value: Any) -> bool:
    return type(value) is bool


def _str(value: Any) -> bool:
    return type(value) is str


def _text(value: Any) -> bool:
    return type(value) is str and value != ""


def _version(value: Any) -> bool:
    return _text(value) and not value.startswith("image:")


def _one_of(*choices: str) -> Check:
    return lambda value: type(value) is str and value in choices


def _list_of(item: Check) -> Check:
    return lambda value: type(value) is list and all(item(v) for v in value)


def _fields(raw: Any, required: Mapping[str, Check], optional: Mapping[str, Check]) -> bool:
    """A mapping of known keys only, the required present, each value of its
    type; an optional key may hold None (the schema's `X | None = None`)."""
    if type(raw) is not dict or not all(key in raw for key in required):
        return False
    for key, value in raw.items():
        check = required.get(key) or optional.get(key)
        if check is None:
            return False  # an unknown key
        if value is None and key in optional and key not in _NOT_NONE:
            continue
        if not check(value):
            return False
    return True


# Fields with a default that is not None: the schema rejects an explicit null.
_NOT_NONE = frozenset({"pp", "dcp-size", "pcp-size", "spec-decoding", "disagg"})
_SPEC = _one_of("mtp", "draft_model", "none")


def _router(value: Any) -> bool:
    return _fields(value, {"name": _text, "version": _version}, {})


def _backend(value: Any) -> bool:
    return _fields(value, {"name": _text}, {"version": _version})


_CONCURRENCY: dict[str, Check] = {
    "conc-start": _int,
    "conc-end": _int,
    "conc-list": _list_of(_int),
}
_TOPOLOGY: dict[str, Check] = {"pp": _positive, "dcp-size": _positive, "pcp-size": _positive}


def _concurrency_ok(raw: dict[str, Any]) -> bool:
    start, end, values = raw.get("conc-start"), raw.get("conc-end"), raw.get("conc-list") or []
    if start is not None and end is not None:
        return not values and 0 < start <= end  # a range, not also a list
    return bool(values) and all(value > 0 for value in values)


def _tp_dcp_ok(raw: dict[str, Any]) -> bool:
    return raw["tp"] % raw.get("dcp-size", 1) == 0


def _worker(value: Any) -> bool:
    return _fields(
        value,
        {"num-worker": _int, "tp": _int, "ep": _int, "dp-attn": _bool},
        {**_TOPOLOGY, "hardware": _text, "additional-settings": _list_of(_str)},
    ) and _tp_dcp_ok(value)


def _paired(raw: dict[str, Any]) -> bool:
    return bool(raw["prefill"].get("hardware")) == bool(raw["decode"].get("hardware"))


def _single_space(raw: Any) -> bool:
    optional = {**_CONCURRENCY, **_TOPOLOGY, "ep": _int, "dp-attn": _bool,
                "spec-decoding": _SPEC, "router": _router}  # fmt: skip
    return _fields(raw, {"tp": _int}, optional) and _concurrency_ok(raw) and _tp_dcp_ok(raw)


def _multi_space(raw: Any) -> bool:
    optional = {**_CONCURRENCY, "spec-decoding": _SPEC, "router": _router,
                "kv-p2p-transfer": _text}  # fmt: skip
    required = {"prefill": _worker, "decode": _worker}
    return _fields(raw, required, optional) and _concurrency_ok(raw) and _paired(raw)


def _agentic_space(raw: Any) -> bool:
    optional = {
        **_CONCURRENCY, **_TOPOLOGY, "tp": _int, "ep": _int, "dp-attn": _bool,
        "spec-decoding": _SPEC, "prefill": _worker, "decode": _worker,
        "kv-offloading": _one_of("none", "dram"), "kv-offload-backend": _backend,
        "router": _router, "kv-p2p-transfer": _text,
    }  # fmt: skip
    if not (_fields(raw, {}, optional) and _concurrency_ok(raw)):
        return False
    offloading = raw.get("kv-offloading")
    if raw.get("kv-offload-backend") is not None:
        if offloading is None or offloading == "none":
            return False
    elif offloading == "dram":
        return False
    tp, prefill, decode = raw.get("tp"), raw.get("prefill"), raw.get("decode")
    if tp is not None and prefill is None and decode is None:  # single-node style
        return offloading is not None and _tp_dcp_ok(raw)
    if tp is None and prefill is not None and decode is not None:  # worker style
        return not (set(_TOPOLOGY) & set(raw)) and _paired(raw)
    return False


def _blocks(raw: Any, block: Check) -> bool:
    return type(raw) is list and all(block(item) for item in raw)


def _fixed_block(space: Check) -> Check:
    def check(raw: Any) -> bool:
        required = {"isl": _int, "osl": _int, "search-space": _list_of(space)}
        return _fields(raw, required, {})

    return check


def _agentic_block(raw: Any) -> bool:
    if not _fields(raw, {"search-space": _list_of(_agentic_space)}, {"dram-utilization": _share}):
        return False
    dram = any(entry.get("kv-offloading") == "dram" for entry in raw["search-space"])
    return not (dram and raw.get("dram-utilization") is None)


def _share(value: Any) -> bool:
    return type(value) in (int, float) and 0 < value <= 1


def _search_entries(scenarios: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for name in ("fixed-seq-len", "agentic-coding"):
        for block in scenarios.get(name) or ():
            yield from block["search-space"]


def plainly_valid(raw: Any) -> bool:
    """True only for a master-config entry the schema surely accepts."""
    if type(raw) is not dict:
        return False
    multinode = bool(raw.get("multinode"))
    space = _multi_space if multinode else _single_space
    scenarios: dict[str, Check] = {
        "fixed-seq-len": lambda v: _blocks(v, _fixed_block(space)),
        "agentic-coding": lambda v: _blocks(v, _agentic_block),
    }
    required: dict[str, Check] = {
        name: _str for name in ("image", "model", "model-prefix", "precision", "framework",
                                "runner")
    }  # fmt: skip
    required["multinode"] = (lambda v: v is True) if multinode else (lambda v: v is False)
    required["scenarios"] = lambda v: _fields(v, {}, scenarios)
    optional: dict[str, Check] = {"router": _router}
    if multinode:
        optional.update({"disagg": _bool, "kv-p2p-transfer": _text})
    else:
        optional["disagg"] = lambda v: v is False
    if not _fields(raw, required, optional):
        return False
    return _entry_rules(raw, multinode)


def _entry_rules(raw: dict[str, Any], multinode: bool) -> bool:
    scenarios = raw["scenarios"]
    if not scenarios.get("fixed-seq-len") and not scenarios.get("agentic-coding"):
        return False  # at least one scenario type
    if scenarios.get("agentic-coding") and not raw["runner"].startswith("cluster:"):
        return False
    entries = list(_search_entries(scenarios))
    top_transfer = raw.get("kv-p2p-transfer")
    for key, top in (("router", raw.get("router")), ("kv-p2p-transfer", top_transfer)):
        if top is not None and any(entry.get(key) is not None for entry in entries):
            return False  # declared both at the top and in a search-space entry
    if not multinode and any(entry.get("kv-p2p-transfer") for entry in entries):
        return False
    if (
        raw.get("disagg", False)
        and top_transfer is None
        and (not entries or any(entry.get("kv-p2p-transfer") is None for entry in entries))
    ):
        return False
    for block in scenarios.get("agentic-coding") or ():
        for entry in block["search-space"]:
            worker_style = entry.get("tp") is None
            if multinode != worker_style:
                return False
    return True
