"""Plain YAML documents built straight from the C parser's events (pure).

ruamel's safe constructor spends about two thirds of a master config's load
in its generic node machinery (tag objects, node graphs, recursion guards),
none of which a plain document needs: one with no tag, anchor, alias or
merge key. `build` turns such a document's events into dicts, lists and
scalars in one pass, resolving plain scalars with the loader's own YAML 1.1
table and converting them as the safe constructor does. Whatever it cannot
build exactly as the safe constructor would (a tag, an anchor, an alias, a
timestamp, a merge key, a duplicate or unhashable key, a value its tag cannot
convert, a second document, a syntax error) raises `NotPlain`, and the caller
loads the text the usual way: results and errors stay the safe
constructor's, this is only a shortcut to the same answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from re import Pattern
from typing import Any

# A resolver table: first character ("" for the empty scalar) -> (tag, pattern).
ResolverTable = Mapping[str | None, Sequence[tuple[str, Pattern[str]]]]

_TAG = "tag:yaml.org,2002:"
_BOOLS = {
    "yes": True, "no": False, "y": True, "n": False,
    "true": True, "false": False, "on": True, "off": False,
}  # fmt: skip
_INF = float("inf")


class NotPlain(Exception):
    """The document needs the safe constructor (or is not valid YAML)."""


def _signed(value: str) -> tuple[int, str]:
    """(sign, digits) of a number as the safe constructor splits it."""
    sign = -1 if value[0] == "-" else 1
    return sign, value[1:] if value[0] in "+-" else value


def _sexagesimal(value: str, part: Callable[[str], Any]) -> Any:
    """`1:30:00`, YAML 1.1's base 60 (each part converted by `part`)."""
    total, base = part("0"), 1
    for digits in reversed(value.split(":")):
        total += part(digits) * base
        base *= 60
    return total


def _int(text: str) -> int:
    """YAML 1.1 integers as the safe constructor converts them (octal `017`, `0o`, `0x`, `0b`, base 60)."""
    sign, value = _signed(text.replace("_", ""))
    if value == "0":
        return 0
    for prefix, radix in (("0b", 2), ("0x", 16), ("0o", 8)):
        if value.startswith(prefix):
            return sign * int(value[2:], radix)
    if value[0] == "0":
        return sign * int(value, 8)
    if ":" in value:
        return sign * int(_sexagesimal(value, int))
    return sign * int(value)


def _float(text: str) -> float:
    """YAML 1.1 floats as the safe constructor converts them (`.inf`, `.nan`, base 60)."""
    sign, value = _signed(text.replace("_", "").lower())
    if value == ".inf":
        return sign * _INF
    if value == ".nan":
        return -_INF / _INF  # the quiet NaN the safe constructor makes
    if ":" in value:
        return sign * float(_sexagesimal(value, float))
    return sign * float(value)


_CONVERT: dict[str, Callable[[str], Any]] = {
    _TAG + "null": lambda _text: None,
    _TAG + "bool": lambda text: _BOOLS[text.lower()],
    _TAG + "int": _int,
    _TAG + "float": _float,
    _TAG + "str": str,
}


class PlainRules(dict[str, tuple[tuple[str, Pattern[str]], ...]]):
    """A resolver's table as `build` reads it: per first character, its rules
    then the rules for any character, the patterns compiled (ruamel's are
    lazily compiled proxies, a third of the lookup time). A first character's
    rules are compiled when a scalar first starts with it: a changelog entry
    meets a few of the table's 17 patterns, and compiling all of them cost a
    hook run 5 ms."""

    def __init__(self, table: ResolverTable) -> None:
        super().__init__()
        self._table = table
        self._anywhere = tuple(table.get(None, ()))
        self._compiled: dict[tuple[str, int], Pattern[str]] = {}  # one pattern, many characters

    def _once(self, pattern: Pattern[str]) -> Pattern[str]:
        key = (pattern.pattern, pattern.flags)
        if key not in self._compiled:
            self._compiled[key] = re.compile(*key)
        return self._compiled[key]

    def __missing__(self, first: str) -> tuple[tuple[str, Pattern[str]], ...]:
        rules = self._table.get(first)
        found = (
            ()
            if rules is None
            else tuple((tag, self._once(p)) for tag, p in (*rules, *self._anywhere))
        )
        self[first] = found
        return found


def _plain_scalar(text: str, rules: PlainRules) -> Any:
    for tag, pattern in rules[text[0] if text else ""]:
        if pattern.match(text):
            convert = _CONVERT.get(tag)
            if convert is None:  # timestamp, merge key, `=`: the safe constructor's job
                raise NotPlain(tag)
            try:
                return convert(text)
            except (ValueError, KeyError, IndexError, OverflowError) as exc:
                raise NotPlain(tag) from exc  # `-_` resolves as an int yet has no digits
    return text


def build(
    events: Iterable[Any],
    rules: PlainRules,
    max_depth: int,
) -> Any:
    """The one document of `events` (the C parser's, in order) as the safe
    constructor would build it; `NotPlain` when it cannot say so for sure.
    Events are read lazily and nothing recurses: a document nested deeper
    than `max_depth` stops at the first collection past it."""
    from ruamel.yaml import events as ev
    from ruamel.yaml.error import YAMLError

    no_key = object()
    # Open collections, innermost last, each with the key waiting for its value.
    stack: list[tuple[dict[Any, Any] | list[Any], Any]] = []
    root: Any = None
    documents = 0

    def add(value: Any) -> None:
        nonlocal root
        if not stack:
            root = value
            return
        container, key = stack[-1]
        if isinstance(container, list):
            container.append(value)
        elif key is no_key:
            if isinstance(value, dict | list) or value in container:
                raise NotPlain("unhashable or duplicate key")
            stack[-1] = (container, value)
        else:
            container[key] = value
            stack[-1] = (container, no_key)

    try:
        for event in events:
            kind = type(event)
            if kind is ev.ScalarEvent:
                if event.anchor is not None or event.tag is not None:
                    raise NotPlain("tag or anchor")
                text = event.value
                add(_plain_scalar(text, rules) if event.implicit[0] else text)
            elif kind is ev.MappingStartEvent or kind is ev.SequenceStartEvent:
                if event.anchor is not None or event.tag is not None:
                    raise NotPlain("tag or anchor")
                stack.append(({} if kind is ev.MappingStartEvent else [], no_key))
                if len(stack) > max_depth:
                    raise NotPlain("too deep")
            elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
                add(stack.pop()[0])
            elif kind is ev.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise NotPlain("more than one document")
            elif kind not in (ev.StreamStartEvent, ev.StreamEndEvent, ev.DocumentEndEvent):
                raise NotPlain(kind.__name__)  # an alias, or an event this builder does not know
    except YAMLError as exc:
        raise NotPlain("not valid YAML") from exc
    return root


_rules: PlainRules | None = None


def load_plain(yaml: Any, text: str, max_depth: int) -> Any:
    """`text` built from the events of `yaml` (a safe ruamel instance, whose
    resolver table is read once), or `NotPlain`."""
    global _rules
    if _rules is None:
        _rules = PlainRules(yaml.resolver.versioned_resolver)
    events = yaml.parse(text)
    try:
        return build(events, _rules, max_depth)
    finally:
        events.close()  # the parser is reset before the constructor's turn
