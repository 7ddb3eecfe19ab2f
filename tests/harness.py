"""The test harness: one repository builder, one way to run `gov`, one environment policy.

* `Repo` builds throwaway git repositories (fixed identity and dates, no signing,
  `main` as the first branch): write files, commit, branch, or commit straight
  onto a branch with plumbing so the worktree never changes.
* `run_gov(*args, cwd=..., env=...)` runs the `gov` application in this process
  with typer's `CliRunner`: the way to test a command.
* `run_process(argv, cwd=..., env=...)` runs a real subprocess (and
  `start_process` starts one to signal), for the cases where the process
  boundary is what is tested: the pre-commit hook entry point, signals and
  SIGKILL, the merge driver that git itself invokes, the installed console script.

Both runners apply the same environment policy (`gov_environment`) and return
the same `Result`, so a test can move between them without changing a line.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from governance.cli.app import app
from governance.cli.common import state
from governance.core.settings import Settings
from governance.git.repo import GitRepo

PROJECT = Path(__file__).resolve().parents[1]
# Beside the project; a worktree elsewhere names it with INFERENCEX_CORPUS, or
# finds it beside an ancestor (a worktree under /work/wt/NAME).
CORPUS = Path(
    os.environ.get("INFERENCEX_CORPUS")
    or next(
        (p / "shared" / "corpus" for p in PROJECT.parents if (p / "shared" / "corpus").is_dir()),
        PROJECT.parent / "shared" / "corpus",
    )
)
SCRIPTS_BUNDLE = CORPUS / "inferencex-scripts.bundle"
GOLDENS = CORPUS / "goldens"
# The default settings' files (InferenceX's layout); domain code has no defaults of its own.
DEFAULT_LAYOUT = Settings().layout()
MASTER_FILES = DEFAULT_LAYOUT.masters
AMD_MASTER, NVIDIA_MASTER = MASTER_FILES
RUNNER_FILE = DEFAULT_LAYOUT.runners

# A fixed identity and date, and no user or system git configuration, so tests
# behave the same on every machine.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "gov tests",
    "GIT_AUTHOR_EMAIL": "tests@gov.invalid",
    "GIT_COMMITTER_NAME": "gov tests",
    "GIT_COMMITTER_EMAIL": "tests@gov.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}

# Variables of the developer's shell or CI that would change what gov or git
# does: git's own (a hook's GIT_DIR, GIT_INDEX_FILE...), gov settings, and the
# GitHub Actions context (step summary, token, event).
STRIPPED_PREFIXES = ("GIT_", "GOV_", "GITHUB_")

# Setting this kills the running process: never in this one.
CRASH_ENV = "GOV_TEST_CRASH_AFTER"


def gov_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The one environment policy for `gov` and `git`: this process's environment
    without `STRIPPED_PREFIXES`, plus `GIT_ENV`, plus the test's own `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(STRIPPED_PREFIXES)}
    env.update(GIT_ENV)
    env.update(extra or {})
    return env


# -- repositories -----------------------------------------------------------------------


def git(
    cwd: Path,
    *args: str,
    check: bool = True,
    input: str | None = None,
    index: Path | None = None,
) -> str:
    """Run git in `cwd` under the harness environment; stdout, stripped."""
    env = gov_environment({"GIT_INDEX_FILE": str(index)} if index is not None else None)
    result = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout.strip()


class Repo:
    """A throwaway repository on `main` with helpers to write files and commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q")

    def git(
        self, *args: str, check: bool = True, input: str | None = None, index: Path | None = None
    ) -> str:
        return git(self.path, *args, check=check, input=input, index=index)

    def configure_identity(self) -> None:
        """Give the repository itself the test identity and no signing, for
        commits that gov makes in this process (outside the harness environment)."""
        self.git("config", "user.name", GIT_ENV["GIT_AUTHOR_NAME"])
        self.git("config", "user.email", GIT_ENV["GIT_AUTHOR_EMAIL"])
        self.git("config", "commit.gpgsign", "false")

    def write(self, name: str, data: bytes | str) -> Path:
        file = self.path / name
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data.encode() if isinstance(data, str) else data)
        return file

    def commit(self, message: str, **files: bytes | str) -> str:
        """Write `files` (`a__b` names `a/b`), commit everything on the current branch."""
        for name, data in files.items():
            self.write(name.replace("__", "/"), data)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def show(self, rev: str, path: str) -> bytes:
        """The bytes of `path` at `rev`, exactly."""
        done = subprocess.run(
            ["git", "show", f"{rev}:{path}"],
            cwd=self.path,
            env=gov_environment(),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"git show {rev}:{path} failed: {done.stderr.decode()}")
        return done.stdout

    def sha(self, ref: str) -> str:
        return self.git("rev-parse", ref)

    def branch(self, name: str, start: str = "main") -> str:
        self.git("branch", name, start)
        return self.sha(name)

    def commit_on(self, branch: str, files: dict[str, str], message: str) -> str:
        """Commit `files` on top of `branch` (created on first use) with plumbing
        only, so the worktree and its checkout never change."""
        parent = self.git("rev-parse", "--verify", "--quiet", branch, check=False)
        index = self.path / ".git" / "harness-index"
        if parent:
            self.git("read-tree", parent, index=index)
        for name, text in files.items():
            blob = self.git("hash-object", "-w", "--stdin", input=text)
            self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}", index=index)
        tree = self.git("write-tree", index=index)
        index.unlink()
        sha = self.git("commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
        self.git("update-ref", f"refs/heads/{branch}", sha, parent or "0" * 40)
        return sha

    def merge_into(self, branch: str, other: str, message: str) -> str:
        """A merge commit of `other` into `branch` (plumbing only, worktree untouched)."""
        tree = self.git("merge-tree", "--write-tree", branch, other).splitlines()[0]
        parent = self.sha(branch)
        sha = self.git("commit-tree", tree, "-p", parent, "-p", self.sha(other), "-m", message)
        self.git("update-ref", f"refs/heads/{branch}", sha, parent)
        return sha

    def gitrepo(self) -> GitRepo:
        """The repository as gov opens it."""
        return GitRepo(self.path)


EXAMPLE_FILES = (
    "perf-changelog.yaml",
    "configs/amd-master.yaml",
    "configs/nvidia-master.yaml",
    "configs/runners.yaml",
)


def commit_example(repo: Repo) -> Repo:
    """The shipped example state (changelog and configs), committed on `main`."""
    for name in EXAMPLE_FILES:
        repo.write(name, (PROJECT / name).read_bytes())
    repo.commit("Example benchmark repository")
    return repo


def commit_launch_scripts(repo: Repo) -> Repo:
    """The example's launch scripts and the `scripts` setting naming them."""
    shutil.copytree(
        PROJECT / "launch" / "benchmarks", repo.path / "launch" / "benchmarks", symlinks=True
    )
    repo.write("pyproject.toml", '[tool.gov]\nscripts = "launch/benchmarks"\n')
    repo.commit("Launch scripts")
    return repo


def copy_project(target: Path) -> Path:
    """This project's files as they are in the working tree (tracked and new,
    not ignored: uncommitted work is what a test of the installed tool
    exercises) copied to `target`, for pip, pre-commit or an action to build."""
    names = git(PROJECT, "ls-files", "--cached", "--others", "--exclude-standard", "-z")
    for name in filter(None, names.split("\0")):
        source = PROJECT / name
        if source.is_file() and not source.is_symlink():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


# -- the shared corpus ------------------------------------------------------------------


def require_corpus() -> Path:
    if not (CORPUS / "inferencex.bundle").is_file():
        pytest.skip(f"shared corpus not found at {CORPUS} (it lives beside the project)")
    return CORPUS


def clone_scripts_bundle(tmp_path_factory: pytest.TempPathFactory, name: str = "scripts") -> Path:
    """A clone of the InferenceX scripts bundle (`benchmarks/`, configs, changelog)
    with its branches `main`, `base` and `pr/2194-scaffold` local."""
    if not SCRIPTS_BUNDLE.is_file():
        pytest.skip(f"scripts bundle not found at {SCRIPTS_BUNDLE} (the shared corpus)")
    target = tmp_path_factory.mktemp(name) / "inferencex-scripts"
    git(target.parent, "clone", "-q", str(SCRIPTS_BUNDLE), str(target))
    git(target, "fetch", "-q", "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*")
    return target


SWEEP_EVERYTHING = (
    '\n- config-keys:\n    - "*"\n  description:\n    - "Everything"\n  pr-link: XXX\n'
)


def plan_everything(
    bundle: Path, tmp_path_factory: pytest.TempPathFactory, name: str
) -> tuple[Path, str]:
    """A clone of `bundle`'s main with one appended entry selecting every
    config (`*`) on a branch, and `gov plan --base-ref main --format json`'s output."""
    if not bundle.is_file():
        pytest.skip(
            f"{bundle.name} not found at {bundle} (the shared corpus lives beside the project)"
        )
    clone = tmp_path_factory.mktemp(name) / "inferencex"
    git(clone.parent, "clone", "-q", "--branch", "main", str(bundle), str(clone))
    repo = Repo(clone)
    changelog = (clone / "perf-changelog.yaml").read_text()
    repo.git("checkout", "-q", "-b", "whole-plan")
    repo.commit("Sweep everything", **{"perf-changelog.yaml": changelog + SWEEP_EVERYTHING})
    out = run_gov("-C", str(clone), "plan", "--base-ref", "main", "--format", "json")
    assert out.exit_code == 0, out.stderr
    return clone, out.stdout


def clone_corpus(tmp_path_factory: pytest.TempPathFactory, name: str = "corpus") -> Path:
    """A fresh clone of the InferenceX corpus with every PR branch local."""
    corpus = require_corpus()
    target = tmp_path_factory.mktemp(name) / "inferencex"
    git(target.parent, "clone", "-q", str(corpus / "inferencex.bundle"), str(target))
    git(target, "fetch", "-q", "--update-head-ok", "origin", "+refs/heads/*:refs/heads/*")
    return target


def writable_corpus_clone(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A private clone for tests that write (prepare-merge leaves scratch refs,
    its journal and forge records), with an identity and HEAD detached, so
    prepare-merge has no branch to step off and back on."""
    target = clone_corpus(tmp_path_factory, name)
    for key, value in (("user.name", "gov tests"), ("user.email", "tests@gov.invalid")):
        git(target, "config", key, value)
    git(target, "checkout", "-q", "--detach")
    return target


# -- running gov ------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """What a run of `gov` (or another program) left: its exit status and output.
    A process killed by a signal has the negative signal number as `exit_code`."""

    exit_code: int
    stdout: str
    stderr: str


def run_gov(
    *args: str,
    cwd: Path | str = ".",
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> Result:
    """Run `gov ARGS` in this process, in `cwd`, under the harness environment
    plus `env`, as the console script would (an escaped exception prints its
    traceback to stderr and exits 1)."""
    if CRASH_ENV in (env or {}):
        raise AssertionError(f"{CRASH_ENV} kills the process: use run_process")
    wanted = gov_environment(env)
    overrides: dict[str, str | None] = {k: None for k in os.environ if k not in wanted}
    overrides.update(wanted)
    state.repo_path = Path(".")
    state.debug = False
    before = os.getcwd()
    os.chdir(cwd)
    try:
        done = CliRunner().invoke(
            app, list(args), input=input, env=overrides, prog_name="gov", catch_exceptions=True
        )
    finally:
        os.chdir(before)
        state.repo_path = Path(".")
        state.debug = False
    stderr = done.stderr
    exit_code = done.exit_code
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        assert done.exc_info is not None
        stderr += "".join(traceback.format_exception(*done.exc_info))
        exit_code = 1
    return Result(exit_code, done.stdout, stderr)


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path | str = ".",
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> Result:
    """Run `argv` as a real subprocess in `cwd` under the harness environment plus `env`."""
    done = subprocess.run(
        list(argv),
        cwd=cwd,
        env=gov_environment(env),
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def start_process(
    argv: Sequence[str], *, cwd: Path | str = ".", env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start `argv` under the harness environment plus `env`, for a test that
    signals it while it runs. SIGINT is reset to its default in the child: a
    suite started in the background inherits it ignored, and Python then never
    raises KeyboardInterrupt."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=gov_environment(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
