"""The plain row normaliser (`row_fields`) against the output models
(`output`): the tables are the models' fields, and on every row the corpus
generates, and on rows broken on purpose, the two agree or the plain one
steps aside."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from governance.matrix import output, row_fields
from governance.matrix.catalog import Catalog
from governance.matrix.expand import EvalMode, generate
from governance.matrix.row_fields import REQUIRED, normalise_row, plain_row, row_kind

from .corpus import GOLDENS

TABLES: list[tuple[tuple[row_fields.Field, ...], type[BaseModel]]] = [
    (row_fields.SINGLE_NODE, output.SingleNodeRow),
    (row_fields.MULTI_NODE, output.MultiNodeRow),
    (row_fields.AGENTIC_ROW, output.AgenticRow),
    (row_fields.MULTI_NODE_AGENTIC, output.MultiNodeAgenticRow),
    (row_fields.WORKER, output.OutWorker),
    (row_fields.ROUTER, output.OutRouter),
    (row_fields.BACKEND, output.OutBackend),
]
_NESTED = {output.OutWorker: "worker", output.OutRouter: "router", output.OutBackend: "backend"}


def _kind(annotation: Any) -> str:
    args = typing.get_args(annotation)
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        (inner,) = [a for a in args if a is not type(None)]
        return _kind(inner) + "?"
    if typing.get_origin(annotation) is typing.Literal:
        assert args == ("agentic-coding",)
        return "agentic"
    if typing.get_origin(annotation) is list:
        return f"list[{args[0].__name__}]"
    return _NESTED.get(annotation) or annotation.__name__


def _derived(model: type[BaseModel]) -> list[row_fields.Field]:
    out = []
    for name, info in model.model_fields.items():
        if info.is_required():
            default: Any = REQUIRED
        elif info.default_factory is not None:
            default = tuple(info.default_factory())  # type: ignore[call-arg]
        else:
            default = info.default
        out.append((info.alias or name, _kind(info.annotation), default))
    return out


@pytest.mark.parametrize(("table", "model"), TABLES, ids=[m.__name__ for _t, m in TABLES])
def test_the_tables_are_the_models_fields(
    table: tuple[row_fields.Field, ...], model: type[BaseModel]
) -> None:
    assert list(table) == _derived(model)


def _agree(row: dict[str, Any]) -> None:
    """The plain normaliser gives the model's dump (key order included) or steps aside."""
    plain = plain_row(row)
    try:
        expected = output.model_row(row, row_kind(row))
    except ValidationError:
        assert plain is None, row
        return
    if plain is not None:
        assert json.dumps(plain) == json.dumps(expected), row


@pytest.mark.corpus
def test_every_row_of_corpus_main_normalises_as_the_models_do(
    catalog_at: Callable[[str], Catalog],
) -> None:
    """Every key of corpus main in every eval mode (the rows gov's plan
    normalises): the plain way vouches for each, with the models' bytes."""
    catalog = catalog_at("main")
    count = 0
    for mode in EvalMode:
        for row in generate(catalog, ["*"], mode):
            assert plain_row(row) is not None, row
            assert json.dumps(normalise_row(row)) == json.dumps(
                output.model_row(row, row_kind(row))
            )
            count += 1
    assert count > 1000


@pytest.mark.corpus
def test_the_reference_rows_normalise_as_the_models_do() -> None:
    """Rows as the reference generator orders them (every seventh key's goldens)."""
    paths = sorted((GOLDENS / "keys").glob("*.json"))
    if not paths:
        pytest.skip(f"per-key goldens not available under {GOLDENS.resolve()}")
    for path in paths[::7]:
        for rows in json.loads(path.read_text("utf-8"))["modes"].values():
            for row in rows:
                assert plain_row(row) is not None, row
                _agree(row)


_SAMPLE = {
    "image": "img:1", "model": "m", "model-prefix": "m", "precision": "fp8",
    "framework": "vllm", "spec-decoding": "none", "runner": "h200", "isl": 1024,
    "osl": 1024, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1,
    "dp-attn": False, "conc": 4, "max-model-len": 2048, "exp-name": "x",
    "disagg": False, "run-eval": False,
}  # fmt: skip
_WORKER_SAMPLE = {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True}
_MULTI = {
    **{k: v for k, v in _SAMPLE.items() if k not in ("tp", "pp", "dcp-size", "pcp-size", "ep",
                                                     "dp-attn", "conc")},
    "prefill": _WORKER_SAMPLE, "decode": dict(_WORKER_SAMPLE), "conc": [1, 2],
}  # fmt: skip
_ODD = st.one_of(
    st.none(), st.booleans(), st.integers(-1, 3), st.floats(allow_nan=False, width=16),
    st.text(max_size=3), st.lists(st.integers(0, 3), max_size=2), st.just("agentic-coding"),
    st.just({"name": "r", "version": "1"}), st.just({"name": "r"}),
)  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(
    base=st.sampled_from([_SAMPLE, _MULTI]),
    changes=st.dictionaries(
        st.sampled_from([*_SAMPLE, *_MULTI, "router", "kv-offload-backend", "scenario-type",
                         "eval-conc", "total-cpu-dram-gb", "duration", "kv-offloading",
                         "recipe-fingerprint", "unknown"]),
        _ODD, max_size=3,
    ),
    dropped=st.sets(st.sampled_from(sorted(_MULTI)), max_size=2),
)  # fmt: skip
def test_broken_rows_are_never_vouched_for_wrongly(
    base: dict[str, Any], changes: dict[str, Any], dropped: set[str]
) -> None:
    row = {k: v for k, v in {**base, **changes}.items() if k not in dropped}
    _agree(row)
