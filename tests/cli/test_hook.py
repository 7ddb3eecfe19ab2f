"""The pre-commit hook: manifest, arguments, the decision to run, leaked GIT_*
variables, and the real pre-commit framework running it (`pre-commit try-repo`,
and the README's `.pre-commit-config.yaml`)."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from governance.check.hook import check_argv, relevant, split_args
from governance.core.settings import Settings
from tests.cli.test_cli import APPEND
from tests.harness import PROJECT, Repo, clone_corpus, copy_project, git, run_process

BIN = Path(sys.executable).parent


@pytest.fixture
def hook_exe() -> str:
    exe = shutil.which("gov-pre-commit", path=str(BIN))
    if exe is None:
        pytest.skip("gov-pre-commit is not installed (pip install -e .)")
    return exe


def manifest() -> dict:
    (hook,) = YAML(typ="safe").load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    return hook


def test_manifest_runs_always_and_passes_file_names() -> None:
    hook = manifest()
    assert hook["id"] == "gov-check"
    assert hook["always_run"] is True and hook["pass_filenames"] is True
    assert "files" not in hook  # a hard-coded path would skip other `changelog` settings
    assert f"{hook['entry']} = " in (PROJECT / "pyproject.toml").read_text()


def test_split_args_keeps_option_values() -> None:
    takes = {"--pr", "--base-ref", "--ignore"}
    args = split_args(["--pr", "2194", "--no-configs", "a.yaml", "--ignore=GOV521", "b"], takes)
    assert args.options == ("--pr", "2194", "--no-configs", "--ignore=GOV521")
    assert args.files == ("a.yaml", "b")
    assert check_argv(args.options)[:2] == ["check", "--worktree"]
    assert check_argv(["--staged"]) == ["check", "--staged"]


@pytest.mark.parametrize(
    ("changelog", "files", "runs"),
    [
        ("perf-changelog.yaml", ["perf-changelog.yaml"], True),
        ("perf-changelog.yaml", ["configs/amd-master.yaml", "README.md"], True),
        ("perf-changelog.yaml", ["configs/runners.yaml"], True),
        ("perf-changelog.yaml", [".gov.toml"], True),
        ("perf-changelog.yaml", ["docs/perf-changelog.yaml", "configs/ci-priority.yaml"], False),
        ("perf-changelog.yaml", ["perf-changelog.yaml.bak"], False),
        ("data/changes.yaml", ["data/changes.yaml"], True),
        ("data/changes.yaml", ["perf-changelog.yaml"], False),
    ],
)
def test_relevant_follows_the_settings(changelog: str, files: list[str], runs: bool) -> None:
    assert bool(relevant(files, Settings(changelog=changelog))) is runs


def _bad_entry(repo: Repo, path: str = "perf-changelog.yaml") -> None:
    changelog = repo.path / path
    changelog.write_bytes(
        changelog.read_bytes() + b"\n- config-keys:\n    - nope\n"
        b'  description:\n    - "x"\n  pr-link: PLACEHOLDER\n'
    )


def test_hook_ignores_leaked_git_variables(
    example_repo: Repo, hook_exe: str, tmp_path: Path
) -> None:
    example_repo.git("checkout", "-q", "-b", "feature")
    _bad_entry(example_repo)
    example_repo.git("add", "perf-changelog.yaml")
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    git(tmp_path, "init", "-q", str(decoy))
    # What git exports when it runs a hook from another repository's context.
    env = {
        "GIT_DIR": str(decoy / ".git"),
        "GIT_INDEX_FILE": str(decoy / ".git/index"),
        "GIT_WORK_TREE": str(decoy),
    }
    result = run_process([hook_exe], cwd=example_repo.path, env=env)
    assert result.exit_code == 1, result.stderr
    assert "GOV401" in result.stdout and "GOV501" in result.stdout


def test_plain_hook_skips_fast_when_nothing_it_reads_is_staged(
    example_repo: Repo, hook_exe: str
) -> None:
    _bad_entry(example_repo)  # in the worktree, not staged: not part of this commit
    example_repo.write("notes.txt", "x")
    example_repo.git("add", "notes.txt")
    started = time.monotonic()
    result = run_process([hook_exe], cwd=example_repo.path)
    elapsed = time.monotonic() - started
    assert result.exit_code == 0 and "skipped" in result.stderr, result.stderr
    assert result.stdout == ""
    assert elapsed < 5  # measured about 0.3 s; the check itself is not run


# -- the real pre-commit framework --------------------------------------------------


@pytest.fixture(scope="module")
def pre_commit_exe() -> str:
    exe = shutil.which("pre-commit", path=str(BIN))
    if exe is None:
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    return exe


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This project as a hook repository: its files as they are in the working
    tree (so uncommitted work is what is tested), committed; (path, sha)."""
    target = copy_project(tmp_path_factory.mktemp("gov-hook-repo") / "gov")
    repo = Repo(target)
    return target, repo.commit("gov as a pre-commit hook repository")


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the module: the hook's venv is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def readme_pre_commit_config(repo_url: Path, rev: str) -> str:
    """The README's `.pre-commit-config.yaml`, pointed at `repo_url` and `rev`."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Pre-commit hook") :]
    (snippet,) = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)[:1]
    assert "rev: <commit>" in snippet and "https://github.com/<org>/gov" in snippet
    return snippet.replace("https://github.com/<org>/gov", str(repo_url)).replace(
        "rev: <commit>", f"rev: {rev}"
    )


def test_try_repo_checks_a_non_default_changelog_path(
    example_repo: Repo, pre_commit_exe: str, hook_repo: tuple[Path, str], tmp_path: Path
) -> None:
    """`pre-commit try-repo` builds the hook from this repository and runs it
    where the changelog is `data/changes.yaml`: the bad entry is caught."""
    (example_repo.path / "data").mkdir(exist_ok=True)
    example_repo.git("mv", "perf-changelog.yaml", "data/changes.yaml")
    example_repo.write(".gov.toml", 'changelog = "data/changes.yaml"\n')
    example_repo.commit("changelog lives in data/")
    example_repo.git("checkout", "-q", "-b", "feature")
    _bad_entry(example_repo, "data/changes.yaml")
    example_repo.git("add", "data/changes.yaml")
    path, sha = hook_repo
    result = run_process(
        [pre_commit_exe, "try-repo", str(path), "gov-check", "--ref", sha],
        cwd=example_repo.path,
        env={"PRE_COMMIT_HOME": str(tmp_path / "home")},
        timeout=600,
    )
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "data/changes.yaml:" in result.stdout and "GOV401" in result.stdout


def test_readme_pre_commit_config_passes_its_args(
    example_repo: Repo, pre_commit_exe: str, hook_repo: tuple[Path, str], pre_commit_home: Path
) -> None:
    """The README's config with `args: [--pr, "2194"]`: a link to another PR
    is refused, the link to 2194 and `XXX` pass, an unrelated commit skips."""
    path, sha = hook_repo
    example_repo.write(".pre-commit-config.yaml", readme_pre_commit_config(path, sha))
    example_repo.commit("pre-commit config")
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    base = (example_repo.path / "perf-changelog.yaml").read_bytes()
    env = {"PRE_COMMIT_HOME": str(pre_commit_home)}

    def run_with(link: str) -> tuple[int, str]:
        example_repo.write("perf-changelog.yaml", base + APPEND.format(link=link).encode())
        example_repo.git("add", "perf-changelog.yaml")
        done = run_process(
            [pre_commit_exe, "run", "--verbose"], cwd=example_repo.path, env=env, timeout=600
        )
        return done.exit_code, done.stdout + done.stderr

    code, out = run_with("https://github.com/SemiAnalysisAI/InferenceX/pull/2195")
    assert code == 1 and "GOV40" in out and "2194" in out, out
    assert run_with("https://github.com/SemiAnalysisAI/InferenceX/pull/2194")[0] == 0
    code, out = run_with("XXX")
    assert code == 0, out
    example_repo.git("reset", "-q")
    example_repo.write("notes.txt", "x")
    example_repo.git("add", "notes.txt")
    done = run_process(
        [pre_commit_exe, "run", "--verbose"], cwd=example_repo.path, env=env, timeout=600
    )
    assert done.exit_code == 0 and "skipped" in done.stdout, done.stdout


# -- the plain git hook (hooks/pre-commit), run by git itself ---------------------------


@pytest.mark.corpus
def test_plain_git_hook_guards_commits_in_a_fork_clone_of_inferencex(
    tmp_path_factory: pytest.TempPathFactory, hook_exe: str
) -> None:
    """`cp hooks/pre-commit .git/hooks/` in a fork clone, on a PR branch forked
    from an older main: git runs the hook (with its GIT_* variables) on every
    commit; a bad entry is refused, the fixed one lands, an unrelated commit
    passes without a check."""
    clone = clone_corpus(tmp_path_factory, "plain-hook")
    git(clone, "remote", "set-url", "origin", "https://github.com/alice/InferenceX.git")
    hooks = Path(git(clone, "rev-parse", "--git-path", "hooks"))
    hooks = hooks if hooks.is_absolute() else clone / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    shutil.copy2(PROJECT / "hooks" / "pre-commit", hooks / "pre-commit")
    branch = "pr/agent/update-b200-agentx-vllm-mtp-image"
    git(clone, "checkout", "-q", branch)
    env = {"PATH": f"{BIN}:/usr/bin:/bin"}
    changelog = clone / "perf-changelog.yaml"
    base = changelog.read_bytes()

    def commit(data: bytes, message: str) -> tuple[int, str]:
        changelog.write_bytes(data)
        git(clone, "add", "perf-changelog.yaml")
        done = run_process(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message],
            cwd=clone,
            env=env,
        )
        return done.exit_code, done.stdout + done.stderr

    entry = '\n- config-keys:\n    - dsv4-fp4-b200-vllm\n  description:\n    - "More"\n'
    code, out = commit(base + (entry + "  pr-link: PLACEHOLDER\n").encode(), "bad")
    assert code == 1 and "GOV401" in out, out
    assert "alice" not in out  # the upstream repository, not the fork's
    code, out = commit(base + (entry + "  pr-link: XXX\n").encode(), "good")
    assert code == 0, out
    (clone / "notes.txt").write_text("x\n")
    git(clone, "add", "notes.txt")
    done = run_process(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "notes"],
        cwd=clone,
        env=env,
    )
    assert done.exit_code == 0 and "skipped" in done.stderr, done.stderr


def test_plain_git_hook_accepts_the_commit_of_a_merge_of_main(
    example_repo: Repo, hook_exe: str
) -> None:
    """`git merge main` on a PR branch conflicts in the changelog; after
    `gov resolve-conflict` says "commit the merge", the commit's hook judges
    the merge being made: main's new entries (real links) are main's, only the
    PR's own entry counts as appended."""
    repo = example_repo
    env = {"PATH": f"{BIN}:/usr/bin:/bin"}
    log = repo.path / "perf-changelog.yaml"
    base = log.read_text()
    entry = (
        '\n- config-keys:\n    - {key}\n  description:\n    - "Rerun {key}"\n  pr-link: {link}\n'
    )
    repo.git("checkout", "-q", "-b", "pr")
    repo.write("perf-changelog.yaml", base + entry.format(key="dsr1-fp8-mi300x-sglang", link="XXX"))
    repo.git("add", "perf-changelog.yaml")
    repo.git("commit", "-q", "-m", "PR appends")
    repo.git("checkout", "-q", "main")
    landed = "https://github.com/SemiAnalysisAI/InferenceX/pull/101"
    repo.write("perf-changelog.yaml", base + entry.format(key="dsv4-fp8-mi300x-vllm", link=landed))
    repo.commit("Another PR lands (#101)")
    repo.git("checkout", "-q", "pr")
    hooks = Path(repo.git("rev-parse", "--git-path", "hooks"))
    hooks = hooks if hooks.is_absolute() else repo.path / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    shutil.copy2(PROJECT / "hooks" / "pre-commit", hooks / "pre-commit")
    merged = run_process(["git", "merge", "--no-edit", "main"], cwd=repo.path, env=env)
    assert merged.exit_code != 0 and "perf-changelog.yaml" in merged.stdout  # the old conflict
    resolved = run_process([hook_exe.replace("gov-pre-commit", "gov"), "resolve-conflict",
                            "--pr", "7"], cwd=repo.path, env=env)  # fmt: skip
    assert resolved.exit_code == 0, resolved.stdout + resolved.stderr
    repo.git("add", "perf-changelog.yaml")
    gov = hook_exe.replace("gov-pre-commit", "gov")
    staged = run_process([gov, "check", "--staged", "--pr", "7"], cwd=repo.path, env=env)
    assert staged.exit_code == 0, staged.stdout + staged.stderr  # not GOV401 on main's link
    done = run_process(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--no-edit"],
        cwd=repo.path,
        env=env,
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "1 appended entry" in done.stderr and ", merging " in done.stderr, done.stderr
    assert repo.git("rev-parse", "HEAD^2") == repo.git("rev-parse", "main")
    # The same hook still refuses a bad entry of the PR's own inside the merge.
    repo.git("reset", "-q", "--hard", "HEAD~1")
    run_process(["git", "merge", "--no-edit", "main"], cwd=repo.path, env=env)
    run_process([hook_exe.replace("gov-pre-commit", "gov"), "resolve-conflict", "--pr", "7"],
                cwd=repo.path, env=env)  # fmt: skip
    main_bytes = repo.git("show", "main:perf-changelog.yaml") + "\n"
    bad = entry.format(key="dsr1-fp8-mi300x-sglang", link="PLACEHOLDER")
    log.write_text(main_bytes + bad)
    repo.git("add", "perf-changelog.yaml")
    refused = run_process(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--no-edit"],
        cwd=repo.path,
        env=env,
    )
    assert refused.exit_code == 1 and "GOV401" in refused.stdout + refused.stderr, refused.stdout
