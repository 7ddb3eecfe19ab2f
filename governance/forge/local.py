"""The embedded forge: pull requests without a server.

Records (PRs, labels, comments, check runs) live in SQLite at
`.git/gov/forge.sqlite3` (`core.state` lays it out, `localdb.py` holds the schema); branches are the repository's
own refs, so a PR's head is always read live from `refs/heads/<branch>`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from governance.core.state import StateLayout
from governance.forge.base import (
    BranchMover,
    CheckRecorder,
    CheckRun,
    Comment,
    Forge,
    ForgeError,
    HeadMovedError,
    MergeRefusedError,
    MergeResult,
    PullRequest,
    PullState,
)
from governance.forge.localdb import open_forge_database
from governance.git.repo import GitRepo

CHECK_CONCLUSIONS = frozenset(
    {"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"}
)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def one_line(text: str) -> str:
    """`text` on one line: every line break (\\n, \\r, U+2028, ...) and run
    of whitespace becomes one space."""
    return " ".join(text.split())


class LocalForge(Forge):
    kind = "local"

    def __init__(
        self,
        repo: GitRepo,
        *,
        main_branch: str = "main",
        repository_slug: str = "",
        author: str = "local",
        now: Callable[[], datetime] = _utc_now,
        db_path: Path | None = None,
    ) -> None:
        self.repo = repo
        self.main_branch = main_branch
        self.repository_slug = repository_slug
        self.author = author
        self._now = now
        self.db = open_forge_database(db_path or StateLayout(repo.git_dir).forge_db)
        self.db_path = self.db.path

    def __repr__(self) -> str:
        return f"LocalForge({str(self.db_path)!r}, main_branch={self.main_branch!r})"

    def _first_subject(self, base: str, head: str) -> str:
        """The subject of the branch's first commit since it forked from
        `base` (what the PR is about), else the tip's."""
        commits = self.repo.commits_between(f"refs/heads/{base}", head)
        return self.repo.commit_subject(commits[0] if commits else head)

    def _stamp(self) -> str:
        return self._now().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _pull_row(self, conn: sqlite3.Connection, number: int) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM pulls WHERE number = ?", (number,)).fetchone()
        if row is None:
            raise ForgeError(
                f"no local pull request #{number}",
                "see `gov pr list`, or open one: `gov pr open --number N --branch B`",
            )
        return row

    def _to_pull(self, conn: sqlite3.Connection, row: sqlite3.Row) -> PullRequest:
        labels = conn.execute(
            "SELECT name FROM labels WHERE number = ? ORDER BY name", (row["number"],)
        ).fetchall()
        if row["state"] == "merged":
            head_sha = row["merged_head_sha"] or ""
        else:
            head_sha = self.repo.ref_sha(f"refs/heads/{row['head_branch']}") or ""
        return PullRequest(
            number=row["number"],
            title=row["title"],
            state=row["state"],
            head_branch=row["head_branch"],
            head_sha=head_sha,
            base_branch=row["base_branch"],
            is_fork=False,  # a local branch is by definition in this repository
            labels=tuple(r["name"] for r in labels),
            url=f"local://{self.repository_slug or 'repo'}/pull/{row['number']}",
            draft=bool(row["draft"]),
            merge_commit_sha=row["merge_commit_sha"],
        )

    # -- pull requests ---------------------------------------------------------

    def open_pull(
        self,
        number: int,
        branch: str,
        *,
        title: str | None = None,
        labels: Sequence[str] = (),
        base_branch: str | None = None,
        draft: bool = False,
    ) -> PullRequest:
        """Record a PR for an existing local branch. `number` is explicit so it
        can mirror the real PR number the changelog's pr-link will name."""
        if number <= 0:
            raise ForgeError(f"invalid PR number {number}", "PR numbers are positive integers")
        base = base_branch or self.main_branch
        head = self.repo.ref_sha(f"refs/heads/{branch}")
        if head is None:
            raise ForgeError(f"no local branch '{branch}'", "create it first: git branch NAME")
        if branch == base:
            raise ForgeError(
                f"branch '{branch}' is the base branch", "open the PR from a topic branch"
            )
        if self.repo.ref_sha(f"refs/heads/{base}") is None:
            raise ForgeError(f"no local base branch '{base}'", "pass the main branch name")
        title = one_line(title or "") or one_line(self._first_subject(base, head))
        stamp = self._stamp()
        with self.db.connect(write=True) as conn:
            if conn.execute("SELECT 1 FROM pulls WHERE number = ?", (number,)).fetchone():
                raise ForgeError(
                    f"local pull request #{number} already exists", "pick another --number"
                )
            conn.execute(
                "INSERT INTO pulls (number, title, state, head_branch, base_branch, draft,"
                " created_at, updated_at) VALUES (?, ?, 'open', ?, ?, ?, ?, ?)",
                (number, title, branch, base, int(draft), stamp, stamp),
            )
            conn.executemany(
                "INSERT OR IGNORE INTO labels (number, name) VALUES (?, ?)",
                [(number, label) for label in labels],
            )
            return self._to_pull(conn, self._pull_row(conn, number))

    def close_pull(self, number: int) -> PullRequest:
        with self.db.connect(write=True) as conn:
            row = self._pull_row(conn, number)
            if row["state"] == "merged":
                raise MergeRefusedError(f"PR #{number} is already merged", "nothing to close")
            conn.execute(
                "UPDATE pulls SET state = 'closed', updated_at = ? WHERE number = ?",
                (self._stamp(), number),
            )
            return self._to_pull(conn, self._pull_row(conn, number))

    def get_pull(self, number: int) -> PullRequest:
        with self.db.connect(write=False) as conn:
            return self._to_pull(conn, self._pull_row(conn, number))

    def list_pulls(self, state: PullState | Literal["all"] = "open") -> list[PullRequest]:
        with self.db.connect(write=False) as conn:
            if state == "all":
                rows = conn.execute("SELECT * FROM pulls ORDER BY number").fetchall()
            else:
                rows = conn.execute(
                    "SELECT * FROM pulls WHERE state = ? ORDER BY number", (state,)
                ).fetchall()
            return [self._to_pull(conn, row) for row in rows]

    # -- labels and comments -----------------------------------------------------

    def add_label(self, number: int, label: str) -> None:
        with self.db.connect(write=True) as conn:
            self._pull_row(conn, number)
            conn.execute(
                "INSERT OR IGNORE INTO labels (number, name) VALUES (?, ?)", (number, label)
            )

    def remove_label(self, number: int, label: str) -> None:
        with self.db.connect(write=True) as conn:
            self._pull_row(conn, number)
            conn.execute("DELETE FROM labels WHERE number = ? AND name = ?", (number, label))

    def post_comment(self, number: int, body: str) -> Comment:
        stamp = self._stamp()
        with self.db.connect(write=True) as conn:
            self._pull_row(conn, number)
            cur = conn.execute(
                "INSERT INTO comments (number, author, body, created_at) VALUES (?, ?, ?, ?)",
                (number, self.author, body, stamp),
            )
            return Comment(int(cur.lastrowid or 0), body, self.author, stamp, "OWNER")

    def list_comments(self, number: int) -> list[Comment]:
        with self.db.connect(write=False) as conn:
            self._pull_row(conn, number)
            rows = conn.execute(
                "SELECT * FROM comments WHERE number = ? ORDER BY id", (number,)
            ).fetchall()
        # The local user owns the repository: the same standing GitHub gives OWNER.
        return [Comment(r["id"], r["body"], r["author"], r["created_at"], "OWNER") for r in rows]

    # -- checks --------------------------------------------------------------------

    @property
    def check_recorder(self) -> CheckRecorder:
        return self  # gov is the CI here: its checks are recorded on this forge

    def record_check(
        self,
        sha: str,
        name: str,
        *,
        status: Literal["queued", "in_progress", "completed"] = "completed",
        conclusion: str | None = None,
        details_url: str = "",
    ) -> CheckRun:
        """Append a check run for `sha` (a re-run appends; the newest wins)."""
        if status == "completed" and conclusion not in CHECK_CONCLUSIONS:
            raise ForgeError(
                f"a completed check needs a conclusion, got {conclusion!r}",
                f"use one of: {', '.join(sorted(CHECK_CONCLUSIONS))}",
            )
        if status != "completed" and conclusion is not None:
            raise ForgeError(f"a {status} check has no conclusion yet", "drop the conclusion")
        stamp = self._stamp()
        with self.db.connect(write=True) as conn:
            conn.execute(
                "INSERT INTO checks (sha, name, status, conclusion, details_url, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (sha, name, status, conclusion, details_url, stamp),
            )
        return CheckRun(name, status, conclusion, sha, stamp, details_url)

    def list_checks(self, sha: str, name: str | None = None) -> list[CheckRun]:
        query = "SELECT * FROM checks WHERE sha = ?"
        params: tuple[str, ...] = (sha,)
        if name is not None:
            query += " AND name = ?"
            params += (name,)
        with self.db.connect(write=False) as conn:
            rows = conn.execute(query + " ORDER BY id", params).fetchall()
        return [
            CheckRun(
                r["name"], r["status"], r["conclusion"], r["sha"], r["started_at"], r["details_url"]
            )
            for r in rows
        ]

    # -- branch updates and merge ------------------------------------------------

    @property
    def branch_mover(self) -> BranchMover:
        return self  # PR branches are this repository's own refs

    def move_branch(self, number: int, new_sha: str, *, expected_old_sha: str) -> PullRequest:
        """Move the PR branch to `new_sha`, compare-and-swap against `expected_old_sha`."""
        pr = self.get_pull(number)
        if pr.state != "open":
            raise MergeRefusedError(f"PR #{number} is {pr.state}", "only open PRs can be updated")
        ref = f"refs/heads/{pr.head_branch}"
        message = f"gov: update PR #{number}"
        if not self.repo.compare_and_swap_ref(ref, new_sha, expected_old_sha, message):
            raise HeadMovedError(number, expected_old_sha, self.repo.ref_sha(ref) or "")
        return self.get_pull(number)

    def merge_pull(
        self,
        number: int,
        expected_head_sha: str,
        *,
        method: Literal["squash"] = "squash",
        title: str | None = None,
        message: str | None = None,
    ) -> MergeResult:
        """Squash: one commit with the PR head's tree on top of the base tip.

        Taking the head's tree verbatim is only right when the head already
        contains the base tip (prepare-merge merges main in first); otherwise
        the squash would silently revert whatever landed on main meanwhile,
        so that case is refused rather than guessed at.
        """
        if method != "squash":
            raise MergeRefusedError(f"merge method {method!r} is not supported", "use squash")
        # The writer lock is held across the git steps so two forges cannot
        # both merge the same PR; the base ref itself is guarded by CAS. The
        # row is updated before the ref moves and committed after, so if the
        # commit fails the ref is put back and git and the database agree.
        moved: tuple[str, str, str] | None = None  # (ref, old, new) once main moved
        try:
            with self.db.connect(write=True) as conn:
                pr = self._to_pull(conn, self._pull_row(conn, number))
                base_ref, base_tip = self._check_mergeable(pr, expected_head_sha)
                # One line, so `(#N)` stays in the subject `gov audit` reads.
                subject = one_line(title or "") or f"{one_line(pr.title)} (#{number})"
                text = f"{subject}\n\n{message}" if message else subject
                squash = self.repo.objects.commit_tree(pr.head_sha, [base_tip], text)
                conn.execute(
                    "UPDATE pulls SET state = 'merged', merged_head_sha = ?, merge_commit_sha = ?,"
                    " updated_at = ? WHERE number = ?",
                    (pr.head_sha, squash, self._stamp(), number),
                )
                if not self.repo.compare_and_swap_ref(
                    base_ref, squash, base_tip, f"gov: squash-merge PR #{number}"
                ):
                    raise MergeRefusedError(
                        f"'{pr.base_branch}' moved while merging PR #{number}",
                        "merge the new main into the PR branch and try again",
                    )
                moved = (base_ref, base_tip, squash)
        except BaseException:
            if moved is not None:
                ref, old, new = moved
                self.repo.compare_and_swap_ref(ref, old, new, f"gov: undo merge of PR #{number}")
            raise
        return MergeResult(number, True, squash, "Pull Request successfully merged")

    def _check_mergeable(self, pr: PullRequest, expected_head_sha: str) -> tuple[str, str]:
        """(base ref, base tip) when `pr` may be squash-merged, else a refusal."""
        if pr.state != "open":
            raise MergeRefusedError(
                f"PR #{pr.number} is {pr.state}", "only open pull requests can be merged"
            )
        if pr.head_sha != expected_head_sha:
            raise HeadMovedError(pr.number, expected_head_sha, pr.head_sha)
        base_ref = f"refs/heads/{pr.base_branch}"
        base_tip = self.repo.ref_sha(base_ref)
        if base_tip is None:
            raise MergeRefusedError(f"base branch '{pr.base_branch}' is gone", "recreate it")
        if not self.repo.is_ancestor(base_tip, pr.head_sha):
            raise MergeRefusedError(
                f"PR #{pr.number} does not contain the tip of '{pr.base_branch}' ({base_tip[:12]})",
                f"merge {pr.base_branch} into {pr.head_branch} first (prepare-merge does this)",
            )
        return base_ref, base_tip


# -- services behind `gov pr ...` ------------------------------------------------


@dataclass(frozen=True, slots=True)
class PullDetails:
    pull: PullRequest
    comments: tuple[Comment, ...]
    checks: tuple[CheckRun, ...]


def pr_open(
    forge: LocalForge,
    number: int,
    branch: str,
    *,
    title: str | None = None,
    labels: Sequence[str] = (),
    base_branch: str | None = None,
) -> PullRequest:
    """`gov pr open --number N --branch B [--title T] [--label L ...] [--base B]`."""
    return forge.open_pull(number, branch, title=title, labels=labels, base_branch=base_branch)


def pr_list(forge: LocalForge, state: PullState | Literal["all"] = "open") -> list[PullRequest]:
    """`gov pr list [--state open|closed|merged|all]`."""
    return forge.list_pulls(state)


def pr_show(forge: LocalForge, number: int) -> PullDetails:
    """`gov pr show N`: the PR, its comments, and the check runs on its head."""
    pull = forge.get_pull(number)
    checks = forge.list_checks(pull.head_sha) if pull.head_sha else []
    return PullDetails(pull, tuple(forge.list_comments(number)), tuple(checks))


def pr_check(forge: LocalForge, number: int, name: str, conclusion: str) -> CheckRun:
    """`gov pr check N --name NAME --conclusion C`: record a completed check run
    on the PR's current head, as CI would (simulates CI on the local forge)."""
    pull = forge.get_pull(number)
    if pull.state != "open":
        raise ForgeError(
            f"PR #{number} is {pull.state}", "check runs are recorded on open pull requests"
        )
    if not pull.head_sha:
        raise ForgeError(
            f"PR #{number} has no head: branch '{pull.head_branch}' is missing",
            f"recreate the branch: git branch {pull.head_branch} <commit>",
        )
    return forge.record_check(pull.head_sha, name, conclusion=conclusion)
