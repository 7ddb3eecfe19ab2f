"""Serving-engine flag uses of launch scripts, remembered by their bytes.

The preflight's flag rule (GOV713) reads the uses of every script that could
answer its questions, about a hundred of InferenceX's scripts for one PR, and
lexing them is most of a check's time after a new edit. A script's uses
depend only on its bytes and on gov's code, so they are kept in a
`BlockPack` under `.git/gov/shell-cache/`, keyed by `findings_cache.digest`
(gov's installed code included: an upgrade never reuses old uses). The hook
after an edit then lexes only the scripts that changed; a fresh checkout
(CI) has no cache and lexes what it needs, as before. Anything unreadable is
a miss; `--no-cache` / `GOV_NO_CACHE=1` skip the lookup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from governance.check.findings_cache import digest
from governance.core.blockcache import BlockPack
from governance.sweeps.shellscan import FlagUse, flag_uses


class FlagUseCache:
    def __init__(self, folder: Path, *, read: bool = True) -> None:
        self.pack = BlockPack(folder)
        self.read = read

    def uses(self, data: bytes) -> list[FlagUse]:
        """`flag_uses(data)`, from the cache when this code has lexed these bytes before."""
        key = digest(["flag-uses", data])
        if self.read:
            found = _from_json(self.pack.get(key))
            if found is not None:
                return found
        found = flag_uses(data)
        self.pack.put(
            key, [[u.engine, u.flag, u.spelled, u.value, u.line, u.column] for u in found]
        )
        return found


def _from_json(value: Any) -> list[FlagUse] | None:
    if not isinstance(value, list):
        return None
    out = []
    for row in value:
        if not (isinstance(row, list) and len(row) == 6):
            return None
        engine, flag, spelled, text, line, column = row
        if not all(isinstance(x, str) for x in (engine, flag, spelled, text)):
            return None
        if not (type(line) is int and type(column) is int):
            return None
        out.append(FlagUse(engine, flag, spelled, text, line, column))
    return out
