"""Maintainers authorise reuse in PR comments: `/reuse-sweep-run [RUN_ID]` (pure).

InferenceX's own rule, which gov honours at merge (docs/sweeps.md, 'Reuse
authorised in comments'):

* the command counts only at the start of a line of a comment (an inline
  mention, a quoted reply `> /reuse-sweep-run 1`, a code span do not);
* only authors whose association is one of `reuse-authorizers` (default
  OWNER, MEMBER, COLLABORATOR) are heard; everyone else's command is ignored,
  and said so;
* the newest such comment wins: `/reuse-sweep-run RUN_ID` pins reuse to the
  runs imported from that CI run, a bare `/reuse-sweep-run` authorises reuse
  from any source (and so unpins an earlier pin).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

COMMAND = "/reuse-sweep-run"
DEFAULT_AUTHORIZERS = ("OWNER", "MEMBER", "COLLABORATOR")
_LINE = re.compile(r"^[ \t]*/reuse-sweep-run(?:[ \t]+(?P<run>\S+))?[ \t]*$", re.MULTILINE)
_RUN_ID = re.compile(r"[1-9][0-9]{0,19}")


class CommentLike(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def body(self) -> str: ...
    @property
    def author(self) -> str: ...
    @property
    def created_at(self) -> str: ...
    @property
    def author_association(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Authorization:
    """The comment that decides reuse: a pin to one CI run, or any source."""

    comment_id: int
    author: str
    association: str
    created_at: str
    run_id: str | None  # None: a bare command (any source)

    def describe(self) -> str:
        what = f"pinned to CI run {self.run_id}" if self.run_id else "authorised (any source)"
        return (
            f"reuse {what} by @{self.author} ({self.association}) in comment {self.comment_id}"
            f" at {self.created_at or '?'}"
        )

    def source(self) -> str | None:
        """The run provenance reuse is pinned to (`CI run N`), None for any."""
        return f"CI run {self.run_id}" if self.run_id else None


@dataclass(frozen=True, slots=True)
class Heard:
    """What the comments said: the deciding authorisation (or none) and the
    commands that were ignored, with why."""

    authorization: Authorization | None
    ignored: tuple[str, ...] = ()


def command_of(body: str) -> tuple[bool, str | None, str]:
    """(has a command, its run id, a problem) of a comment: the last line
    that is the command; a run id that is not a number is a problem."""
    found = list(_LINE.finditer(body))
    if not found:
        return False, None, ""
    run = found[-1].group("run")
    if run is not None and not _RUN_ID.fullmatch(run):
        return True, None, f"{run!r} is not a run id"
    return True, run, ""


def hear(comments: Iterable[CommentLike], authorizers: Sequence[str]) -> Heard:
    allowed = {name.upper() for name in authorizers}
    ordered = sorted(comments, key=lambda c: (c.created_at, c.id))
    deciding: Authorization | None = None
    ignored: list[str] = []
    for comment in ordered:
        has, run, problem = command_of(comment.body)
        if not has:
            continue
        association = (comment.author_association or "NONE").upper()
        if association not in allowed:
            ignored.append(
                f"comment {comment.id} by @{comment.author} ({association}): not one of "
                f"{', '.join(sorted(allowed))}"
            )
            continue
        if problem:
            ignored.append(f"comment {comment.id} by @{comment.author}: {problem}")
            continue
        deciding = Authorization(comment.id, comment.author, association, comment.created_at, run)
    return Heard(deciding, tuple(ignored))


class HasDetail(Protocol):
    @property
    def detail(self) -> str: ...


IMPORTED = "imported from "


def provenance(detail: str) -> str:
    """Where an imported run came from (`CI run 123`, `artifacts /path`), from
    its detail (`imported from CI run 123: bmk_x/`); "" for gov's own runs."""
    if not detail.startswith(IMPORTED):
        return ""
    return detail.removeprefix(IMPORTED).partition(": ")[0]


R = TypeVar("R", bound=HasDetail)


def authorised(runs: Sequence[R], heard: Heard | None, *, required: bool) -> tuple[list[R], str]:
    """The runs reuse may draw on, and what decided it (for the report):
    pinned to one CI run's imported runs, any run (a bare command, or no
    command when none is required), or none (required, and nobody allowed
    said so)."""
    decided = heard.authorization if heard is not None else None
    if decided is None:
        if required:
            return [], (
                "reuse not authorised: no /reuse-sweep-run comment by an allowed author "
                "(reuse-requires-authorization): every row reruns"
            )
        return list(runs), ""
    pinned = decided.source()
    if pinned is None:
        return list(runs), decided.describe()
    kept = [run for run in runs if provenance(run.detail) == pinned]
    return kept, decided.describe() + f": {len(kept)} run(s) of it recorded here"
