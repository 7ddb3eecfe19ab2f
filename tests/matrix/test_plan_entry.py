"""The plan's plain entry (`plan_entry.PlanEntry`) against the strict
pydantic schema (`model.SweepEntry`): the same fields, the same dump, and
the plain case never accepts what the schema rejects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from pydantic import ValidationError

from governance.changelog.entry_fields import plainly_valid
from governance.matrix.model import SweepEntry
from governance.matrix.plan_entry import SCENARIO_KINDS, PlanEntry
from tests.changelog.test_entry_fields import PLAIN_ENTRIES


def test_the_fields_are_the_schemas_in_its_order() -> None:
    assert list(SweepEntry.model_fields) == list(PlanEntry.__slots__)


@settings(max_examples=600, deadline=None)
@given(raw=PLAIN_ENTRIES)
def test_a_plain_entry_reads_as_the_schema_reads_it(raw: dict[str, Any]) -> None:
    try:
        model = SweepEntry.model_validate(raw)
    except ValidationError:
        assert not plainly_valid(raw), raw  # the plain case never accepts it
        return
    assert plainly_valid(raw), raw  # and covers every entry of this shape
    entry = PlanEntry.from_plain(raw)
    assert entry == PlanEntry.from_model(model)
    assert entry.dump() == model.dump()
    assert list(entry.dump()) == list(model.dump())  # key order too


@pytest.mark.parametrize(
    ("scenario_type", "expected"),
    [(None, SCENARIO_KINDS), (["agentic-coding"], ("agentic-coding",)),
     (["agentic-coding", "fixed-seq-len"], SCENARIO_KINDS)],
)  # fmt: skip
def test_scenarios_come_fixed_seq_len_first(
    scenario_type: list[str] | None, expected: tuple[str, ...]
) -> None:
    entry = PlanEntry(["k"], ["d"], "XXX", scenario_type=scenario_type)
    assert entry.scenarios == expected
