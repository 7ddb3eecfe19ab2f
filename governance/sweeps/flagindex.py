"""Which engine-flag values look wrong: an index of the flag uses of many
scripts, and the warnings it gives one script's uses (pure).

A value never seen with this engine for the flag, but seen with another
engine that shares no value of that flag with this one, is suspicious
(docs/sweeps.md, 'Preflight'). `focused_index` reads only the scripts that
can answer the questions asked.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from governance.sweeps.shellscan import ENGINE_LABELS, FlagUse, flag_uses

_ADDRESS = re.compile(r"[0-9.:]+|localhost|\[?[0-9a-fA-F:]+\]?")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def worth_checking(value: str) -> bool:
    """Numbers are tunables and addresses are the machine's (a new one is not
    a mistake); names are checked."""
    return bool(value) and not _NUMBER.fullmatch(value) and not _ADDRESS.fullmatch(value)


@dataclass(slots=True)
class FlagIndex:
    """(flag, value) -> engine -> the (path, line, column) uses, over many scripts."""

    uses: dict[tuple[str, str], dict[str, list[tuple[str, int, int]]]] = field(default_factory=dict)
    values: dict[tuple[str, str], set[tuple[str, str]]] = field(default_factory=dict)

    def add(self, path: str, found: Iterable[FlagUse]) -> None:
        for use in found:
            engines = self.uses.setdefault((use.flag, use.value), {})
            engines.setdefault(use.engine, []).append((path, use.line, use.column))
            self.values.setdefault((use.engine, use.flag), set()).add((use.value, path))

    def seen(self, engine: str, flag: str, value: str, exclude: frozenset[str]) -> bool:
        places = self.uses.get((flag, value), {}).get(engine, [])
        return any(path not in exclude for path, _l, _c in places)

    def others(
        self, engine: str, flag: str, value: str, exclude: frozenset[str]
    ) -> dict[str, list[tuple[str, int, int]]]:
        out: dict[str, list[tuple[str, int, int]]] = {}
        for other, places in self.uses.get((flag, value), {}).items():
            kept = [p for p in places if p[0] not in exclude]
            if other != engine and kept:
                out[other] = kept
        return out

    def share_values(self, a: str, b: str, flag: str, exclude: frozenset[str]) -> bool:
        """Do engines a and b pass one same value for `flag` somewhere? Then the
        flag's values are common vocabulary (parsers named after a model family)."""
        mine = set(self.engine_values(a, flag, exclude))
        return any(v in mine for v in self.engine_values(b, flag, exclude))

    def engine_values(self, engine: str, flag: str, exclude: frozenset[str]) -> list[str]:
        return sorted(
            {v for v, path in self.values.get((engine, flag), set()) if path not in exclude}
        )


def build_index(scripts: Mapping[str, bytes]) -> FlagIndex:
    index = FlagIndex()
    for path, data in sorted(scripts.items()):
        index.add(path, flag_uses(data))
    return index


# What the lexer removes from inside a word: quotes, backslashes, line continuations.
_GAP = rb"""(?:['"\\]|\\\n)*"""


def _spelling(text: str, flag: bool) -> bytes:
    """A pattern of the raw bytes a word of `text` can be written as (with quotes,
    escapes and continuations between its characters); a flag's `-` also as `_`."""
    parts = []
    for char in text:
        if flag and char == "-":
            parts.append(rb"[-_]")
        else:
            parts.append(re.escape(char.encode()))
    return _GAP.join(parts)


def _could_hold(words: Iterable[tuple[str, bool]]) -> Callable[[bytes], bool]:
    """Could a script's bytes hold a word spelled as one of `words` ((text,
    is a flag), see `_spelling`)? Non-ASCII text always could (case folding
    maps some characters onto ASCII letters). A text of plain ASCII is looked
    up as a substring of the script with the lexer's gaps (quotes,
    backslashes, continuations) squeezed out, which is what its gapped
    pattern matches; any other text goes through the pattern."""
    literal: list[bytes] = []
    dashed: list[bytes] = []  # flags: `-` and `_` are one character
    patterns: list[bytes] = []
    for text, flag in words:
        if not text.isascii() or any(c in text for c in "'\"\\") or (flag and "_" in text):
            patterns.append(_spelling(text, flag))
        elif flag:
            dashed.append(text.lower().encode())
        else:
            literal.append(text.lower().encode())
    if not (literal or dashed or patterns):
        return lambda _data: False
    regex = re.compile(b"|".join(patterns), re.IGNORECASE) if patterns else None

    def holds(data: bytes) -> bool:
        if not data.isascii():
            return True
        squeezed = _squeezed(data)
        if any(word in squeezed for word in literal):
            return True
        if dashed:
            flags = squeezed.replace(b"_", b"-")
            if any(word in flags for word in dashed):
                return True
        return regex is not None and regex.search(data) is not None

    return holds


@functools.lru_cache(maxsize=512)
def _squeezed(data: bytes) -> bytes:
    """`data` lowercased without the gaps `_spelling` allows between characters."""
    return data.replace(b"\\\n", b"").translate(None, b"'\"\\").lower()


def focused_index(
    scripts: Mapping[str, bytes],
    reviewed: Mapping[str, Sequence[FlagUse]],
    changed: frozenset[str],
    read_uses: Callable[[bytes], Sequence[FlagUse]] = flag_uses,
) -> FlagIndex:
    """The index `flag_warnings` gets for the `reviewed` scripts' uses (each
    excluding itself and `changed`), built from only the scripts that can answer.

    A use is settled once another script of its engine passes the same value
    for the flag (`seen`: no warning, whatever the rest says), so the scripts
    that could hold a use's (flag, value) pair are read one by one, and only
    while some unsettled use can still learn from them. A use left unsettled
    has every such script read (`others` complete); for the ones another
    engine has, every script that could spell the flag is read too
    (`share_values`, `engine_values`). Every question gets the answer the index
    of all `scripts` gives. `read_uses` reads one script's uses (cached by bytes)."""
    uses_of: dict[str, Sequence[FlagUse]] = {}
    index = FlagIndex()

    def read(path: str) -> None:
        if path not in uses_of:
            uses_of[path] = read_uses(scripts[path])
            index.add(path, uses_of[path])

    asked = [(path, use) for path, uses in reviewed.items() for use in uses]
    asked = [(path, use) for path, use in asked if worth_checking(use.value)]
    pairs = {
        (path, use): (_could_hold([(use.value, False)]), _could_hold([(use.flag, True)]))
        for path, use in asked
    }

    def could_answer(path: str, data: bytes, asker: str, use: FlagUse) -> bool:
        if path in changed or path == asker:
            return False  # excluded from that use's answers anyway
        holds_value, spells_flag = pairs[(asker, use)]
        return holds_value(data) and spells_flag(data)

    def unsettled() -> list[tuple[str, FlagUse]]:
        return [
            (path, use)
            for path, use in asked
            if not index.seen(use.engine, use.flag, use.value, changed | {path})
        ]

    open_uses = unsettled()
    for path in sorted(scripts):
        if not open_uses:
            break
        data = scripts[path]
        if any(could_answer(path, data, asker, use) for asker, use in open_uses):
            read(path)
            open_uses = unsettled()
    wide = {
        use.flag
        for path, use in open_uses
        if index.others(use.engine, use.flag, use.value, changed | {path})
    }
    if wide:
        spelled = _could_hold((flag, True) for flag in wide)
        for path in sorted(scripts):
            if spelled(scripts[path]):
                read(path)
    return index


@dataclass(frozen=True, slots=True)
class FlagWarning:
    use: FlagUse
    other_engine: str
    other_places: tuple[tuple[str, int, int], ...]
    engine_values: tuple[str, ...]  # what this engine's scripts pass for the flag

    def message(self) -> str:
        label = ENGINE_LABELS.get(self.use.engine, self.use.engine)
        other = ENGINE_LABELS.get(self.other_engine, self.other_engine)
        path, line, column = self.other_places[0]
        more = len(self.other_places) - 1
        also = f" and {more} more place{'s' if more != 1 else ''}" if more > 0 else ""
        return (
            f"{label} is given `{self.use.spelled} {self.use.value}`, a value only {other} "
            f"scripts here use ({path}:{line}:{column}{also}); no {label} script passes it"
        )

    def hint(self) -> str:
        label = ENGINE_LABELS.get(self.use.engine, self.use.engine)
        if self.engine_values:
            shown = ", ".join(self.engine_values[:6])
            return f"{label} scripts here pass {self.use.spelled} {shown}; or is this the wrong engine?"
        return f"no {label} script here passes {self.use.spelled}; check the engine's documentation"


def flag_warnings(
    data: bytes,
    index: FlagIndex,
    exclude: frozenset[str] = frozenset(),
    uses: Sequence[FlagUse] | None = None,
) -> list[FlagWarning]:
    """The suspicious flag values of one script, against `index` minus the
    scripts in `exclude` (the script itself and whatever else is under review);
    `uses`: the script's `flag_uses` when the caller has them already."""
    out = []
    for use in flag_uses(data) if uses is None else uses:
        if not worth_checking(use.value):
            continue
        if index.seen(use.engine, use.flag, use.value, exclude):
            continue
        others = {
            name: places
            for name, places in index.others(use.engine, use.flag, use.value, exclude).items()
            if not index.share_values(use.engine, name, use.flag, exclude)
        }
        if not others:
            continue  # new to every engine: nothing to compare with
        other = max(sorted(others), key=lambda name: len(others[name]))
        out.append(
            FlagWarning(
                use,
                other,
                tuple(others[other]),
                tuple(index.engine_values(use.engine, use.flag, exclude)),
            )
        )
    return out
