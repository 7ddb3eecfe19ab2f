"""What the prepare-merge steps share: the options of a run (`PrepareOptions`),
what every step reads and reports to (`Work`), the refusal a step raises
(`Refused`) and the results one step hands the next (`Fetched`, `Merged`,
`Resolved`, `Prepared`). In a module of its own so that `prepare` and the step
modules it runs (`steps`, `changelog_steps`, `landing`) import it, never
each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from governance.core.diagnostics import Violation
from governance.core.settings import Settings
from governance.forge.base import Forge, PullRequest
from governance.git.objects import MergeTree
from governance.git.repo import GitRepo
from governance.merge import journal as jr
from governance.merge.report import LinkRewritten, MergeReport, StepReport
from governance.merge.sweep_seam import SweepHook

LOCAL_CHECK = "check-changelog"  # the name gov's own check is recorded under on the local forge
# What prepare-merge waits for, and `gov queue add --all-green` requires, unless told otherwise.
REQUIRED_CHECKS: tuple[str, ...] = (LOCAL_CHECK,)


@dataclass(frozen=True, slots=True)
class PrepareOptions:
    pr: int
    dry_run: bool = False
    push: bool = True
    merge: bool = True
    main_branch: str = "main"
    remote: str | None = None  # where main and the PR live (github: "origin"); None: local refs
    required_checks: tuple[str, ...] = REQUIRED_CHECKS
    check_timeout: float = 900.0
    poll_interval: float = 5.0
    plan: bool = True  # compute the post-merge plan (step `plan`)
    # The tree the prepared commit must have ('' any): `gov queue run --ahead`
    # lands only the candidate it tested.
    expect_tree: str = ""


class Refused(Exception):
    def __init__(self, step: StepReport) -> None:
        super().__init__(step.detail)
        self.step = step


@dataclass
class Work:
    """What every step of one run reads and reports to: the repository, the
    forge, the options, the report and the journal. What a step computes
    for the next one is its result (below), passed on by `prepare.run_steps`."""

    repo: GitRepo
    settings: Settings
    forge: Forge
    options: PrepareOptions
    report: MergeReport
    journal_path: Path
    sweep: SweepHook | None
    say: Callable[[str], None]
    current: str = "preflight"
    journal: jr.Journal | None = None  # from the first write (`commit`) on

    def step(self, name: str) -> None:
        self.current = name
        self.say(f"prepare-merge: {name}")

    def ok(self, detail: str, outcome: str = "ok") -> None:
        self.report.add(StepReport(self.current, outcome, detail))  # type: ignore[arg-type]
        if self.journal is not None and outcome != "would":
            jr.record(self.journal_path, self.journal, self.current)
        elif outcome != "would":
            jr.crash_point(self.current)  # nothing written yet: a crash leaves nothing

    def refuse(self, detail: str, violations: Iterable[Violation] = (), hint: str = "") -> Refused:
        return Refused(StepReport(self.current, "refused", detail, list(violations), hint))


# -- what the steps hand on -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fetched:
    """What preflight read: the PR, and main's tip it is to be merged onto."""

    pull: PullRequest
    main_tip: str


@dataclass(frozen=True, slots=True)
class Merged:
    """The merge, in memory: the merged tree (None when the PR already
    contains the base) and the changelog as resolved (None: deleted)."""

    tree: MergeTree | None
    data: bytes | None
    changed: bool = False  # data differs from what the merge (or the PR) has
    rewrites: tuple[LinkRewritten, ...] = ()


@dataclass(frozen=True, slots=True)
class Resolved:
    """The changelog as it will be committed (canonical links) on the merge."""

    tree: MergeTree | None
    data: bytes
    changed: bool
    rewrites: tuple[LinkRewritten, ...]


@dataclass(frozen=True, slots=True)
class Prepared:
    """The prepared commit, checked, and the entries it appends to the base."""

    commit: str
    additions: int
