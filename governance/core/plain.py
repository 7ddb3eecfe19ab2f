"""Plain names and hidden characters (docs/rules.md, 'Plain names').

A name that selects rows (a config key, a runner label) must be ASCII: a
Cyrillic `а` in `dsv4-fp8-mі300x-vllm` reads like the real key to a reviewer
and is another key to gov. `fold` maps the usual look-alikes (Cyrillic and
Greek letters that look Latin, fullwidth and other compatibility forms,
accented letters, non-ASCII digits and dashes) to the ASCII they mimic, so a
finding can name the key the author (or an attacker) was imitating.

Descriptions keep their Unicode, but raw bidirectional controls and
zero-width characters make text render other than it reads (Trojan Source):
`hidden_controls` finds them.

Pure: strings in, strings and Violations out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from governance.core.codes import violation
from governance.core.diagnostics import Violation

# Bidirectional formatting characters: embeddings, overrides, isolates, marks.
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
)
# Zero-width characters (U+FEFF is a byte order mark only at the start of a file).
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff")
HIDDEN = BIDI_CONTROLS | ZERO_WIDTH

# Letters NFKC leaves alone that render like an ASCII letter in common fonts
# (a small subset of Unicode's confusables.txt: the ones a key is typed with).
_CONFUSABLES: dict[str, str] = {
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j",
    "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y",
    "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ь": "b", "г": "r",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q",
    "Ԝ": "W", "Ӏ": "I",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # Latin letters without an ASCII decomposition
    "ı": "i", "ȷ": "j", "ɡ": "g", "ɑ": "a", "ɩ": "i", "ʟ": "L", "ł": "l", "ø": "o",
    "đ": "d", "ħ": "h",
    # Armenian, Cherokee and others seen in spoofed identifiers
    "օ": "o", "ս": "u", "ո": "n", "Ꭺ": "A", "Ꮯ": "C", "Ꭼ": "E", "Ꮋ": "H",
    # dashes, minus signs and dots
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "⁃": "-",
    "·": ".", "•": ".", "‧": ".", "٫": ".",
}  # fmt: skip


def fold_char(char: str) -> str:
    """The ASCII `char` imitates ("" for an invisible character); `char`
    itself when it imitates nothing."""
    if char.isascii():
        return char
    if char in HIDDEN:
        return ""
    if char in _CONFUSABLES:
        return _CONFUSABLES[char]
    import unicodedata  # a C extension: loaded only when a name is not ASCII

    compatible = unicodedata.normalize("NFKC", char)
    if compatible.isascii():
        return compatible
    if (digit := unicodedata.decimal(char, None)) is not None:
        return str(digit)
    bare = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    if bare and bare.isascii():
        return bare
    if len(compatible) == 1 and compatible in _CONFUSABLES:
        return _CONFUSABLES[compatible]
    return char


def fold(name: str) -> str:
    """`name` with every look-alike replaced by the ASCII it imitates."""
    if name.isascii():
        return name
    return "".join(fold_char(char) for char in name)


def describe(char: str) -> str:
    """`U+0430 CYRILLIC SMALL LETTER A`."""
    import unicodedata

    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')}"


def lookalike(name: str, known: Iterable[str]) -> str | None:
    """The ASCII name among `known` that `name` imitates (folded equal,
    else folded equal ignoring case), or None."""
    folded = fold(name)
    if not folded.isascii() or folded == name:
        return None
    lowered = None
    for candidate in known:
        if candidate == folded:
            return candidate
        if lowered is None and candidate.isascii() and candidate.lower() == folded.lower():
            lowered = candidate
    return lowered


def not_plain(
    code: str,
    noun: str,
    name: str,
    path: str,
    line: int,
    column: int,
    resembles: Sequence[str] = (),
    *,
    hint: str = "",
) -> Violation:
    """The finding for a name that is not ASCII. `column` is where the name
    starts (1-based; 0 when unknown); the finding points at its first
    non-ASCII character and names each one with what it looks like."""
    odd = [(index, char) for index, char in enumerate(name) if not char.isascii()]
    parts = []
    for index, char in odd[:4]:
        where = f" at column {column + index}" if column else ""
        mimics = fold_char(char)
        looks = (
            " (invisible)"
            if mimics == ""
            else (f" looks like {mimics!r}" if mimics != char else "")
        )
        parts.append(f"{describe(char)}{where}{looks}")
    if len(odd) > 4:
        parts.append(f"and {len(odd) - 4} more")
    message = f"{noun} {name!r} is not plain ASCII: " + ", ".join(parts)
    folded = fold(name)
    if resembles:
        listed = " or ".join(f"'{key}'" for key in resembles[:3])
        message += f"; it imitates {listed}"
        hint = hint or f"type `{resembles[0]}` in plain ASCII (or pick another ASCII name)"
    elif folded.isascii():
        hint = hint or f"names are plain ASCII: retype it, e.g. `{folded}`"
    else:
        hint = hint or "names are plain ASCII: letters, digits, '-', '_' and '.'"
    at = column + odd[0][0] if column and odd else column
    return violation(code, message, path, line, at, hint)


def name_column(line_text: str, name: str, start_column: int) -> int:
    """The 1-based column where `name` starts on its line, searching from
    `start_column` (the YAML node's column: a quote may come first);
    `start_column` when the name is not written there as is (escapes)."""
    found = line_text.find(name, max(start_column - 1, 0))
    return found + 1 if found >= 0 else start_column


def hidden_controls(text: str, *, start: int = 0) -> list[tuple[int, str]]:
    """(offset, character) of each bidirectional control or zero-width
    character in `text`; U+FEFF at offset 0 of a file (`start` 0) is a
    byte order mark and allowed."""
    if text.isascii():
        return []
    found = []
    for offset, char in enumerate(text):
        if char in HIDDEN and not (char == "\ufeff" and start + offset == 0):
            found.append((offset, char))
    return found
