"""The sweep seam of prepare-merge: what the `plan` step hands a sweep hook
(`SweepRequest`), what the hook returns (`SweepOutcome`), and the hook's type
(`SweepHook`, implemented by `merge.sweep_step.SweepAfterMerge`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from governance.core.diagnostics import Violation
from governance.sweeps.reuse_pin import Heard

if TYPE_CHECKING:
    from governance.matrix.plan import PlanResult


@dataclass(frozen=True, slots=True)
class SweepRequest:
    """What the sweep seam gets: the post-merge plan, the PR's commits (to
    find reusable results), the PR head and main tip it was merged from, and
    the prepared head."""

    pr: int
    plan: PlanResult
    pr_commits: tuple[str, ...]
    prepared: str
    dry_run: bool
    pr_head: str = ""
    main_tip: str = ""
    # What the PR's `/reuse-sweep-run` comments said (sweeps.reuse_pin).
    heard: Heard | None = None
    labels: tuple[str, ...] = ()  # the PR's labels (the `priority` rules read them)


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What the sweep seam returns: its report section, as text and data, and
    the findings that must stop the merge (rows that failed or cannot run)."""

    text: str
    data: dict[str, object]
    problems: list[Violation] = field(default_factory=list)
    # The PR's results beside main's (`gov results compare`), when there are any.
    results: str = ""
    results_data: dict[str, object] | None = None


class SweepHook(ABC):
    """Reuse and launching plug in here (governance.merge.sweep_step)."""

    @abstractmethod
    def __call__(self, request: SweepRequest) -> SweepOutcome: ...

    def landed(self, prepared: str, merged: str) -> str:
        """The prepared commit landed as `merged`: record it; returns a note for
        the `land` step ("" when there is nothing to say)."""
        return ""


# A bare function is a hook with nothing to record at landing.
SweepFunction = Callable[[SweepRequest], SweepOutcome]


class FunctionSweep(SweepHook):
    def __init__(self, sweep: SweepFunction) -> None:
        self.sweep = sweep

    def __call__(self, request: SweepRequest) -> SweepOutcome:
        return self.sweep(request)


def as_hook(sweep: SweepHook | SweepFunction | None) -> SweepHook | None:
    return sweep if sweep is None or isinstance(sweep, SweepHook) else FunctionSweep(sweep)
