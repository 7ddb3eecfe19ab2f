"""The wheel is complete: built from this tree, installed into a fresh venv
outside it, `gov demo` and `gov launch --dry-run` run from the package data
alone (the example repository and the Slurm wrapper ship inside the wheel).

One test, because building and installing is the slow part (about 20 s, most
of it pip installing the dependencies from the package index)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness import GIT_ENV, PROJECT, Repo

pytestmark = pytest.mark.wheel

ENTRY = """
- config-keys:
    - dsr1-fp8-mi300x-sglang
  description:
    - "Re-run the MI300X baseline"
  pr-link: XXX
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
    )
    return done.stdout


def test_the_installed_wheel_runs_the_demo_and_a_dry_run_launch(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    # The child processes see no trace of the source tree.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(GIT_ENV, HOME=str(outside))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]

    _run(
        [*pip, "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(PROJECT)], outside, env
    )
    (wheel,) = (tmp_path / "dist").glob("gov-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], outside, env)
    python = venv / "bin" / "python"
    # pip of this interpreter installs into the new venv (no pip bootstrap there).
    _run(
        [
            *pip,
            "--python",
            str(python),
            "install",
            "-q",
            "--no-compile",
            "--only-binary",
            ":all:",
            str(wheel),
        ],
        outside,
        env,
    )
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    gov = str(venv / "bin" / "gov")

    located = _run(
        [str(python), "-c", "import governance; print(governance.__file__)"], outside, env
    )
    assert Path(located.strip()).is_relative_to(venv), located

    demo = _run([gov, "demo"], outside, env)
    assert "== gov prepare-merge --pr 2194:" in demo
    assert "PR #2194 squash-merged as" in demo

    # A repository made from the example the wheel ships, one appended entry.
    example = Path(
        _run(
            [
                str(python),
                "-c",
                "from importlib import resources; print(resources.files('governance.resources') / 'example')",
            ],
            outside,
            env,
        ).strip()
    )
    assert example.is_relative_to(venv), example
    (outside / "bench").mkdir()
    repo = Repo(outside / "bench")
    shutil.copytree(example, repo.path, dirs_exist_ok=True)
    repo.commit("Example benchmark repository")
    changelog = repo.path / "perf-changelog.yaml"
    repo.commit("Re-run the baseline", **{"perf-changelog.yaml": changelog.read_text() + ENTRY})

    plan = _run([gov, "plan", "--base-ref", "HEAD~1", "--format", "json"], repo.path, env)
    rows = json.loads(plan)
    assert rows, plan
    (repo.path.parent / "plan.json").write_text(plan)
    dry = _run(
        [gov, "launch", "--plan", str(repo.path.parent / "plan.json"), "--dry-run"], repo.path, env
    )
    last = dry.strip().splitlines()[-1]
    resolved, _, total = last.partition(" rows resolve")[0].partition(" of ")
    assert resolved == total and int(total) > 0, dry
    assert "dsr1_fp8_mi300x.sh" in dry
