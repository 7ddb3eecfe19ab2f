"""The trust boundary: a change cannot switch the gate off with its own
settings, and a hostile tree (symlinks, submodules, special files) is refused
with the reason (exit 2), never followed."""

from __future__ import annotations

import json
import os

from tests.harness import Repo, run_gov

DECOY = "- config-keys:\n    - x\n  description:\n    - decoy\n  pr-link: XXX\n"


def _hostile_pr(repo: Repo) -> None:
    """A PR that deletes every history entry and points `changelog` at a decoy."""
    repo.git("checkout", "-q", "-b", "pr-7")
    log = repo.path / "perf-changelog.yaml"
    log.write_text(log.read_text().split("\n- config-keys")[0] + "\n")  # history deleted
    repo.write(".gov.toml", 'changelog = "decoy.yaml"\n')
    repo.write("decoy.yaml", DECOY)


def test_a_prs_own_settings_cannot_point_the_check_at_a_decoy(example_repo: Repo) -> None:
    _hostile_pr(example_repo)
    example_repo.commit("innocent")
    result = run_gov("check", "--pr", "7", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "perf-changelog.yaml:" in result.stdout and "GOV3" in result.stdout
    assert "warning: GOV801 settings changed by this change (`changelog`)" in result.stdout
    ci = run_gov(
        "check", "--base-ref", "main", "--head-ref", "pr-7", "--pr", "7", "--no-configs",
        "--format", "json", cwd=example_repo.path,
    )  # fmt: skip
    data = json.loads(ci.stdout)
    assert ci.exit_code == 1 and not data["ok"]
    assert [n["code"] for n in data["warnings"]] == ["GOV801"]
    assert data["warnings"][0]["path"] == ".gov.toml"


def test_a_prs_own_settings_cannot_choose_what_its_plan_runs(example_repo: Repo) -> None:
    """`gov plan` (the Action's "what this PR will run") reads the settings at
    the base too: a PR's `.gov.toml` naming a decoy changelog plans nothing of it."""
    example_repo.git("checkout", "-q", "-b", "pr-7")
    log = example_repo.path / "perf-changelog.yaml"
    real = log.read_text() + (
        "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n"
        '    - "Retune"\n  pr-link: XXX\n'
    )
    example_repo.write("perf-changelog.yaml", real)
    example_repo.write(".gov.toml", 'changelog = "decoy.yaml"\n')
    example_repo.write("decoy.yaml", DECOY)
    example_repo.commit("a real entry, and a decoy changelog")
    plan = run_gov("plan", "--format", "json", cwd=example_repo.path)
    assert plan.exit_code == 0, plan.stderr
    rows = json.loads(plan.stdout)["single_node"]
    assert sum(len(bucket) for bucket in rows.values()) > 0  # the real changelog's entry


def test_the_hook_modes_read_settings_from_the_merge_base_too(example_repo: Repo) -> None:
    _hostile_pr(example_repo)  # not committed: the pre-commit hook's view
    worktree = run_gov("check", "--worktree", "--no-configs", cwd=example_repo.path)
    assert worktree.exit_code == 1 and "GOV801" in worktree.stdout
    example_repo.git("add", "-A")
    staged = run_gov("check", "--staged", "--no-configs", cwd=example_repo.path)
    assert staged.exit_code == 1 and "perf-changelog.yaml:" in staged.stdout


def test_a_settings_change_alone_is_reported_not_failed(example_repo: Repo) -> None:
    example_repo.git("checkout", "-q", "-b", "pr-8")
    example_repo.commit("phase in", **{".gov.toml": 'ignore = ["GOV312"]\n'})
    result = run_gov("check", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 0, result.stdout
    assert "warning: GOV801" in result.stdout and "`ignore`" in result.stdout
    # Another part of pyproject.toml is not gov's settings: nothing to report.
    example_repo.commit("tooling", **{"pyproject.toml": "[tool.ruff]\nline-length = 99\n"})
    example_repo.git("checkout", "-q", "main")
    example_repo.git("checkout", "-q", "-b", "pr-9")
    example_repo.commit("tooling", **{"pyproject.toml": "[tool.ruff]\nline-length = 99\n"})
    assert "GOV801" not in run_gov("check", "--no-configs", cwd=example_repo.path).stdout


def test_prepare_merge_takes_settings_from_main_not_the_checkout(example_repo: Repo) -> None:
    example_repo.configure_identity()
    example_repo.git("checkout", "-q", "-b", "bringup")
    entry = (
        "\n- config-keys:\n    - dsv4-fp8-mi300x-vllm\n  description:\n    - d\n  pr-link: XXX\n"
    )
    log = example_repo.path / "perf-changelog.yaml"
    log.write_text(log.read_text() + entry)
    example_repo.commit("bringup")
    assert (
        run_gov(
            "pr", "open", "--number", "12", "--branch", "bringup", cwd=example_repo.path
        ).exit_code
        == 0
    )
    example_repo.git("checkout", "-q", "-b", "evil", "main")
    example_repo.commit("decoy", **{".gov.toml": 'changelog = "decoy.yaml"\n', "decoy.yaml": DECOY})
    result = run_gov("prepare-merge", "--pr", "12", "--dry-run", cwd=example_repo.path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "perf-changelog.yaml" in result.stdout or "1 link(s) rewritten" in result.stdout
    assert "decoy.yaml" not in result.stdout


# -- hostile trees -------------------------------------------------------------------


def test_committed_symlink_changelog_is_refused_not_followed(example_repo: Repo) -> None:
    log = example_repo.path / "perf-changelog.yaml"
    log.unlink()
    log.symlink_to("/proc/self/environ")
    example_repo.commit("link")
    for args in (("--worktree",), ("--staged",), ()):
        result = run_gov(
            "check", *args, "--no-configs", cwd=example_repo.path, env={"HF_TOKEN": "hf_s3cr3t"}
        )
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert "symlink" in result.stderr and "hf_s3cr3t" not in result.stdout + result.stderr


def test_symlinked_folder_on_the_way_is_refused(
    example_repo: Repo, tmp_path: os.PathLike[str]
) -> None:
    outside = example_repo.path.parent / "outside"
    outside.mkdir()
    (outside / "perf-changelog.yaml").write_bytes(
        (example_repo.path / "perf-changelog.yaml").read_bytes()
    )
    (example_repo.path / "sub").symlink_to(outside)
    example_repo.commit("settings", **{".gov.toml": 'changelog = "sub/perf-changelog.yaml"\n'})
    result = run_gov("check", "--worktree", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 2 and "sub is a symlink" in result.stderr


def test_submodule_at_the_changelog_path_is_refused(example_repo: Repo) -> None:
    head = example_repo.sha("HEAD")
    example_repo.git("rm", "-q", "--cached", "perf-changelog.yaml")
    example_repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},perf-changelog.yaml")
    example_repo.git("commit", "-q", "-m", "gitlink")
    result = run_gov("check", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "submodule" in result.stderr


def test_a_folder_at_the_changelog_path_is_refused(example_repo: Repo) -> None:
    log = example_repo.path / "perf-changelog.yaml"
    log.unlink()
    log.mkdir()
    (log / "x").write_text("x")
    result = run_gov("check", "--worktree", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 2 and "folder" in result.stderr


# -- a change's own settings must load (GOV802) --------------------------------------


def test_settings_that_would_brick_the_gate_fail_the_change_that_adds_them(
    example_repo: Repo,
) -> None:
    """`ignore = ["GOV101"]` is read from the base, so it passed with GOV801 only; once
    landed, every later check exited 2. The change itself now fails at the line."""
    example_repo.git("checkout", "-q", "-b", "pr-8")
    example_repo.commit(
        "brick",
        **{".gov.toml": '# phase in\nchangelog = "perf-changelog.yaml"\nignore = ["GOV101"]\n'},
    )
    result = run_gov("check", "--no-configs", cwd=example_repo.path)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert ".gov.toml:3:1: GOV802" in result.stdout, result.stdout
    assert "cannot be ignored" in result.stdout
    ci = run_gov(
        "check", "--base-ref", "main", "--head-ref", "pr-8", "--no-configs", "--format", "json",
        cwd=example_repo.path,
    )  # fmt: skip
    data = json.loads(ci.stdout)
    assert ci.exit_code == 1 and [v["code"] for v in data["violations"]] == ["GOV802"]
    assert (data["violations"][0]["path"], data["violations"][0]["line"]) == (".gov.toml", 3)


def test_unloadable_settings_are_located_in_every_form(example_repo: Repo) -> None:
    cases = {
        "pyproject.toml": ('[project]\nname = "x"\n\n[tool.gov]\nmain-branch = "a b"\n', 5),
        ".gov.toml": ('changelog = "ok.yaml"\nignore = [\n', 2),  # TOML syntax: its position
    }
    for name, (text, line) in cases.items():
        example_repo.git("checkout", "-q", "-B", f"pr-{line}", "main")
        example_repo.commit("bad settings", **{name: text})
        result = run_gov("check", "--no-configs", "--format", "json", cwd=example_repo.path)
        assert result.exit_code == 1, result.stdout + result.stderr
        found = json.loads(result.stdout)["violations"]
        assert [(v["code"], v["path"], v["line"]) for v in found] == [("GOV802", name, line)]
    # The hook's view: the working tree's file.
    example_repo.git("checkout", "-q", "-B", "pr-w", "main")
    example_repo.write(".gov.toml", 'placeholders = ["{number}"]\n')
    worktree = run_gov("check", "--worktree", "--no-configs", cwd=example_repo.path)
    assert worktree.exit_code == 1 and ".gov.toml:1:1: GOV802" in worktree.stdout
