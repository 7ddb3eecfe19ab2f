"""Findings and errors: what went wrong, where, and what to type instead.

A `Violation` is data (rules return them, reporters render them). A `GovError`
is a failure that stops a command before it can produce findings (a missing
ref, an unreadable settings file); the CLI turns it into a one-line message
plus hint and the exit code it carries.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# Exit codes shared by every command (see README "Exit codes").
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class Violation:
    """One finding. `line` and `column` are 1-based; 0 means "whole file"."""

    code: str  # stable identifier, e.g. "GOV302"
    rule: str  # short kebab-case rule name, e.g. "entry-modified"
    message: str  # what is wrong, one line
    path: str  # file the location refers to (repository-relative)
    line: int = 0
    column: int = 0
    hint: str = ""  # what the user should write or do instead
    source: str = field(default="", compare=False)  # "head" or "base": which snapshot

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data.pop("source")
        return data

    def located(self) -> str:
        """`path:line:column` (omitting zeros)."""
        where = self.path
        if self.line:
            where += f":{self.line}"
            if self.column:
                where += f":{self.column}"
        return where


class GovError(Exception):
    """A failure that stops the command. Carries a hint and an exit code."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str = "", *, where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.where = where

    def __str__(self) -> str:
        prefix = f"{self.where}: " if self.where else ""
        return f"{prefix}{self.message}"


class UsageError(GovError):
    """Bad arguments, refs or files: exit 2."""


class FindingsError(GovError):
    """Raised by services that must stop when the data itself is invalid
    (e.g. a merge that would push bytes failing check). Exit 1."""

    exit_code = EXIT_FINDINGS

    def __init__(self, message: str, violations: list[Violation], hint: str = "") -> None:
        super().__init__(message, hint)
        self.violations = violations


def line_col(text: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a byte offset. Columns count characters,
    decoding what precedes the offset on its line (falling back to bytes)."""
    line_start = text.rfind(b"\n", 0, offset) + 1
    line = text.count(b"\n", 0, offset) + 1
    prefix = text[line_start:offset]
    try:
        column = len(prefix.decode("utf-8")) + 1
    except UnicodeDecodeError:
        column = len(prefix) + 1
    return line, column
