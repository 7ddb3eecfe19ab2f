"""The gov command line on real temporary repositories."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, Repo

APPEND = (
    "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
    '    - "Retune MI300X DSv4 concurrency"\n  pr-link: {link}\n'
)


def run(
    cwd: Path, exe: str, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GOV_", "GITHUB_"))
    }
    full_env.update(GIT_ENV)
    full_env.update(env or {})
    return subprocess.run(
        [exe, *args], cwd=cwd, env=full_env, capture_output=True, text=True, check=False
    )


@pytest.fixture
def pr_branch(example_repo: Repo) -> Repo:
    example_repo.git("checkout", "-q", "-b", "pr-2194")
    return example_repo


def append(repo: Repo, link: str) -> None:
    changelog = repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + APPEND.format(link=link).encode())


def test_clean_change_exits_0(pr_branch: Repo, gov_exe: str) -> None:
    append(pr_branch, "XXX")
    pr_branch.commit("retune")
    result = run(pr_branch.path, gov_exe, "check", "--pr", "2194")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 appended entry" in result.stdout and "PR mode, #2194" in result.stdout


def test_placeholder_word_fails_with_location_excerpt_and_hint(
    pr_branch: Repo, gov_exe: str
) -> None:
    append(pr_branch, "PLACEHOLDER")
    result = run(pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("perf-changelog.yaml:31:12: GOV401 ")
    assert lines[1].endswith("|   pr-link: PLACEHOLDER")
    assert lines[2].endswith("|            ^")
    assert "hint: write exactly `pr-link: XXX`" in lines[3]


def test_json_format(pr_branch: Repo, gov_exe: str) -> None:
    append(pr_branch, "https://github.com/SemiAnalysisAI/InferenceX/pull/1")
    result = run(pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194", "--format", "json")
    assert result.returncode == 1
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
    }
    assert (data["ok"], data["mode"], data["pr"]) == (False, "pr", 2194)
    assert data["config_keys"] == ["dsv4-fp8-mi300x-vllm"]
    (violation,) = data["violations"]
    assert set(violation) == {"code", "rule", "message", "path", "line", "column", "hint"}
    assert (violation["code"], violation["rule"], violation["line"]) == (
        "GOV401",
        "pr-link-not-expected",
        31,
    )


def test_github_format_annotates_and_writes_step_summary(
    pr_branch: Repo, gov_exe: str, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    changelog = pr_branch.path / "perf-changelog.yaml"
    # Twelve bad entries: more than the ten annotations GitHub displays.
    body = "".join(APPEND.format(link=f"TBD-{i}") for i in range(12))
    changelog.write_bytes(changelog.read_bytes() + body.encode())
    result = run(
        pr_branch.path,
        gov_exe,
        "check",
        "--worktree",
        "--pr",
        "2194",
        "--format",
        "github",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 10
    assert errors[0].startswith(
        "::error file=perf-changelog.yaml,line=31,col=12,title=GOV401 pr-link-not-expected::"
    )
    assert "::notice title=gov::" in result.stdout
    assert "❌ changelog check failed" in summary.read_text()


def test_unknown_config_key_suggests_the_renamed_one(pr_branch: Repo, gov_exe: str) -> None:
    changelog = pr_branch.path / "perf-changelog.yaml"
    changelog.write_bytes(
        changelog.read_bytes() + APPEND.replace("vllm", "sglang").format(link="XXX").encode()
    )
    result = run(pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194")
    assert result.returncode == 1
    assert "GOV501" in result.stdout and "did you mean `dsv4-fp8-mi300x-vllm`" in result.stdout
    assert (
        run(
            pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194", "--no-configs"
        ).returncode
        == 0
    )


def test_staged_reads_the_index(pr_branch: Repo, gov_exe: str) -> None:
    append(pr_branch, "PLACEHOLDER")
    pr_branch.git("add", "perf-changelog.yaml")
    (pr_branch.path / "perf-changelog.yaml").write_bytes(b"garbage")  # worktree differs from index
    assert "GOV401" in run(pr_branch.path, gov_exe, "check", "--staged", "--pr", "2194").stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--base-ref", "no-such-ref"], "unknown git revision 'no-such-ref'"),
        (["check", "--pr", "1", "--main"], "--pr and --main are exclusive"),
        (["check", "--head-ref", "HEAD", "--worktree"], "cannot be combined"),
        (["check", "--pr", "abc"], "Invalid value"),
    ],
)
def test_usage_errors_exit_2(
    example_repo: Repo, gov_exe: str, args: list[str], message: str
) -> None:
    result = run(example_repo.path, gov_exe, *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_changelog_is_a_usage_error(make_repo, gov_exe: str) -> None:
    repo = make_repo()
    repo.commit("empty", **{"README": "x"})
    result = run(repo.path, gov_exe, "check", "--base-ref", "HEAD")
    assert result.returncode == 2 and "perf-changelog.yaml does not exist" in result.stderr


def test_shallow_clone_without_merge_base_says_unshallow(
    example_repo: Repo, gov_exe: str, tmp_path: Path
) -> None:
    example_repo.commit("second", **{"x.txt": "1"})
    example_repo.git("checkout", "-q", "-b", "feature")
    example_repo.commit("third", **{"y.txt": "1"})
    example_repo.git("checkout", "-q", "main")
    example_repo.commit("main moves", **{"z.txt": "1"})
    clone = tmp_path / "shallow"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            f"file://{example_repo.path}",
            str(clone),
        ],
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    subprocess.run(["git", "checkout", "-q", "feature"], cwd=clone, check=True)
    result = run(clone, gov_exe, "check")
    assert result.returncode == 2
    assert "git fetch --unshallow" in result.stderr


def test_internal_error_exit_3_without_traceback(example_repo: Repo, gov_exe: str) -> None:
    # An unreadable changelog path (a directory) is not anticipated anywhere.
    result = run(
        example_repo.path, gov_exe, "check", "--worktree", env={"GOV_CHANGELOG": "configs"}
    )
    assert result.returncode in (2, 3)
    assert "Traceback" not in result.stderr


def test_settings_come_from_pyproject_env_and_flags(pr_branch: Repo, gov_exe: str) -> None:
    (pr_branch.path / "pyproject.toml").write_text('[tool.gov]\nrepository = "acme/bench"\n')
    append(pr_branch, "https://github.com/acme/bench/pull/2194")
    assert run(pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194").returncode == 0
    env = {"GOV_REPOSITORY": "other/repo"}
    assert (
        run(pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194", env=env).returncode == 1
    )
    flag = ["--repository", "acme/bench"]
    assert (
        run(
            pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194", *flag, env=env
        ).returncode
        == 0
    )


def test_unknown_setting_is_named_with_a_suggestion(example_repo: Repo, gov_exe: str) -> None:
    (example_repo.path / ".gov.toml").write_text('chagelog = "x.yaml"\n')
    result = run(example_repo.path, gov_exe, "check")
    assert result.returncode == 2
    assert (
        "unknown setting `chagelog`" in result.stderr
        and "did you mean `changelog`" in result.stderr
    )


def test_check_writes_nothing(pr_branch: Repo, gov_exe: str) -> None:
    append(pr_branch, "PLACEHOLDER")
    before = pr_branch.git("status", "--porcelain", "--ignored")
    run(pr_branch.path, gov_exe, "check", "--worktree", "--pr", "2194")
    assert pr_branch.git("status", "--porcelain", "--ignored") == before


def test_audit_jsonl_and_table(example_repo: Repo, gov_exe: str) -> None:
    append(example_repo, "https://github.com/SemiAnalysisAI/InferenceX/pull/2200")
    example_repo.commit("Retune (#2200)")
    changelog = example_repo.path / "perf-changelog.yaml"
    changelog.write_bytes(changelog.read_bytes() + b"\n")  # breaks the final-newline rule
    example_repo.commit("Sloppy (#2201)")
    result = run(example_repo.path, gov_exe, "audit", "--format", "jsonl", "--no-configs")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["pr"] for r in rows] == [2200, 2201]
    assert rows[0]["main"]["ok"] and rows[0]["pr_mode"]["ok"]
    assert rows[1]["main"]["violations"][0]["code"] == "GOV311"
    table = run(example_repo.path, gov_exe, "audit", "--no-configs")
    assert table.returncode == 1
    assert "2 changelog commits checked: 1 fail main mode" in table.stdout


def test_schema_check_passes_on_the_committed_schemas(gov_exe: str) -> None:
    project = Path(__file__).resolve().parents[1]
    result = run(project, gov_exe, "schema", "--check")
    assert result.returncode == 0, result.stderr


def test_help_lists_the_commands(gov_exe: str, tmp_path: Path) -> None:
    result = run(tmp_path, gov_exe, "--help")
    assert result.returncode == 0
    for command in ("check", "audit", "schema"):
        assert command in result.stdout


def test_matrix_unknown_key_is_reported_once_with_a_suggestion(
    example_repo: Repo, gov_exe: str
) -> None:
    result = run(example_repo.path, gov_exe, "matrix", "--config-key", "dsv4-fp8-mi300x-vlm")
    assert result.returncode == 1
    assert result.stderr.count("Available keys") == 1, result.stderr
    assert result.stderr.startswith("GOV501 ")  # no empty location prefix
    assert "did you mean 'dsv4-fp8-mi300x-vllm'" in result.stderr


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
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert loaded == []
