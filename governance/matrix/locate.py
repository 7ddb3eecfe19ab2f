"""Positions for master-config and runner-file findings.

Files are parsed fast without positions; when a finding needs a line and
column, only the faulty text is re-read with ruamel's round-trip loader, and
pydantic error locations are walked through that tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from governance.core import yamlsafe
from governance.core.diagnostics import Violation
from governance.core.schema_faults import SchemaFault, schema_violations
from governance.core.suggest import did_you_mean

if TYPE_CHECKING:  # only a caller that caught one imports pydantic
    from pydantic import ValidationError


def round_trip(text: str, path: str, line_offset: int = 0) -> Any:
    try:
        return yamlsafe.load(text, round_trip=True, line_offset=line_offset)
    except yamlsafe.YamlLoadError:
        return None


def key_position(mapping: Any, key: Any) -> tuple[int, int]:
    try:
        line, column = mapping.lc.key(key)
    except (AttributeError, KeyError, TypeError):
        return 0, 0
    return line + 1, column + 1


Locator = Callable[[Sequence[Any]], tuple[int, int]]


def tree_locator(
    root: Any, prefix: Sequence[Any] = (), line_offset: int = 0, default: tuple[int, int] = (0, 0)
) -> Locator:
    """A function mapping an error location to an absolute (line, column)."""

    def locate(loc: Sequence[Any]) -> tuple[int, int]:
        found = yamlsafe.position(root, [*prefix, *loc]) if root is not None else None
        if found is None:
            return default
        return found[0] + line_offset, found[1]

    return locate


_ERROR_CODES = {"extra_forbidden": "GOV513", "missing": "GOV514", "value_error": "GOV516"}


def pydantic_violations(
    exc: ValidationError,
    *,
    path: str,
    owner: str,
    locate: Locator,
    known_fields: Iterable[str] = (),
    code: str | None = None,
) -> list[Violation]:
    """One located violation per pydantic error, worded "<owner>: <where>: <message>"."""

    def word(fault: SchemaFault) -> tuple[str, str]:
        message = fault.msg.removeprefix("Value error, ")
        hint = ""
        if fault.kind == "extra_forbidden" and fault.loc:
            hint = did_you_mean(str(fault.loc[-1]), known_fields, quote=repr)
        text = f"{owner}: {fault.where}: {message}" if fault.where else f"{owner}: {message}"
        return text, hint

    return schema_violations(
        exc,
        code=lambda kind: code or _ERROR_CODES.get(kind, "GOV515"),
        locate=locate,
        word=word,
        path=path,
    )


def schema_fields(schema: type) -> set[str]:
    """Every YAML field name a schema family knows (for did-you-mean hints)."""
    names: set[str] = set()
    pending = [schema]
    seen: set[type] = set()
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, info in model.model_fields.items():  # type: ignore[attr-defined]
            names.add(info.alias or name)
            for arg in _model_args(info.annotation):
                pending.append(arg)
    return names


def _model_args(annotation: Any) -> list[type]:
    from pydantic import BaseModel

    found: list[type] = []
    stack = [annotation]
    while stack:
        item = stack.pop()
        if isinstance(item, type) and issubclass(item, BaseModel):
            found.append(item)
        stack.extend(getattr(item, "__args__", ()) or ())
    return found
