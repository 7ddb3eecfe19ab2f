"""The changelog merge driver on files (`gov merge-driver`) and its
installation in a repository (`gov install-merge-driver`).

Git's contract for a merge driver: read `%O` (merge-base), `%A` (ours) and
`%B` (theirs), leave the result in `%A`, exit 0 when the merge is clean and
non-zero when it is not (git then records a conflict and shows `%A`). The
changelog logic itself is `changelog.merge_driver` (pure); this module only
decides which side is main, reads and writes the files, and falls back
to git's own text merge when that logic refuses.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from governance.core.atomic import write_atomically
from governance.core.diagnostics import GovError, Violation

if TYPE_CHECKING:  # the CLI imports this module for its option types: keep it light
    from governance.changelog.edit import DroppedEntry
    from governance.core.links import LinkPolicy
    from governance.git.repo import GitRepo

DRIVER_NAME = "gov"
DRIVER_DESCRIPTION = (
    "gov: append-only changelog merge (keeps main's bytes, appends the PR's entries)"
)
MERGE_FILE_LABELS = ("ours", "merge-base", "theirs")


class MainSide(StrEnum):
    """Which of git's two sides is main's changelog."""

    auto = "auto"
    ours = "ours"  # %A: merging a PR into main, or rebasing a PR onto main
    theirs = "theirs"  # %B: merging main into a PR branch


def main_is_ours(
    repo: GitRepo,
    main_branch: str,
    side: MainSide = MainSide.auto,
    *,
    path: str,
    ours: bytes,
    theirs: bytes,
) -> bool:
    """Whether `%A` (`ours`) holds main's side of the merge.

    The result must start with main's bytes whatever the direction, so the
    driver has to know which side is main. Auto, first by content: the side
    whose bytes are the changelog at the tip of the main branch (local or
    `origin/`) is main; this holds for `git merge`, `git merge-tree` and the
    first pick of a rebase alike. When that does not decide (main moved, or
    both or neither match), by situation: ours is main when the checked-out
    branch is the main branch or a rebase is in progress (rebase replays the
    PR's commits onto main); otherwise theirs is (`git merge main` on a PR
    branch, the direction prepare-merge uses).
    """
    if side is not MainSide.auto:
        return side is MainSide.ours
    tips = {repo.ref_sha(f"refs/heads/{main_branch}")}
    tips.add(repo.ref_sha(f"refs/remotes/origin/{main_branch}"))
    main_versions = {repo.read_blob(tip, path) for tip in tips if tip}
    main_versions.discard(None)
    ours_main, theirs_main = ours in main_versions, theirs in main_versions
    if ours_main != theirs_main:
        return ours_main
    return repo.worktree.current_branch() == main_branch or repo.worktree.rebase_in_progress()


@dataclass(frozen=True, slots=True)
class DriverOutcome:
    """What the driver left in `%A`, and why."""

    clean: bool
    merged_by: str  # "gov" (changelog rules) or "text" (git merge-file fallback)
    conflicts: int = 0  # conflict hunks in the text fallback
    violations: tuple[Violation, ...] = ()  # why the changelog merge refused
    dropped: tuple[DroppedEntry, ...] = ()  # PR entries main had already gained
    main_is_ours: bool = False

    def explain(self, shown: str) -> list[str]:
        """What the driver says on stderr: each refusal (the pure merge names
        its sides ours = the PR, theirs = main; users read "PR" and "main"),
        entries not appended twice, and what the text fallback did."""
        sides = {"ours": "PR", "theirs": "main", "pr": "PR"}
        lines: list[str] = []
        for finding in self.violations:
            side = sides.get(finding.source, finding.source)
            message = finding.message
            if message.startswith(f"{finding.source} "):  # "ours changed" -> "the PR side changed"
                message = f"the {side} side{message[len(finding.source) :]}"
            lines.append(f"{finding.located()} ({side} side): {finding.code} {message}")
            if finding.hint:
                lines.append(f"  hint: {finding.hint}")
        for dropped in self.dropped:
            lines.append(
                f"gov merge-driver: {shown}: PR entry {dropped.pr_entry} is already on main "
                f"(main entry {dropped.main_entry}); not appended twice"
            )
        if self.merged_by == "text":
            main_name = "ours" if self.main_is_ours else "theirs"
            what = (
                "git's text merge merged it cleanly"
                if self.clean
                else f"git's text merge left {self.conflicts} conflict(s) with markers"
            )
            lines.append(
                f"gov merge-driver: {shown}: gov did not merge it (main = {main_name}); {what}"
            )
            if not self.clean:
                lines.append(
                    "  hint: resolve with `gov resolve-conflict` (PR branch merging main), "
                    f"or edit the markers by hand, then `git add {shown}`"
                )
        return lines


def run_driver(
    repo: GitRepo,
    ancestor: Path,
    current: Path,
    other: Path,
    *,
    path: str,
    policy: LinkPolicy,
    pr: int | None = None,
    main_side: MainSide = MainSide.auto,
    main_branch: str = "main",
    marker_size: int = 7,
) -> DriverOutcome:
    """Merge the three versions and leave the result in `current` (`%A`).

    `current` is only ever replaced whole by an atomic rename, so a crash or
    an error at any point leaves git's original `%A` bytes in place (git then
    reports a conflict on them): nothing is lost on any path.
    """
    base, ours, theirs = (_read(file) for file in (ancestor, current, other))
    main_ours = main_is_ours(repo, main_branch, main_side, path=path, ours=ours, theirs=theirs)
    pr_side, main = (theirs, ours) if main_ours else (ours, theirs)
    from governance.changelog.merge_driver import merge_driver

    result = merge_driver(base, pr_side, main, pr, policy, path=path)
    if result.ok:
        if result.data != ours:
            write_atomically(current, result.data)
        return DriverOutcome(True, "gov", dropped=result.dropped, main_is_ours=main_ours)
    # Refused (a side rewrote history, a side does not parse, ...): do what git
    # would have done without the driver, so the user meets an ordinary
    # conflict and can run `gov resolve-conflict` on the index stages.
    status, merged = repo.objects.merge_file(
        current, ancestor, other, labels=MERGE_FILE_LABELS, marker_size=marker_size
    )
    if not 0 <= status <= 127:
        raise GovError(
            f"git merge-file failed on {path} (status {status})",
            "resolve the conflict by hand: git checkout --conflict=merge " + path,
        )
    write_atomically(current, merged)
    return DriverOutcome(status == 0, "text", status, result.violations, result.dropped, main_ours)


def _read(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as exc:
        raise GovError(f"cannot read {file}: {exc.strerror}", "is git running the driver?") from exc


# -- installation ----------------------------------------------------------------


class AttributesFile(StrEnum):
    gitattributes = "gitattributes"  # committed: every clone that installs the driver uses it
    info = "info"  # .git/info/attributes: this clone only, nothing to commit


@dataclass(slots=True)
class InstallReport:
    """What install did (or, with check, would do)."""

    changes: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def installed(self) -> bool:
        return not self.changes


def driver_command(executable: str) -> str:
    """The `merge.gov.driver` value. Git substitutes the placeholders with
    shell-quoted paths and runs the line with `sh -c`, so the executable is
    quoted here and the placeholders are left bare."""
    return f"{shlex.quote(executable)} merge-driver %O %A %B %P"


def attributes_line(changelog: str) -> str:
    """The attributes line for the changelog, anchored at the repository root
    so a file of the same name in a subdirectory is not affected."""
    pattern = "/" + changelog.lstrip("/")
    if any(ch.isspace() or ch in '"\\' for ch in pattern):
        escaped = pattern.replace("\\", "\\\\").replace('"', '\\"')
        pattern = f'"{escaped}"'  # gitattributes accepts C-style quoted patterns
    return f"{pattern} merge={DRIVER_NAME}"


def install(
    repo: GitRepo,
    changelog: str,
    executable: str,
    *,
    attributes: AttributesFile = AttributesFile.gitattributes,
    check: bool = False,
) -> InstallReport:
    """Configure the driver and route the changelog to it. Idempotent: a
    second run finds everything in place and changes nothing. With `check`,
    nothing is written and the report lists what is missing."""
    report = InstallReport()
    wanted = {
        f"merge.{DRIVER_NAME}.name": DRIVER_DESCRIPTION,
        f"merge.{DRIVER_NAME}.driver": driver_command(executable),
    }
    for key, value in wanted.items():
        current = repo.config_get(key)
        if current == value:
            report.unchanged.append(f"git config {key} is already set")
            continue
        verb = "set" if current is None else f"replace {current!r} in"
        report.changes.append(f"{verb} git config {key} = {value}")
        if not check:
            repo.config_set(key, value)

    target = repo.root / ".gitattributes"
    if attributes is AttributesFile.info:
        target = repo.worktree.git_path("info/attributes")
    shown = _shown(repo, target)
    line = attributes_line(changelog)
    value = repo.worktree.attribute(changelog, "merge")
    if value == DRIVER_NAME:
        report.unchanged.append(f"{changelog} already has merge={DRIVER_NAME}")
    else:
        report.changes.append(f"add `{line}` to {shown}")
        if not check:
            _append_line(target, line)
            value = repo.worktree.attribute(changelog, "merge")
            if value != DRIVER_NAME:  # e.g. a later line or info/attributes overrides it
                report.warnings.append(
                    f"git still resolves merge={value} for {changelog}: "
                    "another attributes line overrides it (git check-attr merge -- "
                    f"{changelog})"
                )
            elif attributes is AttributesFile.gitattributes:
                report.warnings.append(f"commit {shown} so every clone routes the changelog")
    if attributes is AttributesFile.gitattributes:
        _route_every_branch(repo, line, report, check=check)
    return report


def _route_every_branch(repo: GitRepo, line: str, report: InstallReport, *, check: bool) -> None:
    """Git reads a merge's attributes from the branch being merged into, so a
    branch forked before `.gitattributes` had the line would merge the
    changelog without the driver: the same line in `.git/info/attributes`
    (this clone, every branch) closes that gap, once."""
    info = repo.worktree.git_path("info/attributes")
    shown = _shown(repo, info)
    present = info.is_file() and line in info.read_text("utf-8", "replace").splitlines()
    if present:
        report.unchanged.append(f"{shown} already routes it on every branch")
        return
    report.changes.append(
        f"add `{line}` to {shown} (git reads it on every branch, also on those forked before "
        ".gitattributes had the line)"
    )
    if not check:
        _append_line(info, line)


def _shown(repo: GitRepo, target: Path) -> str:
    try:
        return str(target.relative_to(repo.root))
    except ValueError:
        return str(target)


def _append_line(target: Path, line: str) -> None:
    """Append one line, adding the newline a hand-edited file may lack."""
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.read_bytes() if target.is_file() else b""
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    write_atomically(target, old + sep + line.encode("utf-8") + b"\n")
