"""Which link policy a check applies: draft, PR N, or main (the one import
the command line needs before it knows whether any rule will run)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Mode(StrEnum):
    DRAFT = "draft"  # placeholder or any canonical link
    PR = "pr"  # placeholder or the link to PR N
    MAIN = "main"  # canonical links (to PR N with expect_pr)


@dataclass(frozen=True, slots=True)
class CheckMode:
    kind: Mode = Mode.DRAFT
    pr: int | None = None  # N in PR mode; the expected PR in main mode

    @classmethod
    def pr_mode(cls, number: int) -> CheckMode:
        return cls(Mode.PR, number)

    @classmethod
    def main(cls, expect_pr: int | None = None) -> CheckMode:
        return cls(Mode.MAIN, expect_pr)
