"""A train of three PRs forked from the same main, each appending one entry to
the changelog (so each conflicts with the others there), for the queue tests.

PR 101 and PR 103 are good; PR 102 names a config key no master config has,
which passes its own validation (PR mode checks no config keys) and is refused
at prepare-merge's `check` step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from governance.core.state import StateLayout
from governance.forge.local import LocalForge
from governance.git.repo import GitRepo
from governance.merge.queue import CarOptions, RunResult, Say, prepare_car, run_queue
from governance.merge.queue_ahead import Ahead
from governance.merge.queue_store import QueueStore
from tests.harness import Repo, commit_example

LINK = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
CHANGELOG = "perf-changelog.yaml"
KEYS = {
    101: "dsr1-fp8-mi300x-sglang",
    102: "dsr1-fp8-zz999-sglang",
    103: "dsv4-fp8-h200-vllm",
    104: "dsv4-fp8-mi300x-vllm",  # a fourth good PR, for the parking test
}


def entry(pr: int, link: str = "XXX") -> str:
    return (
        f"\n- config-keys:\n    - {KEYS[pr]}\n  description:\n"
        f'    - "Queue test entry of PR {pr}"\n  pr-link: {link}\n'
    )


@dataclass
class Train:
    repo: Repo
    original: bytes  # main's changelog before any car
    base: str  # main's tip before any car

    @property
    def path(self) -> Path:
        return self.repo.path

    def git(self, *args: str, check: bool = True) -> str:
        return self.repo.git(*args, check=check)

    def forge(self) -> LocalForge:
        return LocalForge(GitRepo(self.path), repository_slug="SemiAnalysisAI/InferenceX")

    def store(self) -> QueueStore:
        return QueueStore(StateLayout(GitRepo(self.path).git_dir))

    def run(self, *, dry_run: bool = False, ahead: int = 0, say: Say | None = None) -> RunResult:
        """`gov queue run [--ahead N]` in process."""
        repo = GitRepo(self.path)
        options = CarOptions("main", poll_interval=0.01, check_timeout=1.0, dry_run=dry_run)
        store, forge = self.store(), self.forge()
        speculate = Ahead(repo, store, forge, options, ahead) if ahead else None
        return run_queue(
            repo, store, forge, prepare_car(repo, options),
            main_branch="main", dry_run=dry_run, say=say, speculate=speculate,
        )  # fmt: skip

    def landed(self) -> list[str]:
        """Main's first-parent commits since the train started, oldest first."""
        out = self.git("rev-list", "--first-parent", "--reverse", f"{self.base}..main")
        return out.split()

    def changelog(self, rev: str = "main") -> bytes:
        return self.repo.show(rev, CHANGELOG)

    def expected(self, *prs: int) -> bytes:
        """Main's original bytes, then each PR's entry with its canonical link."""
        return self.original + "".join(entry(pr, f"{LINK}{pr}") for pr in prs).encode()

    def tree(self, rev: str) -> str:
        return self.git("rev-parse", f"{rev}^{{tree}}")

    def leftovers(self) -> list[str]:
        """What gov may not leave behind: refs under refs/gov, linked worktrees, journals."""
        found = self.git("for-each-ref", "--format=%(refname)", "refs/gov").split()
        worktrees = self.git("worktree", "list", "--porcelain").count("worktree ")
        if worktrees != 1:
            found.append(f"{worktrees} worktrees")
        journals = self.path / ".git" / "gov" / "merge"
        found += [p.name for p in journals.glob("*.json")] if journals.exists() else []
        return found


def example_train(
    make_repo: Callable[..., Repo], name: str, prs: tuple[int, ...] = (101, 102, 103)
) -> Train:
    """The train on a repository of its own holding the shipped example state
    (the `example_repo` fixture's), its cars queued in PR order."""
    repo = commit_example(make_repo(name))
    train = build_train(repo, prs)
    store = train.store()
    for i, pr in enumerate(prs):
        store.add(pr, "normal", f"2026-08-15T10:00:{i + 1:02d}")
    return train


def build_train(repo: Repo, prs: tuple[int, ...] = (101, 102, 103)) -> Train:
    repo.configure_identity()
    base = repo.sha("main")
    original = repo.show("main", CHANGELOG)
    forge = LocalForge(GitRepo(repo.path), repository_slug="SemiAnalysisAI/InferenceX")
    for pr in prs:
        repo.git("checkout", "-q", "-b", f"pr-{pr}", base)
        path = repo.path / CHANGELOG
        path.write_bytes(original + entry(pr).encode())
        repo.commit(f"Entry of PR {pr}")
        forge.open_pull(pr, f"pr-{pr}", title=f"PR {pr}")
    repo.git("checkout", "-q", "main")
    return Train(repo, original, base)
