"""Pydantic schemas for the matrix engine: the strict base every input schema
shares, the runner file and the changelog's sweep entry. The master-config
entries are in `master_entry`, the output rows in `output`.

Input schemas reject unknown keys at every level. They only *validate*: rows
are generated from the raw YAML data (which keeps the user's key order), so
models here never need to round-trip values.

Scalars are strict (a quoted "8" is not an int, 1 is not a bool): the corpus
never relies on coercion and strictness turns odd inputs into clear errors.
Error locations (`loc`) use the YAML spellings because every field carries its
kebab-case alias; `catalog` maps them back to line/column.
"""

from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    model_validator,
)


def kebab(name: str) -> str:
    return name.replace("_", "-")


class StrictModel(BaseModel):
    """Unknown keys rejected, fields spelled in kebab-case as in the YAML."""

    model_config = ConfigDict(extra="forbid", alias_generator=kebab, populate_by_name=False)


PositiveStrictInt = Annotated[int, Field(strict=True, gt=0)]
NonEmptyStr = Annotated[str, Field(strict=True, min_length=1)]
SpecDecoding = Literal["mtp", "draft_model", "none"]
ScenarioKind = Literal["fixed-seq-len", "agentic-coding"]

# -- runner file -------------------------------------------------------------


class RunnerHardware(StrictModel):
    available_cpu_dram_mib: PositiveStrictInt
    gpus_per_node: PositiveStrictInt


class RunnerConfig(StrictModel):
    labels: dict[str, list[str]]
    hardware: dict[str, RunnerHardware] = Field(default_factory=dict)


# -- changelog sweep entry ---------------------------------------------------


# The plan reads entries as `plan_entry.PlanEntry`; this schema judges the
# ones that are not plainly valid, and describes them in the plan document.
class SweepEntry(StrictModel):
    """One perf-changelog entry as the processor reads it."""

    config_keys: Annotated[list[StrictStr], Field(min_length=1)]
    description: Annotated[list[StrictStr], Field(min_length=1)]
    pr_link: StrictStr
    evals_only: StrictBool = False
    all_evals: StrictBool = False
    append_only: StrictBool = False
    eval_min_prefill_ep: Annotated[int, Field(strict=True, ge=1)] | None = None
    scenario_type: Annotated[list[ScenarioKind], Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _append_only(self) -> Self:
        if self.append_only and (
            self.evals_only or self.all_evals or self.eval_min_prefill_ep is not None
        ):
            raise ValueError("append-only cannot be combined with eval selection fields")
        return self

    def dump(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)
