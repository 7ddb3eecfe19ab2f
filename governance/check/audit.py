"""`gov audit`: replay first-parent history and check every changelog change.

Each commit is checked against its first parent in main mode and, when its
subject carries a PR number, in PR mode with that number. Parsed entries are
cached by their bytes, so history costs one parse per distinct entry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from governance.changelog.rules import CheckMode, KnownKeys, Verdict, check
from governance.check.service import HeadSource, head_catalog, known_keys
from governance.core.diagnostics import Violation
from governance.core.settings import Settings
from governance.git.repo import CommitInfo, GitRepo


@dataclass(slots=True)
class AuditRow:
    commit: str
    parent: str | None
    subject: str
    pr: int | None
    main: Verdict
    pr_mode: Verdict | None

    def to_dict(self) -> dict[str, object]:
        def verdict(v: Verdict | None) -> dict[str, object] | None:
            if v is None:
                return None
            return {"ok": v.ok, "violations": [x.to_dict() for x in v.violations]}

        return {
            "commit": self.commit,
            "parent": self.parent,
            "pr": self.pr,
            "subject": self.subject,
            "main": verdict(self.main),
            "pr_mode": verdict(self.pr_mode),
        }


def changelog_commits(repo: GitRepo, settings: Settings, rev: str) -> list[CommitInfo]:
    """First-parent commits of `rev` whose changelog differs from their parent's."""
    sha = repo.resolve(rev)
    return [c for c in repo.first_parent_commits(sha, settings.changelog) if c.parent]


def audit(
    repo: GitRepo, settings: Settings, commits: list[CommitInfo], *, configs: bool
) -> Iterator[AuditRow]:
    policy = settings.policy()
    path = settings.changelog
    for info in commits:
        assert info.parent is not None
        base = repo.read_blob(info.parent, path)
        head = repo.read_blob(info.sha, path)
        if head is None:  # the file was deleted: report it as every entry deleted
            head = b"[]\n"
        known: KnownKeys | None = None
        problems: list[Violation] = []
        if configs:
            catalog = head_catalog(repo, settings, HeadSource.REF, info.sha)
            known, problems = known_keys(catalog, settings)
        pr = settings.pr_from_subject(info.subject)
        main = check(base, head, policy, CheckMode.main(), path=path, known_keys=known)
        main.violations += problems
        pr_mode = None
        if pr is not None:
            pr_mode = check(base, head, policy, CheckMode.pr_mode(pr), path=path, known_keys=known)
            pr_mode.violations += problems
        yield AuditRow(info.sha, info.parent, info.subject, pr, main, pr_mode)
