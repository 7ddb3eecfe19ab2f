"""The journal: atomic rewrites, versioning, and the live-owner guard."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from governance.core.diagnostics import UsageError
from governance.merge import journal as jr
from tests.merge.conftest import Setup


def sample(**changes: object) -> jr.Journal:
    base = jr.Journal(7, "main", "a" * 40, "refs/gov/prepare-merge/pr-7", "b" * 40)
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def test_record_rewrites_atomically_and_round_trips(tmp_path: Path) -> None:
    path = jr.journal_path(tmp_path, 7)
    journal = sample()
    jr.save(path, journal)
    jr.record(path, journal, "validate")
    loaded = jr.load(path)
    assert loaded == journal and loaded.step == "validate" and loaded.steps == ["validate"]
    assert [p.name for p in path.parent.iterdir()] == ["pr-7.json"]  # no temporary left


def test_unknown_version_is_a_usage_error_with_the_path(tmp_path: Path) -> None:
    path = jr.journal_path(tmp_path, 7)
    path.parent.mkdir(parents=True)
    path.write_text('{"version": 99}')
    with pytest.raises(UsageError, match=r"pr-7\.json"):
        jr.load(path)


def test_owner_alive_only_for_another_live_process() -> None:
    assert not jr.owner_alive(sample(pid=os.getpid()))
    assert not jr.owner_alive(sample(pid=0))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert jr.owner_alive(sample(pid=child.pid))
        assert not jr.owner_alive(sample(pid=child.pid, done=True))
    finally:
        child.kill()
        child.wait()
    assert not jr.owner_alive(sample(pid=child.pid))


def test_a_live_run_is_never_recovered_from_under_it(pr_setup: Setup) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        journal = sample(pr=2194, pid=child.pid)
        jr.save(pr_setup.journal(), journal)
        with pytest.raises(UsageError, match=f"pid {child.pid}"):
            pr_setup.run()
        assert pr_setup.journal().exists()
    finally:
        child.kill()
        child.wait()
    report = pr_setup.run(push=False)  # the owner is gone: recover and go on
    assert report.ok and report.steps[0].name == "recover"
