"""The two content-addressed stores: one JSON file per entry, and the SQLite
pack the parsed master-config blocks go to. Both give back what was put, and
both treat anything unreadable as a miss."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.core.blockcache import BlockCache, BlockPack

BLOCK = {"dsr1-fp8-h200-sglang": {"image": "img:1", "conc-list": [4, 8], "ok": True}}


@pytest.mark.parametrize("store", [BlockCache, BlockPack])
def test_an_entry_comes_back_equal_from_a_new_store(
    store: type[BlockCache], tmp_path: Path
) -> None:
    key = store.digest(b"the block's bytes")
    store(tmp_path).put(key, BLOCK)
    assert store(tmp_path).get(key) == BLOCK
    assert store(tmp_path).get(store.digest(b"other bytes")) is None


@pytest.mark.parametrize("store", [BlockCache, BlockPack])
def test_values_json_would_change_are_not_stored(store: type[BlockCache], tmp_path: Path) -> None:
    key = store.digest(b"x")
    store(tmp_path).put(key, {1: "an int key would come back a string"})
    store(tmp_path).put(key + "f", {"v": float("nan")})
    assert store(tmp_path).get(key) is None and store(tmp_path).get(key + "f") is None


def test_the_pack_is_one_file_however_many_blocks(tmp_path: Path) -> None:
    pack = BlockPack(tmp_path)
    for n in range(300):
        pack.put(BlockPack.digest(str(n).encode()), {"n": n})
    assert BlockPack(tmp_path).get(BlockPack.digest(b"299")) == {"n": 299}
    assert {p.name for p in tmp_path.iterdir()} <= {
        "blocks.sqlite3",
        "blocks.sqlite3-wal",
        "blocks.sqlite3-shm",
    }


def test_a_corrupt_pack_is_a_miss_not_an_error(tmp_path: Path) -> None:
    (tmp_path / BlockPack.FILE).write_bytes(b"not a database" * 100)
    pack = BlockPack(tmp_path)
    key = BlockPack.digest(b"x")
    pack.put(key, BLOCK)  # no exception
    assert pack.get(key) is None
