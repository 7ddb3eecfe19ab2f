"""`gov audit`: replay first-parent history and check every changelog change.

Each commit is checked against its first parent in main mode and, when its
subject carries a PR number, in PR mode with that number, under the
configuration that existed at that commit:

* master configs are looked up where they were then: the configured path,
  else the path the previous commit used, else a file with the same name
  elsewhere in that commit's tree (InferenceX moved `.github/configs/` to
  `configs/` in #1992). A commit with no master config at all is checked
  without key resolution and marked so, not failed;
* links to the repository's former names (`former-repositories`) and to the
  name its own changelog used at that commit count as canonical.

Commits are streamed: one commit's blobs are held at a time, so memory stays
flat however long the history is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from governance.changelog.rules import CheckMode, KnownKeys, Verdict, check
from governance.check.snapshots import catalog_of
from governance.core.codes import split_ignored
from governance.core.diagnostics import UsageError
from governance.core.layout import same_name
from governance.core.links import repository_from_links
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
    # "checked", "off" (--no-configs) or "absent" (no master config existed then)
    configs: str = "checked"
    master_configs: tuple[str, ...] = ()  # the paths read at this commit

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
            "configs": self.configs,
            "master_configs": list(self.master_configs),
            "main": verdict(self.main),
            "pr_mode": verdict(self.pr_mode),
        }


def changelog_commits(
    repo: GitRepo,
    settings: Settings,
    rev: str,
    *,
    max_count: int | None = None,
    since: str | None = None,
) -> list[CommitInfo]:
    """First-parent commits of `rev` (or of the range `A..B`) whose changelog
    differs from their parent's, oldest first."""
    for side in rev.replace("...", "..").split(".."):
        if side:
            repo.resolve(side)  # a located UsageError for a misspelled side
    if "..." in rev:
        raise UsageError(
            f"'{rev}': a symmetric range has no first-parent history",
            "use A..B (the commits of B that A does not have)",
        )
    commits = repo.first_parent_commits(rev, settings.changelog, max_count=max_count, since=since)
    return [c for c in commits if c.parent]


class ConfigPaths:
    """Where each configured master config lived, commit by commit (oldest
    first): the configured path, the previous commit's path, else the file of
    the same name in the commit's tree."""

    def __init__(self, repo: GitRepo, configured: tuple[str, ...]) -> None:
        self.repo = repo
        self.configured = configured
        self.last: dict[str, str] = {path: path for path in configured}

    def at(self, commit: str) -> dict[str, str]:
        """{path at this commit: blob id} of the master configs that exist."""
        wanted = {*self.configured, *self.last.values()}
        ids = self.repo.blob_ids(commit, wanted)
        found: dict[str, str] = {}
        listing: list[str] | None = None
        for path in self.configured:
            for candidate in (path, self.last[path]):
                if ids.get(candidate):
                    found[candidate] = ids[candidate] or ""
                    self.last[path] = candidate
                    break
            else:
                if listing is None:
                    listing = self.repo.file_paths(commit)
                moved = same_name(listing, path)
                if moved is not None:
                    blob = self.repo.blob_ids(commit, [moved])[moved]
                    if blob:
                        found[moved] = blob
                        self.last[path] = moved
        return found


class _KeysAt:
    """The config keys of the master configs at a commit, remembered for the
    last set of blob ids only (consecutive commits often share them)."""

    def __init__(self, repo: GitRepo, settings: Settings) -> None:
        self.repo = repo
        self.paths = ConfigPaths(repo, settings.master_configs)
        self._last: tuple[tuple[tuple[str, str], ...], KnownKeys] | None = None

    def at(self, commit: str) -> tuple[KnownKeys | None, tuple[str, ...]]:
        found = self.paths.at(commit)
        if not found:
            return None, ()
        ident = tuple(sorted(found.items()))
        if self._last is None or self._last[0] != ident:
            files = [(path, self.repo.read_blob_by_id(blob)) for path, blob in found.items()]
            catalog = catalog_of(self.repo, [*files, ("", None)])
            self._last = (ident, KnownKeys(catalog.keys, catalog.files_label))
        return self._last[1], tuple(found)


def audit(
    repo: GitRepo, settings: Settings, commits: list[CommitInfo], *, configs: bool
) -> Iterator[AuditRow]:
    path = settings.changelog
    keys = _KeysAt(repo, settings) if configs else None
    for info in commits:
        assert info.parent is not None
        base = repo.read_blob(info.parent, path)
        head = repo.read_blob(info.sha, path)
        if head is None:  # the file was deleted: report it as every entry deleted
            head = b"[]\n"
        then = repository_from_links(base) if base else None
        policy = settings.history_policy(*([then] if then else []))
        known: KnownKeys | None = None
        state = "off"
        masters: tuple[str, ...] = ()
        if keys is not None:
            known, masters = keys.at(info.sha)
            state = "checked" if known is not None else "absent"
        pr = settings.pr_from_subject(info.subject)
        main = check(base, head, policy, CheckMode.main(), path=path, known_keys=known)
        main.violations, _ = split_ignored(main.violations, settings.ignore)
        pr_mode = None
        if pr is not None:
            pr_mode = check(base, head, policy, CheckMode.pr_mode(pr), path=path, known_keys=known)
            pr_mode.violations, _ = split_ignored(pr_mode.violations, settings.ignore)
        yield AuditRow(info.sha, info.parent, info.subject, pr, main, pr_mode, state, masters)
