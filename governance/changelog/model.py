"""The schema of one changelog entry (docs/rules.md, 'The changelog file')."""

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

ScenarioType = Literal["fixed-seq-len", "agentic-coding"]


class ChangelogEntry(BaseModel):
    """One appended item of `perf-changelog.yaml`.

    Keys are kebab-case; snake_case names are also accepted by the model
    (population by name) for compatibility with the reference, and gov flags
    them on newly appended entries with its own rule (GOV207).
    """

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        title="perf-changelog.yaml entry",
    )

    config_keys: list[str] = Field(
        alias="config-keys",
        min_length=1,
        description="Master-config keys this change affects; `*` is a wildcard.",
    )
    description: list[str] = Field(min_length=1, description="Human-readable lines.")
    pr_link: str = Field(
        alias="pr-link",
        description="`XXX` until merge; then https://github.com/<org>/<repo>/pull/<N>.",
    )
    evals_only: bool = Field(default=False, alias="evals-only")
    all_evals: bool = Field(default=False, alias="all-evals")
    append_only: bool = Field(
        default=False,
        alias="append-only",
        description="Only newly generated points run and are appended to the latest curve.",
    )
    eval_min_prefill_ep: PositiveInt | None = Field(default=None, alias="eval-min-prefill-ep")
    scenario_type: list[ScenarioType] | None = Field(
        default=None, alias="scenario-type", min_length=1
    )

    @model_validator(mode="after")
    def _append_only_excludes_eval_selection(self) -> Self:
        if self.append_only and (
            self.evals_only or self.all_evals or self.eval_min_prefill_ep is not None
        ):
            raise ValueError(
                "append-only cannot be combined with eval selection fields "
                "(evals-only, all-evals, eval-min-prefill-ep)"
            )
        return self
