"""Violation codes (GOV5xx) and the exception that carries them.

Every failure of the matrix engine is a list of located `Violation`s; the
exception only bundles them so pure functions can stop early. The first
violation's message is the exception text (it mirrors the reference tool's
error text where the spec pins one).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from governance.diagnostics import FindingsError, Violation

# code -> rule name. Ranges: 50x key resolution, 51x master config,
# 52x runner file / runner data, 53x changelog reading, 54x append-only,
# 55x plan warnings.
RULES: dict[str, str] = {
    "GOV501": "unknown-config-key",
    "GOV502": "wildcard-matches-nothing",
    "GOV510": "master-config-unreadable",
    "GOV511": "master-config-duplicate-key",
    "GOV512": "master-config-wildcard-key",
    "GOV513": "master-config-unknown-field",
    "GOV514": "master-config-missing-field",
    "GOV515": "master-config-invalid-value",
    "GOV516": "master-config-rule",
    "GOV517": "master-config-empty-search-space",
    "GOV520": "runner-file-invalid",
    "GOV521": "runner-label-unknown",
    "GOV522": "runner-hardware-budget",
    "GOV530": "changelog-deletion",
    "GOV531": "changelog-no-additions",
    "GOV532": "changelog-entry-invalid",
    "GOV533": "changelog-sweep-mix",
    "GOV540": "append-only-base-missing",
    "GOV541": "append-only-scope",
    "GOV542": "append-only-delta",
    "GOV550": "plan-unrun-sequence-length",
}


def violation(
    code: str,
    message: str,
    path: str = "",
    line: int = 0,
    column: int = 0,
    hint: str = "",
    source: str = "",
) -> Violation:
    return Violation(
        code=code,
        rule=RULES[code],
        message=message,
        path=path,
        line=line,
        column=column,
        hint=hint,
        source=source,
    )


class MatrixError(FindingsError):
    """Matrix generation or planning stopped; `violations` says where and why."""

    def __init__(self, violations: Sequence[Violation], hint: str = "") -> None:
        if not violations:
            raise ValueError("MatrixError needs at least one violation")
        super().__init__(violations[0].message, list(violations), hint or violations[0].hint)


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """A hint naming the closest candidates, or "" when nothing is close."""
    close = difflib.get_close_matches(word, list(candidates), n=3, cutoff=0.6)
    if not close:
        return ""
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"
