"""The exception that carries the matrix engine's violations (codes GOV5xx
live in governance.core.codes with every other rule).

Every failure of the matrix engine is a list of located `Violation`s; the
exception only bundles them so pure functions can stop early. The first
violation's message is the exception text (it mirrors the reference tool's
error text where tests compare it).
"""

from __future__ import annotations

from collections.abc import Sequence

from governance.core.diagnostics import FindingsError, Violation


class MatrixError(FindingsError):
    """Matrix generation or planning stopped; `violations` says where and why."""

    def __init__(self, violations: Sequence[Violation], hint: str = "") -> None:
        if not violations:
            raise ValueError("MatrixError needs at least one violation")
        # The findings carry the messages; the error itself only summarises,
        # so a reporter that prints both never says the same thing twice.
        what = "1 finding" if len(violations) == 1 else f"{len(violations)} findings"
        super().__init__(f"matrix: {what}", list(violations), hint or violations[0].hint)
