"""Master-config entries: the pydantic schemas of one entry of
`configs/*-master.yaml` (single-node or multi-node), its search spaces,
scenario blocks and component metadata, and the reference's exact
validation messages. See docs/matrix-differences.md for where gov is stricter.
"""

from typing import Annotated, Any, Literal, Self

from pydantic import Field, StrictBool, StrictInt, StrictStr, field_validator, model_validator

from governance.matrix.model import (
    NonEmptyStr,
    PositiveStrictInt,
    SpecDecoding,
    StrictModel,
)

# -- validation messages shared with tests and docs (exact reference texts) ----

MSG_CONC_BOTH = (
    "Cannot specify both 'conc-list' list and 'conc-start'/'conc-end'. "
    "Use either a list or a range, not both."
)
MSG_CONC_NEITHER = "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'."
MSG_CONC_RANGE_POSITIVE = "Input 'conc-start' and 'conc-end' must be greater than 0."
MSG_CONC_LIST_POSITIVE = "Input 'conc-list' entries must be greater than 0."
MSG_IMAGE_VERSION = (
    "component version must be a release, package version, or source commit, not an image reference"
)


def _check_concurrency(start: int | None, end: int | None, values: list[int] | None) -> None:
    """Concurrency rules, in the reference's order (docs/matrix.md, 'Entry schema')."""
    has_range = start is not None and end is not None
    has_list = bool(values)
    if has_range and has_list:
        raise ValueError(MSG_CONC_BOTH)
    if not has_range and not has_list:
        raise ValueError(MSG_CONC_NEITHER)
    if has_range:
        assert start is not None and end is not None
        if start <= 0 or end <= 0:
            raise ValueError(MSG_CONC_RANGE_POSITIVE)
        if start > end:
            raise ValueError(f"'conc-start' ({start}) must be <= 'conc-end' ({end}).")
    elif any(value <= 0 for value in values or ()):
        raise ValueError(MSG_CONC_LIST_POSITIVE)


def _check_tp_dcp(tp: int, dcp_size: int | None) -> None:
    dcp = 1 if dcp_size is None else dcp_size
    if tp % dcp != 0:
        raise ValueError(f"'tp' ({tp}) must be divisible by 'dcp-size' ({dcp})")


def _check_version(value: str | None) -> str | None:
    if value is not None and value.startswith("image:"):
        raise ValueError(MSG_IMAGE_VERSION)
    return value


# -- component metadata --------------------------------------------------------


class Router(StrictModel):
    name: NonEmptyStr
    version: NonEmptyStr

    @field_validator("version")
    @classmethod
    def _no_image_version(cls, value: str | None) -> str | None:
        return _check_version(value)


class KvOffloadBackend(StrictModel):
    name: NonEmptyStr
    version: NonEmptyStr | None = None

    @field_validator("version")
    @classmethod
    def _no_image_version(cls, value: str | None) -> str | None:
        return _check_version(value)


# -- search-space entries ------------------------------------------------------


class _Concurrency(StrictModel):
    conc_start: StrictInt | None = None
    conc_end: StrictInt | None = None
    conc_list: list[StrictInt] | None = None


class Worker(StrictModel):
    num_worker: StrictInt
    tp: StrictInt
    pp: PositiveStrictInt = 1
    dcp_size: PositiveStrictInt = 1
    pcp_size: PositiveStrictInt = 1
    ep: StrictInt
    dp_attn: StrictBool
    hardware: NonEmptyStr | None = None
    additional_settings: list[StrictStr] | None = None

    @model_validator(mode="after")
    def _topology(self) -> Self:
        _check_tp_dcp(self.tp, self.dcp_size)
        return self


def _check_hardware_pairing(prefill: Worker, decode: Worker) -> None:
    if bool(prefill.hardware) != bool(decode.hardware):
        raise ValueError("'hardware' must be specified for both 'prefill' and 'decode', or neither")


class SingleNodeSearchSpace(_Concurrency):
    tp: StrictInt
    pp: PositiveStrictInt = 1
    dcp_size: PositiveStrictInt = 1
    pcp_size: PositiveStrictInt = 1
    ep: StrictInt | None = None
    dp_attn: StrictBool | None = None
    spec_decoding: SpecDecoding = "none"
    router: Router | None = None

    @model_validator(mode="after")
    def _rules(self) -> Self:
        _check_concurrency(self.conc_start, self.conc_end, self.conc_list)
        _check_tp_dcp(self.tp, self.dcp_size)
        return self


class MultiNodeSearchSpace(_Concurrency):
    spec_decoding: SpecDecoding = "none"
    prefill: Worker
    decode: Worker
    router: Router | None = None
    kv_p2p_transfer: NonEmptyStr | None = None

    @model_validator(mode="after")
    def _rules(self) -> Self:
        _check_concurrency(self.conc_start, self.conc_end, self.conc_list)
        _check_hardware_pairing(self.prefill, self.decode)
        return self


class AgenticSearchSpace(_Concurrency):
    tp: StrictInt | None = None
    pp: PositiveStrictInt = 1
    dcp_size: PositiveStrictInt = 1
    pcp_size: PositiveStrictInt = 1
    ep: StrictInt | None = None
    dp_attn: StrictBool | None = None
    spec_decoding: SpecDecoding = "none"
    prefill: Worker | None = None
    decode: Worker | None = None
    kv_offloading: Literal["none", "dram"] | None = None
    kv_offload_backend: KvOffloadBackend | None = None
    router: Router | None = None
    kv_p2p_transfer: NonEmptyStr | None = None

    @property
    def is_worker_style(self) -> bool:
        return self.tp is None

    @model_validator(mode="after")
    def _rules(self) -> Self:
        _check_concurrency(self.conc_start, self.conc_end, self.conc_list)
        if self.kv_offload_backend is not None:
            if self.kv_offloading is None:
                raise ValueError("kv-offload-backend requires kv-offloading")
            if self.kv_offloading == "none":
                raise ValueError(
                    "kv-offload-backend can only be set when kv-offloading is not 'none'"
                )
        elif self.kv_offloading == "dram":
            raise ValueError("kv-offload-backend is required when kv-offloading is 'dram'")
        tp_style = self.tp is not None and self.prefill is None and self.decode is None
        worker_style = self.tp is None and self.prefill is not None and self.decode is not None
        if not (tp_style or worker_style):
            raise ValueError(
                "Agentic search-space entries must specify either tp or both prefill and decode"
            )
        if tp_style:
            if self.kv_offloading is None:
                raise ValueError(
                    "Single-node agentic search-space entries must specify kv-offloading"
                )
            assert self.tp is not None
            _check_tp_dcp(self.tp, self.dcp_size)
        else:
            if {"pp", "dcp_size", "pcp_size"} & self.model_fields_set:
                raise ValueError(
                    "Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', "
                    "'pcp-size'"
                )
            assert self.prefill is not None and self.decode is not None
            _check_hardware_pairing(self.prefill, self.decode)
        return self


# -- scenario blocks ----------------------------------------------------------


class SingleNodeFixedBlock(StrictModel):
    isl: StrictInt
    osl: StrictInt
    search_space: list[SingleNodeSearchSpace]


class MultiNodeFixedBlock(StrictModel):
    isl: StrictInt
    osl: StrictInt
    search_space: list[MultiNodeSearchSpace]


class AgenticBlock(StrictModel):
    search_space: list[AgenticSearchSpace]
    dram_utilization: Annotated[float, Field(gt=0, le=1)] | None = None

    @model_validator(mode="after")
    def _dram(self) -> Self:
        uses_dram = any(entry.kv_offloading == "dram" for entry in self.search_space)
        if uses_dram and self.dram_utilization is None:
            raise ValueError(
                "kv-offloading='dram' requires dram-utilization with runner hardware metadata"
            )
        return self


class _Scenarios(StrictModel):
    agentic_coding: list[AgenticBlock] | None = None

    def _require_one(self, fixed: list[Any] | None) -> None:
        if not fixed and not self.agentic_coding:
            raise ValueError("At least one scenario type must be specified")


class SingleNodeScenarios(_Scenarios):
    fixed_seq_len: list[SingleNodeFixedBlock] | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        self._require_one(self.fixed_seq_len)
        return self


class MultiNodeScenarios(_Scenarios):
    fixed_seq_len: list[MultiNodeFixedBlock] | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        self._require_one(self.fixed_seq_len)
        return self


# -- master-config entries ----------------------------------------------------


class _EntryBase(StrictModel):
    image: StrictStr
    model: StrictStr
    model_prefix: StrictStr
    precision: StrictStr
    framework: StrictStr
    runner: StrictStr
    router: Router | None = None

    def _search_entries(self) -> list[Any]:
        scenarios = self.scenarios  # type: ignore[attr-defined]
        entries: list[Any] = []
        for block in scenarios.fixed_seq_len or ():
            entries.extend(block.search_space)
        for block in scenarios.agentic_coding or ():
            entries.extend(block.search_space)
        return entries

    def _entry_rules(self, multinode: bool) -> None:
        """The entry rules, in the reference's order (docs/matrix.md, 'Entry schema')."""
        if self.scenarios.agentic_coding and not self.runner.startswith("cluster:"):  # type: ignore[attr-defined]
            raise ValueError(
                "Agentic master configs must use a 'cluster:<name>' runner so every point runs "
                "on one exact hardware fleet."
            )
        entries = self._search_entries()
        top_transfer = getattr(self, "kv_p2p_transfer", None)
        for field, top in (("router", self.router), ("kv-p2p-transfer", top_transfer)):
            attr = field.replace("-", "_")
            if top is not None and any(getattr(e, attr, None) is not None for e in entries):
                raise ValueError(
                    f"{field} must be declared either at the top level or in search-space "
                    "entries, not both"
                )
        if not multinode and any(getattr(e, "kv_p2p_transfer", None) for e in entries):
            raise ValueError("kv-p2p-transfer is only valid when multinode=true")
        if (
            getattr(self, "disagg", False)
            and top_transfer is None
            and (not entries or any(getattr(e, "kv_p2p_transfer", None) is None for e in entries))
        ):
            raise ValueError(
                "disagg=true requires kv-p2p-transfer at the top level or in every "
                "search-space entry"
            )
        # gov-only: the reference crashes on a style/multinode mismatch
        # (docs/matrix-differences.md).
        for block in self.scenarios.agentic_coding or ():  # type: ignore[attr-defined]
            for entry in block.search_space:
                if multinode and not entry.is_worker_style:
                    raise ValueError(
                        "multinode=true agentic search-space entries must use prefill/decode, "
                        "not tp"
                    )
                if not multinode and entry.is_worker_style:
                    raise ValueError(
                        "multinode=false agentic search-space entries must use tp, "
                        "not prefill/decode"
                    )


class SingleNodeMasterConfigEntry(_EntryBase):
    multinode: Literal[False]
    disagg: Literal[False] = False
    scenarios: SingleNodeScenarios

    @model_validator(mode="after")
    def _rules(self) -> Self:
        self._entry_rules(multinode=False)
        return self


class MultiNodeMasterConfigEntry(_EntryBase):
    multinode: Literal[True]
    disagg: StrictBool = False
    kv_p2p_transfer: NonEmptyStr | None = None
    scenarios: MultiNodeScenarios

    @model_validator(mode="after")
    def _rules(self) -> Self:
        self._entry_rules(multinode=True)
        return self


def entry_schema(raw: Any) -> type[_EntryBase]:
    """The schema is chosen by the truthiness of `multinode` (2)."""
    if isinstance(raw, dict) and raw.get("multinode"):
        return MultiNodeMasterConfigEntry
    return SingleNodeMasterConfigEntry
