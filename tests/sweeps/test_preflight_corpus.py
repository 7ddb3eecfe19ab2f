"""The preflight on the real InferenceX scripts: PR #2194's seed failure, and no false
warnings over every launch script at the bundle's `main`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.sweeps.flagindex import build_index, flag_warnings
from governance.sweeps.shellscan import flag_uses
from tests.harness import clone_scripts_bundle, git, run_gov

pytestmark = pytest.mark.corpus
SCRIPT = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi300x.sh"


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone_scripts_bundle(tmp_path_factory)


def test_pr_2194_sglang_quantization_is_flagged_at_the_script_line(clone: Path) -> None:
    done = run_gov(
        "check",
        "--base-ref",
        "base",
        "--head-ref",
        "pr/2194-scaffold",
        "--pr",
        "2194",
        "--format",
        "json",
        cwd=clone,
    )
    assert done.exit_code == 0, done.stdout + done.stderr  # a warning does not fail
    out = json.loads(done.stdout)
    [warning] = out["warnings"]
    assert (warning["code"], warning["path"], warning["line"], warning["column"]) == (
        "GOV713",
        SCRIPT,
        99,
        20,
    )
    assert "`--quantization deepseek_v4_fp8`" in warning["message"]
    assert "only vLLM scripts" in warning["message"]
    assert "benchmarks/single_node/fixed_seq_len/dsv4_fp8_h200.sh:65:16" in warning["message"]
    assert out["preflight"]["scripts"] == [SCRIPT] and out["preflight"]["rows"] > 0
    failing = run_gov(
        "check",
        "--base-ref",
        "base",
        "--head-ref",
        "pr/2194-scaffold",
        "--pr",
        "2194",
        cwd=clone,
        env={"GOV_PREFLIGHT_WARNINGS_FAIL": "1"},
    )
    assert failing.exit_code == 1
    assert f"{SCRIPT}:99:20: GOV713" in failing.stdout


def test_no_false_warnings_over_every_script_at_main(clone: Path) -> None:
    names = git(clone, "ls-tree", "-r", "--name-only", "main", "benchmarks").split()
    scripts = {name: _show(clone, name) for name in names if name.endswith(".sh")}
    index = build_index(scripts)
    engines = sum(bool(flag_uses(data)) for data in scripts.values())
    warned = [
        f"{path}:{w.use.line}:{w.use.column}: {w.message()}"
        for path, data in sorted(scripts.items())
        for w in flag_warnings(data, index, frozenset({path}))
    ]
    print(f"{len(scripts)} scripts, {engines} start an engine, {len(warned)} false warning(s)")
    print("\n".join(warned[:10]))
    assert len(scripts) > 200 and engines > 150
    assert warned == []


def _show(clone: Path, name: str) -> bytes:
    import subprocess

    return subprocess.run(
        ["git", "-C", str(clone), "show", f"main:{name}"], check=True, capture_output=True
    ).stdout
