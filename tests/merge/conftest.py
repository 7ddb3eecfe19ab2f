"""A benchmark repository with PR #2194 open on the local forge, main moved on.

`pr_setup` builds: main = the shipped example; branch `bringup` appends an
entry with `pr-link: XXX` (PR #2194); then main gains PR #2195's entry, so
merging main into the PR conflicts in the changelog only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from governance.core.settings import Settings
from governance.forge.local import LocalForge
from governance.git.repo import GitRepo
from governance.merge.prepare import PrepareOptions, prepare_merge
from governance.merge.report import MergeReport
from governance.merge.sweep_seam import SweepFunction, SweepHook
from tests.harness import Repo

PR = 2194
LINK = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
BRINGUP = (
    "\n- config-keys:\n"
    "    - dsv4-fp8-mi300x-vllm\n"
    "  description:\n"
    '    - "Raise the MI300X DSv4 FP8 concurrency ceiling"\n'
    "  pr-link: XXX\n"
)
OTHER = (
    "\n- config-keys:\n"
    "    - dsv4-fp8-h200-vllm\n"
    "  description:\n"
    '    - "Retune H200 DSv4 FP8"\n'
    f"  pr-link: {LINK}2195\n"
)
CHANGELOG = "perf-changelog.yaml"


@dataclass
class Setup:
    repo: Repo
    pr_head: str
    main_tip: str

    @property
    def path(self) -> Path:
        return self.repo.path

    def git(self, *args: str, check: bool = True) -> str:
        return self.repo.git(*args, check=check)

    def gitrepo(self) -> GitRepo:
        return GitRepo(self.path)

    def forge(self) -> LocalForge:
        return LocalForge(self.gitrepo(), repository_slug="SemiAnalysisAI/InferenceX")

    def ref(self, name: str) -> str | None:
        out = self.git("rev-parse", "--verify", "-q", f"refs/heads/{name}", check=False)
        return out or None

    def scratch(self, pr: int = PR) -> str | None:
        """Where gov's scratch ref of PR `pr` points (None: absent)."""
        ref = f"refs/gov/prepare-merge/pr-{pr}"
        return self.git("rev-parse", "--verify", "-q", ref, check=False) or None

    def changelog(self, rev: str) -> bytes:
        return self.repo.show(rev, CHANGELOG)

    def journal(self) -> Path:
        return self.path / ".git" / "gov" / "merge" / f"pr-{PR}.json"

    def run(
        self,
        settings: Settings | None = None,
        sweep: SweepHook | SweepFunction | None = None,
        **options: object,
    ) -> MergeReport:
        """The service in-process, as `gov prepare-merge --pr 2194` calls it."""
        options = {"poll_interval": 0.01, "check_timeout": 1.0, **options}
        opts = PrepareOptions(PR, **options)  # type: ignore[arg-type]
        return prepare_merge(
            self.gitrepo(), settings or Settings(), self.forge(), opts, sweep=sweep
        )

    def snapshot(self) -> dict[str, str]:
        """Every ref and HEAD: what a refused run must leave exactly as it was."""
        refs = self.git("for-each-ref", "--format=%(refname) %(objectname)")
        head = self.git("symbolic-ref", "-q", "HEAD", check=False) or self.git("rev-parse", "HEAD")
        return {"HEAD": head, **dict(line.split() for line in refs.splitlines())}


def append(repo: Repo, text: str, message: str) -> str:
    path = repo.path / CHANGELOG
    path.write_bytes(path.read_bytes() + text.encode())
    return repo.commit(message)


@pytest.fixture
def pr_setup(example_repo: Repo) -> Setup:
    repo = example_repo
    repo.configure_identity()
    repo.git("checkout", "-q", "-b", "bringup")
    pr_head = append(repo, BRINGUP, "Raise MI300X DSv4 concurrency")
    repo.git("checkout", "-q", "main")
    main_tip = append(repo, OTHER, "Retune H200 DSv4 (#2195)")
    setup = Setup(repo, pr_head, main_tip)
    setup.forge().open_pull(PR, "bringup", title="Raise MI300X DSv4 FP8 concurrency")
    return setup
