"""A small evaluator of GitHub Actions expressions (`${{ ... }}`), enough for
InferenceX's job templates: contexts, `.name` and `['name']` properties (names
may hold `-`), string/number/boolean/null literals, `== != ! && ||`, and the
functions `toJson`, `fromJson`, `join`, `contains`, `format`. Used by the tests
to compute, from the templates' own text, the environment a job gets."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!()\[\],.])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)
WHOLE = re.compile(r"^\s*\$\{\{(.*?)\}\}\s*$", re.DOTALL)
PART = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text.rstrip()):
        match = TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"cannot read {text[pos:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value == value


def as_text(value: Any) -> str:
    """How a value is interpolated into a string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return to_json(value)
    return str(value)


def to_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


class Parser:
    def __init__(self, text: str, contexts: Mapping[str, Any]) -> None:
        self.items = tokens(text)
        self.pos = 0
        self.contexts = contexts

    def peek(self) -> str:
        return self.items[self.pos][1] if self.pos < len(self.items) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        item = self.items[self.pos]
        if expected is not None and item[1] != expected:
            raise ValueError(f"expected {expected!r}, got {item[1]!r}")
        self.pos += 1
        return item

    def parse(self) -> Any:
        value = self.or_()
        if self.pos != len(self.items):
            raise ValueError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.compare()
        while self.peek() == "&&":
            self.take()
            right = self.compare()
            value = right if truthy(value) else value
        return value

    def compare(self) -> Any:
        value = self.unary()
        while self.peek() in ("==", "!="):
            op = self.take()[1]
            right = self.unary()
            same = _loose(value) == _loose(right)
            value = same if op == "==" else not same
        return value

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not truthy(self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        kind, text = self.take()
        if text == "(":
            value = self.or_()
            self.take(")")
        elif kind == "str":
            value = text[1:-1].replace("''", "'")
        elif kind == "num":
            value = float(text) if "." in text else int(text)
        elif text in ("true", "false", "null"):
            value = {"true": True, "false": False, "null": None}[text]
        elif self.peek() == "(":
            value = self.call(text)
        else:
            value = self.contexts.get(text)
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                key: Any = self.take()[1]
            else:
                key = self.or_()
                self.take("]")
            value = value.get(key) if isinstance(value, Mapping) else None
        return value

    def call(self, name: str) -> Any:
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.or_())
            if self.peek() == ",":
                self.take()
        self.take(")")
        lowered = name.lower()
        if lowered == "tojson":
            return to_json(args[0])
        if lowered == "fromjson":
            return json.loads(args[0])
        if lowered == "join":
            sep = args[1] if len(args) > 1 else ","
            return sep.join(as_text(v) for v in args[0]) if isinstance(args[0], list) else args[0]
        if lowered == "contains":
            haystack, needle = args
            if isinstance(haystack, list):
                return any(_loose(v) == _loose(needle) for v in haystack)
            return str(needle).lower() in str(haystack or "").lower()
        if lowered == "format":
            return re.sub(r"\{(\d+)\}", lambda m: as_text(args[1 + int(m.group(1))]), args[0])
        raise ValueError(f"function {name} is not supported")


def _loose(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def evaluate(value: Any, contexts: Mapping[str, Any]) -> Any:
    """A workflow value: a whole `${{ }}` keeps its type, anything else is a string."""
    if not isinstance(value, str):
        return value
    whole = WHOLE.match(value)
    if whole and "${{" not in whole.group(1):
        return Parser(whole.group(1), contexts).parse()
    return PART.sub(lambda m: as_text(Parser(m.group(1), contexts).parse()), value)
