"""pydantic validation errors as located findings: the one translation from a
`ValidationError` to `Violation`s, shared by the changelog entry schema and the
master-config and runner-file schemas. Each caller brings how a pydantic error
type becomes a finding code, how to locate an error, and its own wording."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from governance.core.codes import violation
from governance.core.diagnostics import Violation

if TYPE_CHECKING:  # only a caller that caught one imports pydantic
    from pydantic import ValidationError


@dataclass(frozen=True, slots=True)
class SchemaFault:
    """One pydantic error: where (`loc`), its type (e.g. "extra_forbidden"),
    pydantic's message and the finding code chosen for it."""

    loc: tuple[Any, ...]
    kind: str
    msg: str
    code: str

    @property
    def where(self) -> str:
        """The location as a dotted path ("" at the top level)."""
        return ".".join(str(part) for part in self.loc)


def schema_violations(
    exc: ValidationError,
    *,
    code: Callable[[str], str],
    locate: Callable[[Sequence[Any]], tuple[int, int]],
    word: Callable[[SchemaFault], tuple[str, str]],
    path: str,
    source: str = "head",
) -> list[Violation]:
    """One located violation per pydantic error. `code` maps a pydantic error
    type to a finding code, `locate` a location to (line, column), and `word`
    a fault to its (message, hint)."""
    found: list[Violation] = []
    for error in exc.errors(include_url=False, include_input=False):
        fault = SchemaFault(tuple(error["loc"]), error["type"], error["msg"], code(error["type"]))
        line, column = locate(fault.loc)
        message, hint = word(fault)
        found.append(violation(fault.code, message, path, line, column, hint, source=source))
    return found
