"""A repository where PR #5 landed with a sweep: main's tip stands on measured runs."""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest

from governance.git.repo import GitRepo
from governance.sweeps.ledger import Ledger
from tests.harness import Repo, run_gov
from tests.sweeps.test_cli_sweeps import append_entry

LANDED_PR = 5


@pytest.fixture
def landed(sweep_repo: Repo) -> Repo:
    land_with_sweep(sweep_repo)
    return sweep_repo


def land_with_sweep(repo: Repo, env: dict[str, str] | None = None) -> str:
    """PR #5 appends an entry and lands through prepare-merge --sweep; its stdout."""
    repo.configure_identity()
    repo.git("checkout", "-q", "-b", "pr")
    append_entry(repo, "dsr1-fp8-mi300x-sglang")
    repo.git("checkout", "-q", "main")
    opened = run_gov("pr", "open", "--number", str(LANDED_PR), "--branch", "pr", cwd=repo.path)
    assert opened.exit_code == 0, opened.stderr
    done = run_gov("prepare-merge", "--pr", str(LANDED_PR), "--sweep", cwd=repo.path, env=env)
    assert done.exit_code == 0, done.stdout + done.stderr
    return done.stdout


def ledger_rows(repo: Repo) -> dict[str, str]:
    """job key -> the SHA-256 of the result file its run left, as the ledger records it."""
    git_dir = GitRepo(repo.path).git_dir
    with Ledger(git_dir / "gov" / "runs.sqlite3") as ledger:
        runs = ledger.for_commit(repo.sha("main"))
        files = ledger.files(run.id for _o, run in runs)
    out = {}
    for _origin, run in runs:
        results = [f for f in files[run.id] if f.name.endswith(".json") and "/" not in f.name]
        # not gov's own files (gov-row.json, the launch wrapper's gov-launch.json, gov-exit.json)
        named = [f for f in results if not f.name.startswith("gov-") and f.name != "meta_env.json"]
        out[run.job_key] = named[0].sha256 or ""
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def gov_exe() -> str:
    exe = shutil.which("gov", path=str(Path(sys.executable).parent))
    assert exe, "gov is not installed (pip install -e .)"
    return exe
