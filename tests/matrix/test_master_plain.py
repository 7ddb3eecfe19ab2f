"""The plain case of a master-config entry (`master_plain`) against the
pydantic schema (`master_entry`): on every distinct block of the corpus
history and on blocks broken on purpose, it never accepts what the schema
rejects, and it accepts every real block the schema accepts."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from governance.matrix.catalog import Catalog, SourceFile
from governance.matrix.master_entry import entry_schema
from governance.matrix.master_plain import plainly_valid
from tests.harness import MASTER_FILES, RUNNER_FILE


def schema_accepts(raw: Any) -> bool:
    try:
        entry_schema(raw).model_validate(raw)
    except ValidationError:
        return False
    return True


def _show(repo: Path, rev: str, path: str) -> bytes | None:
    done = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, capture_output=True)
    return done.stdout if done.returncode == 0 else None


@pytest.mark.corpus
def test_every_block_of_the_corpus_history_is_judged_as_the_schema_does(
    corpus_clone: Path,
) -> None:
    """Every third change of configs/ on every branch (main and 400 PRs):
    plain and schema agree on every distinct block."""
    revs = subprocess.run(
        ["git", "rev-list", "--all", "--", "configs"],
        cwd=corpus_clone, check=True, capture_output=True, text=True,
    ).stdout.split()[::3]  # fmt: skip
    seen: set[str] = set()
    agree = {True: 0, False: 0}
    for rev in revs:
        masters = [SourceFile(path, _show(corpus_clone, rev, path)) for path in MASTER_FILES]
        catalog = Catalog(masters, SourceFile(RUNNER_FILE, _show(corpus_clone, rev, RUNNER_FILE)))
        for key in catalog.keys:
            text = catalog.block_text(key)
            if text is None or text in seen:
                continue
            seen.add(text)
            raw = catalog.raw(key)
            verdict = schema_accepts(raw)
            assert plainly_valid(raw) == verdict, (rev, key)
            agree[verdict] += 1
    assert agree[True] > 500 and agree[False] > 50, agree


_WORKER = {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True}
SEEDS: list[dict[str, Any]] = [
    {
        "image": "img:1", "model": "m", "model-prefix": "m", "precision": "fp8",
        "framework": "vllm", "runner": "h200", "multinode": False,
        "scenarios": {"fixed-seq-len": [{"isl": 1024, "osl": 1024, "search-space": [
            {"tp": 8, "conc-start": 4, "conc-end": 64, "dcp-size": 2, "spec-decoding": "mtp"},
            {"tp": 4, "ep": 4, "dp-attn": True, "conc-list": [1, 2],
             "router": {"name": "r", "version": "1.0"}},
        ]}]},
    },
    {
        "image": "img:1", "model": "m", "model-prefix": "m", "precision": "fp4",
        "framework": "sglang", "runner": "gb200", "multinode": True, "disagg": True,
        "kv-p2p-transfer": "nixl",
        "scenarios": {"fixed-seq-len": [{"isl": 8192, "osl": 1024, "search-space": [
            {"conc-list": [4, 8], "prefill": dict(_WORKER, hardware="gb200"),
             "decode": dict(_WORKER, **{"num-worker": 2, "hardware": "gb300",
                                        "additional-settings": ["A=1"]})},
        ]}]},
    },
    {
        "image": "img:1", "model": "m", "model-prefix": "m", "precision": "fp8",
        "framework": "vllm", "runner": "cluster:mi355x", "multinode": False,
        "scenarios": {"agentic-coding": [{"dram-utilization": 0.5, "search-space": [
            {"tp": 8, "conc-list": [1], "kv-offloading": "dram",
             "kv-offload-backend": {"name": "lmcache", "version": "0.3"}},
            {"tp": 8, "conc-start": 1, "conc-end": 2, "kv-offloading": "none"},
        ]}]},
    },
    {
        "image": "img:1", "model": "m", "model-prefix": "m", "precision": "fp8",
        "framework": "dynamo", "runner": "cluster:gb200", "multinode": True,
        "router": {"name": "dynamo", "version": "0.5"},
        "scenarios": {"agentic-coding": [{"search-space": [
            {"conc-list": [8], "prefill": dict(_WORKER), "decode": dict(_WORKER),
             "kv-p2p-transfer": "nixl"},
        ]}]},
    },
]  # fmt: skip
_ATOMS = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 9), st.sampled_from([0.5, 1.5, 1.0]),
    st.sampled_from(["", "none", "dram", "mtp", "cluster:x", "image:1", "nixl", "x"]),
    st.just([]), st.just([1, 2]), st.just({}), st.just({"name": "r", "version": "1"}),
    st.just(dict(_WORKER)),
)  # fmt: skip
_KEYS = st.sampled_from([
    "tp", "ep", "pp", "dcp-size", "pcp-size", "dp-attn", "conc-start", "conc-end", "conc-list",
    "router", "kv-p2p-transfer", "disagg", "multinode", "hardware", "kv-offloading",
    "kv-offload-backend", "prefill", "decode", "dram-utilization", "fixed-seq-len",
    "agentic-coding", "spec-decoding", "runner", "version", "unknown",
])  # fmt: skip


def _containers(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, dict | list):
        out.append(value)
        for child in value.values() if isinstance(value, dict) else value:
            _containers(child, out)
    return out


@settings(max_examples=1500, deadline=None)
@given(seed=st.sampled_from(range(len(SEEDS))), data=st.data())
def test_a_broken_block_is_never_accepted_plainly(seed: int, data: st.DataObject) -> None:
    raw = copy.deepcopy(SEEDS[seed])
    for _ in range(data.draw(st.integers(1, 3))):
        target = data.draw(st.sampled_from(_containers(raw, [])))
        if isinstance(target, list):
            if target and data.draw(st.booleans()):
                target.pop(data.draw(st.integers(0, len(target) - 1)))
            else:
                target.append(copy.deepcopy(data.draw(_ATOMS)))
        elif target and data.draw(st.booleans()):
            del target[data.draw(st.sampled_from(sorted(target)))]
        else:
            target[data.draw(_KEYS)] = copy.deepcopy(data.draw(_ATOMS))
    if plainly_valid(raw):
        assert schema_accepts(raw), raw


@pytest.mark.parametrize("seed", range(len(SEEDS)))
def test_the_seeds_are_valid_both_ways(seed: int) -> None:
    assert schema_accepts(SEEDS[seed]) and plainly_valid(SEEDS[seed])
