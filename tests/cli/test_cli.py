"""The gov command line on real temporary repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness import PROJECT, Repo, git, run_gov, run_process

APPEND = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
    '    - "Retune MI300X DSv4 concurrency"\n  pr-link: {link}\n'
)


@pytest.fixture
def pr_branch(example_repo: Repo) -> Repo:
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    return example_repo


def append(repo: Repo, link: str) -> None:
    changelog = repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + APPEND.format(link=link).encode())


def test_clean_change_exits_0(pr_branch: Repo) -> None:
    append(pr_branch, "XXX")
    pr_branch.commit("retune")
    result = run_gov("check", "--pr", "2194", cwd=pr_branch.path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 appended entry" in result.stdout and "PR mode, #2194" in result.stdout


def test_placeholder_word_fails_with_location_excerpt_and_hint(pr_branch: Repo) -> None:
    append(pr_branch, "PLACEHOLDER")
    result = run_gov("check", "--worktree", "--pr", "2194", cwd=pr_branch.path)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("perf-changelog.yaml:31:12: GOV401 ")
    assert lines[1].endswith("|   pr-link: PLACEHOLDER")
    assert lines[2].endswith("|            ^")
    assert "hint: write exactly `pr-link: XXX`" in lines[3]


def test_json_format(pr_branch: Repo) -> None:
    append(pr_branch, "https://github.com/SemiAnalysisAI/InferenceX/pull/1")
    result = run_gov("check", "--worktree", "--pr", "2194", "--format", "json", cwd=pr_branch.path)
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == {
        "ok",
        "mode",
        "pr",
        "base",
        "head",
        "additions",
        "corrections",
        "config_keys",
        "violations",
        "ignore",
        "ignored",
        "warnings",
        "preflight",
    }
    assert (data["ok"], data["mode"], data["pr"]) == (False, "pr", 2194)
    assert data["preflight"] is None  # a failing change is not preflighted
    assert data["config_keys"] == ["dsv4-fp8-mi300x-vllm"]
    (violation,) = data["violations"]
    assert set(violation) == {"code", "rule", "message", "path", "line", "column", "hint"}
    assert (violation["code"], violation["rule"], violation["line"]) == (
        "GOV401",
        "pr-link-not-expected",
        31,
    )


def test_github_format_annotates_and_writes_step_summary(pr_branch: Repo, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    changelog = pr_branch.path / "perf-changelog.yaml"
    # Twelve bad entries: more than the ten annotations GitHub displays.
    body = "".join(APPEND.format(link=f"TBD-{i}") for i in range(12))
    changelog.write_bytes(changelog.read_bytes() + body.encode())
    result = run_gov(
        "check",
        "--worktree",
        "--pr",
        "2194",
        "--format",
        "github",
        cwd=pr_branch.path,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.exit_code == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 10
    assert errors[0].startswith(
        "::error file=perf-changelog.yaml,line=31,col=12,title=GOV401 pr-link-not-expected::"
    )
    assert "::notice title=gov::" in result.stdout
    assert "❌ changelog check failed" in summary.read_text()


def test_unknown_config_key_suggests_the_renamed_one(pr_branch: Repo) -> None:
    changelog = pr_branch.path / "perf-changelog.yaml"
    changelog.write_bytes(
        changelog.read_bytes() + APPEND.replace("vllm", "sglang").format(link="XXX").encode()
    )
    result = run_gov("check", "--worktree", "--pr", "2194", cwd=pr_branch.path)
    assert result.exit_code == 1
    assert "GOV501" in result.stdout and "did you mean `dsv4-fp8-mi300x-vllm`" in result.stdout
    assert (
        run_gov("check", "--worktree", "--pr", "2194", "--no-configs", cwd=pr_branch.path).exit_code
        == 0
    )


def test_staged_reads_the_index(pr_branch: Repo) -> None:
    append(pr_branch, "PLACEHOLDER")
    pr_branch.git("add", "perf-changelog.yaml")
    (pr_branch.path / "perf-changelog.yaml").write_bytes(b"garbage")  # worktree differs from index
    assert "GOV401" in run_gov("check", "--staged", "--pr", "2194", cwd=pr_branch.path).stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--base-ref", "no-such-ref"], "unknown git revision 'no-such-ref'"),
        (["check", "--pr", "1", "--main"], "--pr and --main are exclusive"),
        (["check", "--head-ref", "HEAD", "--worktree"], "cannot be combined"),
        (["check", "--pr", "abc"], "Invalid value"),
    ],
)
def test_usage_errors_exit_2(example_repo: Repo, args: list[str], message: str) -> None:
    result = run_gov(*args, cwd=example_repo.path)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_changelog_is_a_usage_error(make_repo) -> None:
    repo = make_repo()
    repo.commit("empty", **{"README": "x"})
    result = run_gov("check", "--base-ref", "HEAD", cwd=repo.path)
    assert result.exit_code == 2 and "perf-changelog.yaml does not exist" in result.stderr


def test_shallow_clone_without_merge_base_says_unshallow(
    example_repo: Repo, tmp_path: Path
) -> None:
    example_repo.commit("second", **{"x.txt": "1"})
    example_repo.git("checkout", "-q", "-b", "feature")
    example_repo.commit("third", **{"y.txt": "1"})
    example_repo.git("checkout", "-q", "main")
    example_repo.commit("main moves", **{"z.txt": "1"})
    clone = tmp_path / "shallow"
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--no-single-branch",
        f"file://{example_repo.path}",
        str(clone),
    )
    git(clone, "checkout", "-q", "feature")
    result = run_gov("check", cwd=clone)
    assert result.exit_code == 2
    assert "git fetch --unshallow" in result.stderr


def test_internal_error_exit_3_without_traceback(example_repo: Repo) -> None:
    # An unreadable changelog path (a directory) is not anticipated anywhere.
    result = run_gov("check", "--worktree", cwd=example_repo.path, env={"GOV_CHANGELOG": "configs"})
    assert result.exit_code in (2, 3)
    assert "Traceback" not in result.stderr


def test_settings_come_from_pyproject_env_and_flags(pr_branch: Repo) -> None:
    pr_branch.git("checkout", "-q", "main")  # settings come from the base
    pr_branch.commit("settings", **{"pyproject.toml": '[tool.gov]\nrepository = "acme/bench"\n'})
    pr_branch.git("checkout", "-q", "pr-2194")
    pr_branch.git("merge", "-q", "--ff-only", "main")
    append(pr_branch, "https://github.com/acme/bench/pull/2194")
    assert run_gov("check", "--worktree", "--pr", "2194", cwd=pr_branch.path).exit_code == 0
    env = {"GOV_REPOSITORY": "other/repo"}
    assert (
        run_gov("check", "--worktree", "--pr", "2194", cwd=pr_branch.path, env=env).exit_code == 1
    )
    flag = ["--repository", "acme/bench"]
    assert (
        run_gov("check", "--worktree", "--pr", "2194", *flag, cwd=pr_branch.path, env=env).exit_code
        == 0
    )


def test_unknown_setting_is_named_with_a_suggestion(example_repo: Repo) -> None:
    example_repo.commit("settings", **{".gov.toml": 'chagelog = "x.yaml"\n'})
    result = run_gov("check", cwd=example_repo.path)
    assert result.exit_code == 2
    assert (
        "unknown setting `chagelog`" in result.stderr
        and "did you mean `changelog`" in result.stderr
    )


def test_check_writes_nothing(pr_branch: Repo) -> None:
    append(pr_branch, "PLACEHOLDER")
    before = pr_branch.git("status", "--porcelain", "--ignored")
    run_gov("check", "--worktree", "--pr", "2194", cwd=pr_branch.path)
    assert pr_branch.git("status", "--porcelain", "--ignored") == before


def test_audit_jsonl_and_table(example_repo: Repo) -> None:
    append(example_repo, "https://github.com/SemiAnalysisAI/InferenceX/pull/2200")
    example_repo.commit("Retune (#2200)")
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + b"\n")  # breaks the final-newline rule
    example_repo.commit("Sloppy (#2201)")
    result = run_gov("audit", "--format", "jsonl", "--no-configs", cwd=example_repo.path)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["pr"] for r in rows] == [2200, 2201]
    assert rows[0]["main"]["ok"] and rows[0]["pr_mode"]["ok"]
    assert rows[1]["main"]["violations"][0]["code"] == "GOV311"
    table = run_gov("audit", "--no-configs", cwd=example_repo.path)
    assert table.exit_code == 1
    assert "2 changelog commits checked: 1 fail main mode" in table.stdout


def test_schema_check_passes_on_the_committed_schemas() -> None:
    result = run_gov("schema", "--check", cwd=PROJECT)
    assert result.exit_code == 0, result.stderr


def test_help_lists_the_commands(gov_exe: str, tmp_path: Path) -> None:
    """Through the installed console script."""
    result = run_process([gov_exe, "--help"], cwd=tmp_path)
    assert result.exit_code == 0
    for command in ("check", "audit", "schema"):
        assert command in result.stdout


def test_matrix_unknown_key_is_reported_once_with_a_suggestion(example_repo: Repo) -> None:
    result = run_gov("matrix", "--config-key", "dsv4-fp8-mi300x-vlm", cwd=example_repo.path)
    assert result.exit_code == 1
    assert result.stderr.count("GOV501") == 1, result.stderr
    assert result.stderr.startswith("GOV501 ")  # no empty location prefix
    assert "did you mean 'dsv4-fp8-mi300x-vllm'" in result.stderr
    assert "Available keys" not in result.stderr  # three suggestions, not every key


@pytest.mark.corpus
def test_matrix_typo_on_the_corpus_gives_three_suggestions(corpus_clone: Path) -> None:
    result = run_gov("matrix", "--config-key", "dsv4-fp4-b200-vlm", cwd=corpus_clone)
    assert result.exit_code == 1
    (hint,) = [line for line in result.stderr.splitlines() if "hint:" in line]
    assert hint.count("' or '") == 2 and "'dsv4-fp4-b200-vllm'" in hint, hint
    assert len(result.stderr) < 600, result.stderr  # not the 220 keys


def test_the_command_line_starts_without_the_heavy_engines() -> None:
    """`gov --help` and the hook pay only for what they use: building the app
    must not import gitpython, ruamel.yaml, pydantic, httpx or the engines
    (every command imports its own service lazily)."""
    import sys

    probe = (
        "import sys, governance.cli.app; "
        "print(' '.join(m for m in ('git', 'ruamel.yaml', 'pydantic', 'httpx', 'sqlite3', "
        "'governance.matrix', 'governance.changelog.document', 'governance.sweeps.ledger') "
        "if m in sys.modules))"
    )
    done = run_process([sys.executable, "-c", probe])
    assert done.exit_code == 0, done.stderr
    assert done.stdout.split() == []
