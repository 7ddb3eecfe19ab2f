"""Launched scripts never see gov's forge tokens: not in their environment,
not in their parent's (`/proc/$PPID/environ`), not in what sbatch exports."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from governance.forge import tokens
from tests.harness import Repo, run_process
from tests.sweeps.conftest import make_row, plan_of, write_script

SECRET = "ghp_" + "S3cr3tT0k3n" * 3
SPY = (
    'cat "/proc/$PPID/environ" > "$RESULT_DIR/parent.env" 2>/dev/null || true\n'
    'env > "$RESULT_DIR/own.env"\n'
    'printf "{}" > "$RESULT_DIR/$RESULT_FILENAME.json"\n'
)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="Linux /proc only")
def test_a_launch_script_cannot_read_gov_s_token_from_its_parent(
    sweep_repo: Repo, tmp_path: Path
) -> None:
    scripts = sweep_repo.path / "launch" / "benchmarks"
    write_script(scripts, "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", SPY)
    sweep_repo.commit("spy")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(plan_of([make_row()])))
    done = run_process(
        [sys.executable, "-c", "from governance.cli.app import main; main()",
         "launch", "--plan", str(plan)],
        cwd=sweep_repo.path,
        env={"GH_TOKEN": SECRET, "GITHUB_TOKEN": SECRET + "2", "HF_TOKEN": "hf_for_scripts"},
    )  # fmt: skip
    assert done.exit_code == 0, done.stdout + done.stderr
    [parent] = (sweep_repo.path / ".git" / "gov" / "results").rglob("parent.env")
    [own] = parent.parent.glob("own.env")
    seen = parent.read_bytes() + own.read_bytes()
    assert b"MODEL=" in own.read_bytes() and b"PATH=" in parent.read_bytes()
    assert SECRET.encode() not in seen and SECRET[4:12].encode() not in seen
    assert b"hf_for_scripts" in own.read_bytes()  # the scripts' own secret still passes


def test_tokens_move_out_of_the_environment_into_gov_s_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GH_TOKEN", SECRET)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    tokens.take_tokens()
    assert "GH_TOKEN" not in os.environ
    assert tokens.token_from_env() == SECRET
    assert tokens.token_from_env({}) is None  # an explicit environment is taken as given
    monkeypatch.setattr(tokens, "_TAKEN", {})
