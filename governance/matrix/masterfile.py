"""Split a master config file into per-key blocks (or parse it whole).

Each top-level key of a master file is a self-contained block, so the file is
split at column-0 `key:` lines (a byte-span scan) and each block is parsed
only when asked for. Files the splitter cannot prove safe (anchors, flow
style, directives...) are parsed whole; both paths give the same data.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from governance.core import yamlsafe
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.matrix.locate import key_position, round_trip


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One input file: repository-relative path and bytes (None = missing)."""

    path: str
    data: bytes | None


_KEY_LINE = re.compile(r"(?P<key>[A-Za-z0-9_.][^\s:#]*):(?:[ \t]|$)")
# A line that starts in column 0 with anything but a blank or a comment.
_TOP_LINE = re.compile(r"^[^ \t\r#\n].*", re.MULTILINE)
# anchors, aliases, merge keys or tags would tie blocks together: parse whole.
_TIE_CHARS = re.compile(r"[&*!<]")
_UNSPLITTABLE = re.compile(r"(?:^|[\s\[{,])[&*!][^\s,\]}]|<<\s*:")


@dataclass(slots=True)
class Block:
    key: str
    line: int  # 1-based line of the `key:` line
    text: str  # the block's source (key line to the line before the next key)


@dataclass(slots=True)
class MasterFile:
    path: str
    text: str
    blocks: dict[str, Block] | None  # None: parsed whole (see `whole`)
    whole: dict[str, Any] | None = None
    problems: list[Violation] = field(default_factory=list)
    key_lines: dict[str, tuple[int, int]] = field(default_factory=dict)
    _rt_whole: Any = None

    @property
    def keys(self) -> list[str]:
        if self.blocks is not None:
            return list(self.blocks)
        return list(self.whole or {})


def _ties_blocks(text: str) -> bool:
    """Does any line's code hold an anchor, alias, tag or merge key? Comments
    cannot tie blocks together, so code is read up to a ` #`; only the few
    lines with one of `&*!<` are looked at (a regex over the whole file is
    most of a split's time)."""
    for found in _TIE_CHARS.finditer(text):
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.start())
        line = text[start : end if end >= 0 else len(text)]
        code = "" if line.lstrip().startswith("#") else line.split(" #", 1)[0]
        if _UNSPLITTABLE.search(code):
            return True
    return False


@functools.lru_cache(maxsize=8)
def _split(text: str) -> tuple[dict[str, Block], list[tuple[str, int]]] | None:
    """Blocks per top-level key, plus repeated keys (key, line); None when the
    file is not in the plain block style this scanner can vouch for. Memoized:
    a check splits the same master file at base and head (callers only read)."""
    if _ties_blocks(text):
        return None
    starts: list[tuple[str, int, int]] = []  # key, line number, char offset
    number, counted = 1, 0
    for found in _TOP_LINE.finditer(text):
        match = _KEY_LINE.match(found.group())
        if match is None:
            return None
        number += text.count("\n", counted, found.start())
        counted = found.start()
        starts.append((match.group("key"), number, counted))
    return blocks_at(text, starts)


def blocks_at(
    text: str, starts: list[tuple[str, int, int]]
) -> tuple[dict[str, Block], list[tuple[str, int]]] | None:
    """The blocks that begin at `starts` (key, line number, char offset), each
    up to the next; a key seen again is a repeat (key, line). None: no block."""
    if not starts:
        return None
    blocks: dict[str, Block] = {}
    repeats: list[tuple[str, int]] = []
    for index, (key, number, start) in enumerate(starts):
        end = starts[index + 1][2] if index + 1 < len(starts) else len(text)
        if key in blocks:
            repeats.append((key, number))
            continue
        blocks[key] = Block(key, number, text[start:end])
    return blocks, repeats


def yaml_violation(path: str, exc: yamlsafe.YamlLoadError, key: str = "") -> Violation:
    problem = exc.problem
    code = "GOV511" if problem.kind == "duplicate-key" else "GOV510"
    where = f" (config '{key}')" if key else ""
    return violation(code, f"{path}: {problem.message}{where}", path, problem.line, problem.column)


def read_master(source: SourceFile) -> MasterFile:
    path = source.path
    if source.data is None:
        missing = MasterFile(path, "", None, {})
        missing.problems.append(violation("GOV510", f"Input file '{path}' does not exist.", path))
        return missing
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = MasterFile(path, "", None, {})
        bad.problems.append(violation("GOV510", f"{path} is not UTF-8: {exc}", path))
        return bad
    split = _split(text)
    if split is not None:
        blocks, repeats = split
        master = MasterFile(path, text, blocks)
        for key, number in repeats:
            master.problems.append(
                violation(
                    "GOV511",
                    f"duplicate key '{key}' in {path} (first defined on line {blocks[key].line})",
                    path,
                    number,
                    1,
                    hint="each config key may be defined once; merge or rename the blocks",
                )
            )
        master.key_lines = {key: (block.line, 1) for key, block in blocks.items()}
        return master
    master = MasterFile(path, text, None)
    try:
        data = yamlsafe.load(text)
    except yamlsafe.YamlLoadError as exc:
        master.whole = {}
        master.problems.append(yaml_violation(path, exc))
        return master
    if not isinstance(data, dict):
        master.whole = {}
        master.problems.append(
            violation("GOV510", f"Config file '{path}' must contain a dictionary", path, 1, 1)
        )
        return master
    master.whole = data
    if data:
        # positions of top-level keys, needed for key-level violations
        rt = round_trip(text, path)
        master._rt_whole = rt
        if rt is not None:
            for key in data:
                master.key_lines[key] = key_position(rt, key)
    return master
