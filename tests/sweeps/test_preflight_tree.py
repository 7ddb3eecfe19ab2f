"""The preflight's snapshot of a commit's scripts folder never writes outside
its temporary folder: trees built with `git mktree` (which a default fetch
accepts) with `..`, `.git` or empty entries are findings, not files."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from governance.git.snapshot import UnsafeTreePath, inside
from tests.harness import Repo
from tests.sweeps.test_preflight import check
from tests.sweeps.test_preflight import repo as repo  # the fixture

PAYLOAD = "#!/bin/sh\necho pwned\n"


def mktree(git: Repo, lines: list[str]) -> str:
    return git.git("mktree", input="".join(f"{line}\n" for line in lines)).strip()


def commit_with_entry(git: Repo, name: str, depth: int) -> str:
    """HEAD plus `benchmarks/<name>/.../pwned-gov.sh`: the entry `name` holds
    `depth - 1` more `..` levels, then the executable."""
    blob = git.git("hash-object", "-w", "--stdin", input=PAYLOAD).strip()
    tree = mktree(git, [f"100755 blob {blob}\tpwned-gov.sh"])
    for _ in range(depth - 1):
        tree = mktree(git, [f"040000 tree {tree}\t.."])
    benchmarks = git.git("ls-tree", "HEAD:benchmarks").splitlines()
    benchmarks.append(f"040000 tree {tree}\t{name}")
    new = mktree(git, benchmarks)
    root = [
        line if not line.endswith("\tbenchmarks") else f"040000 tree {new}\tbenchmarks"
        for line in git.git("ls-tree", "HEAD").splitlines()
    ]
    commit = git.git("commit-tree", mktree(git, root), "-p", "HEAD", "-m", "mktree").strip()
    git.git("update-ref", "refs/heads/evil", commit)  # git's checkout would refuse it
    return commit


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary folders go to `tmp_path/t`, so `../../x` lands in `tmp_path`."""
    root = tmp_path / "t"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_dot_dot_entries_are_a_finding_and_nothing_is_written_outside(
    repo: Repo,
    temp_root: Path,
) -> None:
    repo.commit("entry")
    commit = commit_with_entry(repo, "..", 2)  # benchmarks/../../pwned-gov.sh
    assert "benchmarks/../../pwned-gov.sh" in repo.git("ls-tree", "-r", "--name-only", commit)
    code, out = check(repo, "--head-ref", commit)
    assert not (temp_root.parent / "pwned-gov.sh").exists()
    assert not list(temp_root.parent.rglob("pwned-gov.sh"))
    assert code == 1
    [finding] = [v for v in out["violations"] if v["code"] == "GOV714"]
    assert finding["path"] == "benchmarks/../../pwned-gov.sh"
    assert "'..'" in finding["message"]


@pytest.mark.parametrize("name", [".git", ".GIT", "."])  # git itself cannot list an empty name
def test_git_dot_and_empty_entries_are_refused(
    repo: Repo,
    temp_root: Path,
    name: str,
) -> None:
    repo.commit("entry")
    code, out = check(repo, "--head-ref", commit_with_entry(repo, name, 1))
    assert code == 1
    [finding] = [v for v in out["violations"] if v["code"] == "GOV714"]
    assert finding["path"] == f"benchmarks/{name}/pwned-gov.sh"


@pytest.mark.parametrize(
    "path",
    ["../x", "a/../../x", "/etc/passwd", "a//b", ".git/hooks/pre-commit", "a/./b", "a/"],
)
def test_the_one_join_refuses_every_way_out(tmp_path: Path, path: str) -> None:
    with pytest.raises(UnsafeTreePath):
        inside(tmp_path, path)


def test_the_one_join_refuses_a_symlink_on_the_way(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(UnsafeTreePath, match="not a folder"):
        inside(tmp_path, "link/x.sh")
    assert inside(tmp_path, "a/b.sh") == tmp_path / "a" / "b.sh"
