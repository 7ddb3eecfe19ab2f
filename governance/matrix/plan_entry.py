"""A changelog entry as the plan reads it: plain data, no pydantic (pure).

`additions.validate_entries` builds one per appended entry. A plainly valid
entry (`changelog.entry_fields.plainly_valid`: kebab-case keys, exact types)
is read straight from its YAML value; any other goes through the strict
pydantic schema (`model.SweepEntry`), which words and locates its faults,
and is built from the validated model. Either way the plan sees the same
fields, and `dump` gives what `SweepEntry.dump` gives (tests hold the two
together on generated entries and on the real changelog).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FIXED = "fixed-seq-len"
AGENTIC = "agentic-coding"
SCENARIO_KINDS: tuple[str, str] = (FIXED, AGENTIC)


@dataclass(frozen=True, slots=True)
class PlanEntry:
    config_keys: list[str]
    description: list[str]
    pr_link: str
    evals_only: bool = False
    all_evals: bool = False
    append_only: bool = False
    eval_min_prefill_ep: int | None = None
    scenario_type: list[str] | None = None

    @classmethod
    def from_plain(cls, raw: dict[str, Any]) -> PlanEntry:
        """From an entry `plainly_valid` accepted (kebab-case keys, exact types)."""
        scenario_type = raw.get("scenario-type")
        return cls(
            config_keys=list(raw["config-keys"]),
            description=list(raw["description"]),
            pr_link=raw["pr-link"],
            evals_only=raw.get("evals-only", False),
            all_evals=raw.get("all-evals", False),
            append_only=raw.get("append-only", False),
            eval_min_prefill_ep=raw.get("eval-min-prefill-ep"),
            scenario_type=None if scenario_type is None else list(scenario_type),
        )

    @classmethod
    def from_model(cls, model: Any) -> PlanEntry:
        """From a validated `model.SweepEntry`."""
        return cls(**{name: getattr(model, name) for name in cls.__slots__})

    @property
    def scenarios(self) -> tuple[str, ...]:
        """Scenario kinds this entry covers, fixed-seq-len first."""
        chosen = set(self.scenario_type or SCENARIO_KINDS)
        return tuple(kind for kind in SCENARIO_KINDS if kind in chosen)

    def dump(self) -> dict[str, Any]:
        """The entry in kebab-case, None fields left out, in field order."""
        out: dict[str, Any] = {}
        for name in self.__slots__:
            value = getattr(self, name)
            if value is not None:
                out[name.replace("_", "-")] = list(value) if isinstance(value, list) else value
        return out
