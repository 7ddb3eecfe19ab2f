"""Output models: normalised matrix rows and the plan document (docs/matrix.md).

Field order here *is* the output key order; None-valued optionals are omitted.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from governance.matrix.model import SweepEntry, kebab


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=False)

    def dump(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


class OutRouter(_Out):
    name: str
    version: str


class OutBackend(_Out):
    name: str
    version: str | None = None


class OutWorker(_Out):
    num_worker: int
    tp: int
    pp: int = 1
    dcp_size: int = 1
    pcp_size: int = 1
    ep: int
    dp_attn: bool
    hardware: str | None = None
    additional_settings: list[str] = Field(default_factory=list)


class _RowHead(_Out):
    """The fields every row starts with, in this order."""

    image: str
    model: str
    model_prefix: str
    precision: str
    framework: str


class SingleNodeRow(_RowHead):
    spec_decoding: str
    runner: str
    isl: int
    osl: int
    tp: int
    pp: int
    dcp_size: int
    pcp_size: int
    ep: int
    dp_attn: bool
    conc: int
    max_model_len: int
    exp_name: str
    disagg: bool
    run_eval: bool
    eval_only: bool = False
    router: OutRouter | None = None
    recipe_fingerprint: str | None = None


class MultiNodeRow(_RowHead):
    spec_decoding: str
    runner: str
    isl: int
    osl: int
    prefill: OutWorker
    decode: OutWorker
    conc: list[int]
    max_model_len: int
    exp_name: str
    disagg: bool
    run_eval: bool
    eval_only: bool = False
    eval_conc: int | None = None
    eval_all_concs: bool = False
    router: OutRouter | None = None
    kv_p2p_transfer: str | None = None
    recipe_fingerprint: str | None = None


class AgenticRow(_RowHead):
    runner: str
    tp: int
    pp: int
    dcp_size: int
    pcp_size: int
    ep: int
    dp_attn: bool
    spec_decoding: str
    conc: int
    kv_offloading: str
    kv_offload_backend: OutBackend | None = None
    router: OutRouter | None = None
    total_cpu_dram_gb: int
    duration: int
    exp_name: str
    scenario_type: Literal["agentic-coding"]
    run_eval: bool | None = None
    eval_only: bool | None = None
    recipe_fingerprint: str | None = None


class MultiNodeAgenticRow(_RowHead):
    spec_decoding: str
    runner: str
    prefill: OutWorker
    decode: OutWorker
    conc: list[int]
    kv_offloading: str
    kv_offload_backend: OutBackend | None = None
    router: OutRouter | None = None
    kv_p2p_transfer: str | None = None
    total_cpu_dram_gb: int
    duration: int
    exp_name: str
    disagg: bool
    scenario_type: Literal["agentic-coding"]
    run_eval: bool | None = None
    eval_only: bool | None = None
    eval_conc: int | None = None
    recipe_fingerprint: str | None = None


class ChangelogMetadata(BaseModel):
    model_config = ConfigDict(extra="forbid")
    base_ref: str
    head_ref: str
    entries: list[SweepEntry]


class PlanDocument(BaseModel):
    """The reference-shaped sweep document (docs/matrix.md). Used for the JSON schema;
    `plan` builds the dict directly with the row models above."""

    model_config = ConfigDict(extra="forbid")
    single_node: dict[str, list[SingleNodeRow | AgenticRow]]
    multi_node: dict[str, list[MultiNodeRow | MultiNodeAgenticRow]]
    evals: list[SingleNodeRow]
    agentic_evals: list[AgenticRow]
    multinode_evals: list[MultiNodeRow]
    multinode_agentic_evals: list[MultiNodeAgenticRow]
    changelog_metadata: ChangelogMetadata


_MODELS: dict[tuple[bool, bool], type[_RowHead]] = {
    (False, False): SingleNodeRow,
    (False, True): MultiNodeRow,
    (True, False): AgenticRow,
    (True, True): MultiNodeAgenticRow,
}


def model_row(row: dict[str, Any], kind: tuple[bool, bool]) -> dict[str, Any]:
    """A row through its output model; `kind` is `row_fields.row_kind(row)`
    (`row_fields.normalise_row` tries the plain way first)."""
    return _MODELS[kind].model_validate(row).dump()
