"""Every door finds the master configs where the revision it judges keeps
them (core/layout.py): a PR branch forked before the masters moved from
`.github/configs/` to `configs/` (InferenceX #1992) is checked and planned
against its own files, and settings that name the old paths reach
`gov matrix` and prepare-merge too (one settings owner, no path defaults)."""

from __future__ import annotations

import json

from governance.core.layout import Layout
from tests.harness import Repo, run_gov
from tests.sweeps.test_cli_sweeps import append_entry

MASTERS = ("configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml")


def move_configs(repo: Repo, to: str) -> None:
    for path in MASTERS:
        target = f"{to}/{path}"
        (repo.path / target).parent.mkdir(parents=True, exist_ok=True)
        repo.git("mv", path, target)


def test_layout_follows_a_moved_file_and_keeps_what_exists() -> None:
    layout = Layout("perf-changelog.yaml", ("configs/a.yaml", "configs/b.yaml"), "configs/r.yaml")
    tree = {".github/configs/a.yaml", "configs/b.yaml", "x/r.yaml", "y/z/r.yaml"}
    found = layout.at(tree.__contains__, lambda: sorted(tree))
    assert found.masters == (".github/configs/a.yaml", "configs/b.yaml")
    assert found.runners == "x/r.yaml"  # the shortest path of that name
    assert found.moved == (
        ("configs/a.yaml", ".github/configs/a.yaml"),
        ("configs/r.yaml", "x/r.yaml"),
    )
    missing = layout.at(lambda _p: False, lambda: [])
    assert missing.masters == layout.masters and missing.moved == ()


def test_a_branch_forked_before_the_masters_moved(example_repo: Repo) -> None:
    repo = example_repo
    move_configs(repo, ".github")
    repo.commit("Masters under .github/configs/")
    repo.git("checkout", "-q", "-b", "old-pr")
    append_entry(repo, "dsr1-fp8-mi300x-sglang")
    repo.git("checkout", "-q", "main")
    for path in MASTERS:  # main moves them to configs/ (the default settings)
        (repo.path / path).parent.mkdir(parents=True, exist_ok=True)
        repo.git("mv", f".github/configs/{path.split('/', 1)[1]}", path)
    repo.commit("Move the masters to configs/ (#1992)")
    repo.git("checkout", "-q", "old-pr")
    checked = run_gov("check", "--pr", "7", cwd=repo.path)
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert "GOV510" not in checked.stdout and "1 config key(s)" in checked.stdout
    planned = run_gov("plan", "--format", "json", cwd=repo.path)
    assert planned.exit_code == 0, planned.stderr
    assert json.loads(planned.stdout)["single_node"], planned.stdout[:300]
    rows = run_gov("matrix", "--config-key", "dsr1-fp8-mi300x-sglang", cwd=repo.path)
    assert rows.exit_code == 0 and json.loads(rows.stdout), rows.stderr


def test_settings_naming_the_old_paths_reach_every_door(example_repo: Repo) -> None:
    """`gov init` writes master-configs/runners for masters under
    .github/configs/; check, plan, matrix and prepare-merge all read them."""
    repo = example_repo
    move_configs(repo, ".github")
    repo.write(
        ".gov.toml",
        'master-configs = [".github/configs/amd-master.yaml", '
        '".github/configs/nvidia-master.yaml"]\nrunners = ".github/configs/runners.yaml"\n',
    )
    repo.commit("Masters under .github/configs/, said in the settings")
    repo.git("checkout", "-q", "-b", "pr")
    append_entry(repo, "dsr1-fp8-mi300x-sglang")
    assert run_gov("check", "--pr", "7", cwd=repo.path).exit_code == 0
    assert run_gov("plan", cwd=repo.path).exit_code == 0
    rows = run_gov("matrix", "--config-key", "dsr1-fp8-mi300x-sglang", cwd=repo.path)
    assert rows.exit_code == 0, rows.stdout + rows.stderr
    assert run_gov("pr", "open", "--number", "7", "--branch", "pr", cwd=repo.path).exit_code == 0
    repo.git("checkout", "-q", "main")
    prepared = run_gov("prepare-merge", "--pr", "7", "--dry-run", cwd=repo.path)
    assert prepared.exit_code == 0, prepared.stdout + prepared.stderr
    assert "GOV510" not in prepared.stdout


def test_a_list_setting_from_the_environment_reads_an_array(example_repo: Repo) -> None:
    repo = example_repo
    move_configs(repo, ".github")
    repo.commit("Masters under .github/configs/")
    env = {
        "GOV_MASTER_CONFIGS": '[".github/configs/amd-master.yaml", ".github/configs/nvidia-master.yaml"]',
        "GOV_RUNNERS": ".github/configs/runners.yaml",
    }
    rows = run_gov("matrix", "--config-key", "dsr1-fp8-mi300x-sglang", cwd=repo.path, env=env)
    assert rows.exit_code == 0, rows.stdout + rows.stderr
    bad = run_gov("matrix", "--config-key", "x", cwd=repo.path, env={"GOV_MASTER_CONFIGS": "[1, 2"})
    assert bad.exit_code == 2 and "not an array of strings" in bad.stderr
