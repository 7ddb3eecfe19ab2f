"""GOV711 answers remembered by bytes (`check.syntax`): a second look at the
same bytes does not ask bash (nothing is written where bash would read it),
gives the same findings, and other bytes are asked afresh."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from governance.check import syntax
from governance.core.blockcache import BlockPack

BROKEN = b"#!/usr/bin/env bash\nif true; then\n  echo hi\n"  # no `fi`
GOOD = b"#!/usr/bin/env bash\necho hi\n"


def _on_disk(tmp_path: Path, data: bytes, asked: list[bytes]) -> Callable[[], Path]:
    def write() -> Path:
        asked.append(data)
        file = tmp_path / "script.sh"
        file.write_bytes(data)
        return file

    return write


@pytest.mark.parametrize("data", [BROKEN, GOOD])
def test_a_second_look_is_answered_from_the_cache(tmp_path: Path, data: bytes) -> None:
    pack = BlockPack(tmp_path / "cache")
    asked: list[bytes] = []
    first = syntax.violations("b/s.sh", _on_disk(tmp_path, data, asked), data, pack)
    again = syntax.violations("b/s.sh", _on_disk(tmp_path, data, asked), data, pack)
    assert asked == [data]  # bash read it once
    assert again == first
    fresh = syntax.violations("b/s.sh", _on_disk(tmp_path, data, asked), data, None)
    assert fresh == first and asked == [data, data]  # no cache: asked again, same answer
    if data is BROKEN:
        assert [v.code for v in first] == ["GOV711"] and first[0].line > 0
    else:
        assert first == []


def test_other_bytes_are_asked_again(tmp_path: Path) -> None:
    pack = BlockPack(tmp_path / "cache")
    asked: list[bytes] = []
    syntax.violations("b/s.sh", _on_disk(tmp_path, GOOD, asked), GOOD, pack)
    found = syntax.violations("b/s.sh", _on_disk(tmp_path, BROKEN, asked), BROKEN, pack)
    assert asked == [GOOD, BROKEN] and [v.code for v in found] == ["GOV711"]


def test_a_stored_value_that_is_not_an_answer_is_a_miss(tmp_path: Path) -> None:
    assert syntax._remembered([0, [[1, "x"]]]) == (0, [(1, "x")])
    for junk in (None, "x", [0], [True, []], [0, [[1]]], [0, [["1", "x"]]], [0, "x"]):
        assert syntax._remembered(junk) is None, junk
