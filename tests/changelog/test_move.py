"""move_inserted: entries a change inserted between history's entries go to
the end, every block's bytes unchanged, and nothing else is ever "repaired"."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from governance.changelog.move import move_inserted
from governance.changelog.rules import CheckMode, check
from tests.changelog.test_edit import POLICY, entry, link, log

HISTORY = [entry(f"k{i}", link(i + 1)) for i in range(4)]
BASE = log(*HISTORY)


def test_an_inserted_entry_moves_to_the_end_with_its_bytes() -> None:
    new = entry("new")
    head = log(HISTORY[0], HISTORY[1], new, HISTORY[2], HISTORY[3])
    assert not check(
        BASE, head, POLICY, CheckMode(), path="perf-changelog.yaml"
    ).ok  # GOV302 as it stands
    repaired, moved = move_inserted(BASE, head)  # type: ignore[misc]
    assert repaired == log(BASE, new)
    assert [(m.line, m.new_line) for m in moved] == [
        (head[: head.index(new)].count(b"\n") + 1, BASE.count(b"\n") + 2)
    ]
    assert check(BASE, repaired, POLICY, CheckMode(), path="perf-changelog.yaml").ok


def test_inserted_and_appended_entries_keep_their_order() -> None:
    first, second, last = entry("one"), entry("two"), entry("three")
    head = log(HISTORY[0], first, HISTORY[1], HISTORY[2], second, HISTORY[3], last)
    repaired, moved = move_inserted(BASE, head)  # type: ignore[misc]
    assert repaired == log(BASE, first, second, last) and len(moved) == 2


def test_anything_but_an_insertion_is_left_alone() -> None:
    assert move_inserted(BASE, log(BASE, entry("end"))) is None  # a plain append
    edited = log(HISTORY[0], entry("new"), HISTORY[1].replace(b"change", b"chang"), *HISTORY[2:])
    assert move_inserted(BASE, edited) is None  # history edited too
    reordered = log(HISTORY[1], HISTORY[0], entry("new"), *HISTORY[2:])
    assert move_inserted(BASE, reordered) is None
    spaced = log(HISTORY[0], entry("new"), HISTORY[1] + b"\n", *HISTORY[2:])
    assert move_inserted(BASE, spaced) is None  # a history separator changed


@given(
    st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=4),
    st.integers(min_value=0, max_value=2),
)
def test_property_any_insertion_repairs_to_base_plus_the_entries(
    positions: list[int], appended: int
) -> None:
    blocks = list(HISTORY)
    added = []
    for n, position in enumerate(sorted(positions, reverse=True)):
        new = entry(f"new{n}")
        blocks.insert(position, new)  # before history entry `position` (never at the end)
    order = [b for b in blocks if b not in HISTORY]
    added.extend(order)
    tail = [entry(f"tail{n}") for n in range(appended)]
    head = log(*blocks, *tail)
    repaired, moved = move_inserted(BASE, head)  # type: ignore[misc]
    assert repaired == log(BASE, *added, *tail)
    assert len(moved) == len(added)
    assert check(BASE, repaired, POLICY, CheckMode(), path="perf-changelog.yaml").ok
