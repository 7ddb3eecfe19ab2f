"""`gov init` on real repositories: detection, settings only where the
defaults do not fit, the files it proposes, idempotence, --force; and what it
writes works (the pre-commit config under the real framework, the check with
the written settings)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.test_cli import APPEND
from tests.harness import PROJECT, Repo, clone_corpus, git, run_gov, run_process

WRITTEN = (".pre-commit-config.yaml", ".github/workflows/check-changelog.yml", ".gitattributes")


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
    }


def test_init_prints_and_writes_nothing_without_write(example_repo: Repo) -> None:
    before = snapshot(example_repo.path)
    result = run_gov("init", cwd=example_repo.path)
    assert result.exit_code == 0, result.stderr
    assert "changelog: perf-changelog.yaml (default)" in result.stdout
    assert "master configs: configs/amd-master.yaml, configs/nvidia-master.yaml" in result.stdout
    assert "would write .pre-commit-config.yaml:" in result.stdout
    assert "would write .github/workflows/check-changelog.yml:" in result.stdout
    assert "/perf-changelog.yaml merge=gov" in result.stdout
    assert "settings: the defaults fit" in result.stderr
    assert snapshot(example_repo.path) == before


def test_init_write_is_idempotent_and_needs_no_settings_when_defaults_fit(
    example_repo: Repo,
) -> None:
    done = run_gov("init", "--write", "--action", "acme/gov@0123abc", cwd=example_repo.path)
    assert done.exit_code == 0, done.stderr
    for name in WRITTEN:
        assert (example_repo.path / name).is_file(), name
    assert not (example_repo.path / ".gov.toml").exists()
    assert not (example_repo.path / "pyproject.toml").exists()
    workflow = (example_repo.path / WRITTEN[1]).read_text()
    assert "uses: acme/gov@0123abc" in workflow and "fetch-depth: 0" in workflow
    assert example_repo.git("check-attr", "merge", "--", "perf-changelog.yaml").endswith(": gov")
    after = snapshot(example_repo.path)
    again = run_gov("init", "--write", "--action", "acme/gov@0123abc", cwd=example_repo.path)
    assert again.exit_code == 0
    assert snapshot(example_repo.path) == after
    assert [line for line in again.stdout.splitlines() if line.startswith("ok: ")] == [
        f"ok: {name}" for name in WRITTEN
    ]


def test_init_never_replaces_a_differing_file_without_force(example_repo: Repo) -> None:
    workflow = example_repo.write(WRITTEN[1], "name: mine\n")
    kept = run_gov("init", "--write", cwd=example_repo.path)
    assert kept.exit_code == 0
    assert f"kept {WRITTEN[1]}: exists with other content; --force replaces it" in kept.stdout
    assert workflow.read_text() == "name: mine\n"
    forced = run_gov("init", "--write", "--force", cwd=example_repo.path)
    assert forced.exit_code == 0 and f"wrote {WRITTEN[1]}" in forced.stdout
    assert "check-changelog" in workflow.read_text()
    assert run_gov("init", "--force", cwd=example_repo.path).exit_code == 2


def test_init_finds_a_non_default_layout_and_writes_only_what_differs(
    example_repo: Repo,
) -> None:
    """Masters in `.github/configs/` (InferenceX before #1992), the changelog
    in `data/`, a pyproject.toml without [tool.gov]: the table is appended to
    it, and `gov check` then resolves keys with it."""
    root = example_repo.path
    (root / ".github").mkdir()
    example_repo.git("mv", "configs", ".github/configs")
    (root / "data").mkdir()
    example_repo.git("mv", "perf-changelog.yaml", "data/perf-changelog.yaml")
    shutil.copytree(PROJECT / "launch" / "benchmarks", root / "ci" / "benchmarks", symlinks=True)
    pyproject = example_repo.write("pyproject.toml", '[project]\nname = "bench"\n')
    example_repo.commit("old layout")
    result = run_gov("init", "--write", cwd=root)
    assert result.exit_code == 0, result.stderr
    assert "changelog: data/perf-changelog.yaml (found)" in result.stdout
    assert pyproject.read_text() == (
        '[project]\nname = "bench"\n\n[tool.gov]\n'
        'changelog = "data/perf-changelog.yaml"\n'
        'master-configs = [".github/configs/amd-master.yaml", ".github/configs/nvidia-master.yaml"]\n'
        'runners = ".github/configs/runners.yaml"\n'
        'scripts = "ci/benchmarks"\n'
    )
    assert "/data/perf-changelog.yaml merge=gov" in (root / ".gitattributes").read_text()
    example_repo.git("add", "-A")
    example_repo.git("commit", "-qm", "gov init")
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    changelog = root / "data/perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + APPEND.format(link="XXX").encode())
    check = run_gov("check", "--worktree", "--pr", "2194", cwd=root)
    assert check.exit_code == 0, check.stdout + check.stderr
    assert "1 config key(s)" in check.stdout
    again = run_gov("init", "--write", cwd=root)
    assert "settings: pyproject.toml fits" in again.stderr
    assert snapshot(root)["pyproject.toml"] == pyproject.read_bytes()


def test_init_without_a_changelog_is_a_usage_error(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("empty")
    repo.commit("nothing", **{"README.md": "x\n"})
    result = run_gov("init", cwd=repo.path)
    assert result.exit_code == 2 and "no changelog found" in result.stderr


def test_the_written_pre_commit_config_runs_under_the_framework(
    example_repo: Repo, tmp_path: Path
) -> None:
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    if pre_commit is None:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    assert run_gov("init", "--write", cwd=example_repo.path).exit_code == 0
    example_repo.git("add", "-A")
    example_repo.git("commit", "-qm", "gov init")
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + APPEND.format(link="PLACEHOLDER").encode())
    example_repo.git("add", "perf-changelog.yaml")
    env = {
        "PRE_COMMIT_HOME": str(tmp_path / "home"),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
    }
    done = run_process([pre_commit, "run"], cwd=example_repo.path, env=env)
    assert done.exit_code == 1 and "GOV401" in done.stdout, done.stdout + done.stderr


@pytest.mark.corpus
def test_init_in_a_fresh_clone_of_inferencex(tmp_path_factory: pytest.TempPathFactory) -> None:
    """InferenceX's layout is the default: nothing to configure, three files to add."""
    clone = clone_corpus(tmp_path_factory, "init")
    result = run_gov("init", "--write", cwd=clone)
    assert result.exit_code == 0, result.stderr
    assert "settings: the defaults fit" in result.stderr
    assert not (clone / ".gov.toml").exists()
    status = git(clone, "status", "--porcelain")
    assert sorted(line[3:] for line in status.splitlines()) == [
        ".gitattributes",
        ".github/",
        ".pre-commit-config.yaml",
    ]


def test_init_in_inferencex_with_its_own_check_changelog_job(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """InferenceX's `run-sweep.yml` already has a `check-changelog` job that its
    sweep jobs need: gov init does not add a second check of that name, and
    says what to do."""
    bundle = PROJECT.parent / "shared" / "corpus" / "inferencex-runners.bundle"
    if not bundle.is_file():
        pytest.skip(f"corpus bundle absent: {bundle}")
    clone = tmp_path_factory.mktemp("init-runners") / "ix"
    git(clone.parent, "clone", "-q", "--branch", "main", str(bundle), str(clone))
    assert (clone / ".github/workflows/run-sweep.yml").is_file()
    result = run_gov("init", "--write", cwd=clone)
    assert result.exit_code == 0, result.stderr
    assert not (clone / ".github/workflows/check-changelog.yml").exists()
    out = result.stdout + result.stderr
    assert "kept .github/workflows/check-changelog.yml: .github/workflows/run-sweep.yml " in out
    assert (
        ".github/workflows/run-sweep.yml: job `check-changelog` (needed by reuse-sweep-gate, "
        "setup) already reports a check named `check-changelog`" in out
    ), out
    assert "Replace that job's changelog steps with `uses: <org>/gov@<commit>`" in out
    forced = run_gov("init", "--write", "--force", cwd=clone)
    assert forced.exit_code == 0 and (clone / ".github/workflows/check-changelog.yml").is_file()
