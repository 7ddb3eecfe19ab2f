"""The changelog entries a change appends, read from the base and head
blobs of perf-changelog.yaml (`changelog.appended`, the reading `gov check`
shares; never `git diff` text), parsed and validated, with positions mapped
back to lines of the changelog file; and the config keys they name, resolved
against a catalog (docs/matrix.md, 'From the changelog to the plan')."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from governance.changelog import bounds
from governance.changelog.appended import Appended, appended
from governance.changelog.bounds import entry_starts
from governance.changelog.entry_fields import plain_entry
from governance.changelog.keys import (
    not_plain_violation,
    plain_patterns,
    resolve_keys,
    unresolved_violation,
)
from governance.core import yamlsafe
from governance.core.codes import violation
from governance.core.diagnostics import Violation
from governance.matrix.errors import MatrixError
from governance.matrix.plan_entry import PlanEntry

if TYPE_CHECKING:
    from governance.matrix.catalog import Catalog


@dataclass(frozen=True, slots=True)
class Additions:
    """The lines head appends: their text and their line numbers in the
    head changelog (so YAML positions can be reported in the real file)."""

    path: str
    contents: tuple[str, ...]
    lines: tuple[int, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.contents)

    @property
    def first_line(self) -> int:
        """Head-file line of the first non-blank added line (0: none)."""
        found = next(
            (n for n, text in zip(self.lines, self.contents, strict=True) if text.strip()), 0
        )
        return found or (self.lines[0] if self.lines else 0)

    def file_line(self, snippet_line: int) -> int:
        """Head-file line of a 1-based line of `text`."""
        if 1 <= snippet_line <= len(self.lines):
            return self.lines[snippet_line - 1]
        return self.lines[-1] if self.lines else 0


def changelog_additions(base: bytes | None, head: bytes | None, path: str) -> Additions:
    """The lines head appends to base, read from the two blobs."""
    return additions_of(appended(base, head), path)


def additions_of(found: Appended, path: str) -> Additions:
    """The added lines as the plan reads them; like the reference, a deleted
    or rewritten non-blank line refuses the plan (GOV530)."""
    removed = found.removed
    if removed is not None:
        raise MatrixError(
            [
                violation(
                    "GOV530",
                    f"Deletions are not allowed in {path}. Only additions to the changelog "
                    f"are permitted. Found deleted line: {removed.text}",
                    path,
                    removed.head_line,
                    1,
                    hint="the changelog is append-only: restore the line and add a new entry",
                )
            ]
        )
    return Additions(path, found.lines, found.numbers)


def parse_additions(additions: Additions) -> list[Any]:
    """The added lines as a YAML list (round-trip containers,
    so later checks can point at lines)."""
    path = additions.path
    text = additions.text
    if not text.strip():
        raise MatrixError([violation("GOV531", "No additions found in the changelog file.", path)])
    _refuse_out_of_bounds(additions)
    try:
        data = yamlsafe.load(text, round_trip=True, strict=True)
    except yamlsafe.YamlLoadError as exc:
        problem = exc.problem
        line = additions.file_line(problem.line)
        code = "GOV532" if problem.kind == "duplicate-key" else "GOV531"
        raise MatrixError(
            [violation(code, f"{path}: {problem.message}", path, line, problem.column)]
        ) from exc
    if not data:
        raise MatrixError(
            [violation("GOV531", "No valid YAML entries found in the changelog additions.", path)]
        )
    if not isinstance(data, list):
        raise MatrixError(
            [
                violation(
                    "GOV532",
                    "the changelog additions must form a YAML list of entries",
                    path,
                    additions.first_line,
                    1,
                )
            ]
        )
    return data


def _refuse_out_of_bounds(additions: Additions) -> None:
    """The changelog's byte bounds (docs/security.md), before any YAML is read:
    the appended lines are held to what `gov check` holds the file to."""
    data = (additions.text + "\n").encode("utf-8")
    found: list[Violation] = []

    def fail(code: str, message: str, offset: int, hint: str) -> Violation:
        line = additions.file_line(data.count(b"\n", 0, offset) + 1)
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        found.append(
            violation(
                "GOV532",
                f"{additions.path}: {message} ({code})",
                additions.path,
                line,
                column,
                hint=hint,
            )
        )
        return found[-1]

    starts = entry_starts(data)
    if bounds.separator_fault(data, fail) or bounds.file_faults(data, starts, fail):
        raise MatrixError(found)
    for index, (start, end) in enumerate(zip(starts, [*starts[1:], len(data)], strict=True), 1):
        if bounds.entry_fault(data, start, end, index, fail):
            raise MatrixError(found)


def node_position(node: Any, key: Any = None, index: int | None = None) -> tuple[int, int]:
    """0-based (line, column) of a key or list item in a round-trip node."""
    lc = getattr(node, "lc", None)
    try:
        if lc is not None and key is not None:
            return lc.key(key)
        if lc is not None and index is not None:
            return lc.item(index)
        if lc is not None:
            return lc.line, lc.col
    except (KeyError, IndexError, TypeError, AttributeError):
        pass
    return -1, -1


class Where:
    """Maps round-trip positions to (path, line, column) in the changelog."""

    def __init__(
        self, path: str, line_map: Sequence[int] | None, texts: Sequence[str] = ()
    ) -> None:
        self.path = path
        self.line_map = line_map
        self.texts = texts  # the parsed text's lines, when known

    def text(self, line: int) -> str:
        """The parsed text's 0-based line `line` ("" when unknown)."""
        return self.texts[line] if 0 <= line < len(self.texts) else ""

    def __call__(self, position: tuple[int, int]) -> tuple[str, int, int]:
        line, column = position
        if line < 0:
            return self.path, 0, 0
        if self.line_map is not None:
            real = self.line_map[line] if line < len(self.line_map) else 0
            return self.path, real, column + 1
        return self.path, line + 1, column + 1


def validate_entries(raw_entries: Sequence[Any], where: Where) -> list[PlanEntry]:
    """Every entry against the processor's schema; pydantic is loaded only
    for an entry that is not plainly valid."""
    entries: list[PlanEntry] = []
    problems: list[Violation] = []
    parent = raw_entries
    for index, raw in enumerate(raw_entries):
        plain = plain_entry(raw)
        if plain is not None:
            entries.append(PlanEntry.from_plain(plain))
            continue
        from pydantic import ValidationError

        from governance.matrix.model import SweepEntry

        try:
            entries.append(PlanEntry.from_model(SweepEntry.model_validate(raw)))
        except ValidationError as exc:
            for error in exc.errors(include_url=False, include_input=False):
                loc = error["loc"]
                position = node_position(parent, index=index)
                if loc and isinstance(raw, Mapping) and loc[0] in raw:
                    position = node_position(raw, key=loc[0])
                path, line, column = where(position)
                field_name = ".".join(str(p) for p in loc)
                message = error["msg"].removeprefix("Value error, ")
                text = f"changelog entry {index + 1}: " + (
                    f"{field_name}: {message}" if field_name else message
                )
                problems.append(violation("GOV532", text, path, line, column))
    if problems:
        raise MatrixError(problems)
    return entries


# -- key resolution of the appended entries ----------------------------------------


def resolve_entry_keys(
    raw: Any, patterns: Sequence[str], catalog: Catalog, where: Where
) -> tuple[list[str], list[Violation]]:
    """An entry's patterns -> exact keys, with violations located at the
    patterns that match nothing (the shared resolver of `changelog.keys`)."""
    known = catalog.keys
    strings, foreign = plain_patterns(patterns)
    keys, unmatched = resolve_keys(strings, known)
    patterns_node = raw.get("config-keys") if isinstance(raw, Mapping) else None
    problems = []
    for index in sorted({*unmatched, *foreign}):
        position = node_position(patterns_node, index=index)
        path, line, column = where(position)
        if index in foreign:
            text = where.text(position[0])
            problems.append(not_plain_violation(patterns[index], known, path, line, column, text))
            continue
        problems.append(
            unresolved_violation(patterns[index], known, catalog.files_label, path, line, column)
        )
    return keys, problems
