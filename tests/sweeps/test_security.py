"""Hostile row values never execute and never steer a path out of its folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.core.fingerprint import recipe_fingerprint
from governance.sweeps.dispatch import launch_rows
from governance.sweeps.identity import PlanRow, plan_rows
from governance.sweeps.ledger import Ledger
from governance.sweeps.local_launcher import LocalLauncher
from governance.sweeps.naming import ScriptResolver
from governance.sweeps.resolve import resolve_rows
from tests.sweeps.conftest import SCRIPTS, make_row, plan_of, write_script

HOSTILE = [
    "$(touch pwned)",
    "`touch pwned`",
    "x; touch pwned",
    "a\ntouch pwned\n",
    "../../../../tmp/pwned",
    "' \" && touch pwned || true",
]
ECHO = (
    'printf "%s" "$IMAGE" > "$RESULT_DIR/image.txt"\n'
    'printf "%s" "$MODEL" > "$RESULT_DIR/model.txt"\n'
    'printf "%s" "${CONFIG_FILE:-}" > "$RESULT_DIR/extra.txt"\n'
    'printf "{}" > "$RESULT_DIR/$RESULT_FILENAME.json"\n'
)


def pwned(*roots: Path) -> list[Path]:
    return [p for root in roots for p in root.rglob("*pwned*")]


def run_rows(tmp_path: Path, scripts: Path, rows: list[dict[str, Any]]) -> tuple[list, list]:
    resolver = ScriptResolver(scripts)
    results = tmp_path / "results"
    resolved = resolve_rows(plan_rows(plan_of(rows)), resolver, results, machine="local-test")
    with Ledger(tmp_path / "runs.sqlite3") as ledger:
        result = launch_rows(
            resolved, LocalLauncher(), ledger, commit="0" * 40, pr=None, parallel=2
        )
    return resolved, result.outcomes


@pytest.mark.parametrize("value", HOSTILE)
def test_values_reach_the_script_verbatim_and_never_run(
    tmp_path: Path, scripts_dir: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_script(scripts_dir, "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", ECHO)
    _, outcomes = run_rows(tmp_path, scripts_dir, [make_row(image=value, model=value)])
    assert [str(o.status) for o in outcomes] == ["succeeded"]
    folder = outcomes[0].job.result_dir
    assert (folder / "image.txt").read_text() == value
    assert (folder / "model.txt").read_text() == value
    assert json.loads(outcomes[0].job.row_json.read_text())["image"] == value
    assert not pwned(tmp_path, scripts_dir)


@pytest.mark.parametrize("value", HOSTILE)
def test_the_shipped_example_script_is_safe_too(
    tmp_path: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _, outcomes = run_rows(tmp_path, SCRIPTS, [make_row(image=value, model=value)])
    assert [str(o.status) for o in outcomes] == ["succeeded"], outcomes[0].log_path.read_text()
    assert not pwned(tmp_path, SCRIPTS)


@pytest.mark.parametrize("field", ["exp-name", "precision", "framework", "runner", "spec-decoding"])
@pytest.mark.parametrize("value", HOSTILE)
def test_values_used_in_paths_are_refused(
    tmp_path: Path, scripts_dir: Path, field: str, value: str
) -> None:
    write_script(scripts_dir, "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", ECHO)
    resolved, outcomes = run_rows(tmp_path, scripts_dir, [make_row(**{field: value})])
    assert outcomes == []
    assert resolved[0].job is None and resolved[0].code == "GOV703"
    assert f"`{field}`" in resolved[0].problem
    assert not pwned(tmp_path, scripts_dir)


@pytest.mark.parametrize(
    "fingerprint", ["../../../etc", "ABCDEF" * 11, "g" * 64, "a" * 63, "a" * 64 + "/..", 7]
)
def test_fingerprints_must_be_hex(tmp_path: Path, scripts_dir: Path, fingerprint: object) -> None:
    write_script(scripts_dir, "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", ECHO)
    resolved, outcomes = run_rows(
        tmp_path, scripts_dir, [make_row(**{"recipe-fingerprint": fingerprint})]
    )
    assert outcomes == [] and resolved[0].code == "GOV703"
    assert "recipe-fingerprint" in resolved[0].problem
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("conc", ["4; touch pwned", -1, 0, True, "../4", [4, "x"]])
def test_conc_must_be_positive_integers(tmp_path: Path, scripts_dir: Path, conc: object) -> None:
    write_script(scripts_dir, "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", ECHO)
    resolved, outcomes = run_rows(tmp_path, scripts_dir, [make_row(conc=conc)])
    assert outcomes == [] and resolved[0].code == "GOV703"


def _multinode(settings: list[str]) -> dict[str, Any]:
    worker = {"num-worker": 1, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1}
    row = make_row()
    for key in ("tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn"):
        row.pop(key)
    row["prefill"] = {**worker, "dp-attn": False, "additional-settings": settings}
    row["decode"] = {**worker, "dp-attn": False, "additional-settings": []}
    row["conc"] = [4, 8]
    row.pop("recipe-fingerprint")
    row["recipe-fingerprint"] = recipe_fingerprint(row)  # the row gov plan would print
    return row


@pytest.mark.parametrize(
    "setting",
    [
        "LD_PRELOAD=/tmp/evil.so",
        "PATH=/tmp",
        "BASH_ENV=/tmp/x",
        "lower=1",
        "NOEQUALS",
        "A B=1",
        # where downloads go and with which credentials, what runs at start-up
        "HF_ENDPOINT=https://evil.example",
        "HTTPS_PROXY=http://evil:3128",
        "HTTP_PROXY=x",
        "NODE_OPTIONS=--require=/tmp/x.js",
        "GIT_SSH_COMMAND=sh -c x",
        "TMPDIR=/tmp/x",
        "HF_TOKEN=hf_x",
        "RESULT_DIR=/tmp",
        "NCCL_NET_PLUGIN=/tmp/x.so",
        "VLLM_PLUGINS=evil",
        "SGLANG_ENDPOINT=x",
        "EXTRA=1",
        # where code or data comes from, where traffic goes (issue 18)
        "SRT_SLURM_REPOSITORY=https://evil.example/srt-slurm.git",
        "SRT_SLURM_REF=evil-branch",
        "VLLM_USAGE_STATS_SERVER=https://evil.example",
        "NCCL_DEBUG_FILE=/home/me/.bashrc",
        "VLLM_K3_FORK_REF=evil",
        "KIMIK3_SQUASH_FILE_OVERRIDE=/tmp/evil.sqsh",
        "KIMIK3_CANARY_SQUASH_URL=https://evil.example/x.sqsh",
        "MULTINODE_SERVER_SCRIPT=/tmp/x.sh",
        "SGLANG_MODEL_REPO=evil/model",
        "LMCACHE_REMOTE_URL=lm://evil:65432",
        "NCCL_SOCKET_IFNAME=tun0",
        "VLLM_CACHE_ROOT=/home/me",
        "MORI_MIRROR=x",
    ],
)
def test_dangerous_additional_settings_are_refused(scripts_dir: Path, setting: str) -> None:
    row = PlanRow("multi_node", "1k1k", 0, _multinode([setting]))
    write_script(scripts_dir, "multi_node/fixed_seq_len/dsr1_fp8_mi300x.sh", ECHO)
    resolved = resolve_rows([row], ScriptResolver(scripts_dir), scripts_dir / "r", machine="m")
    assert resolved[0].job is None and "additional-settings" in resolved[0].problem


def _exported_names(clone: Path, revisions: list[str]) -> set[str]:
    import re
    import subprocess

    found = subprocess.run(
        ["git", "-C", str(clone), "grep", "-h", "-E", r'^\s*-\s*"?[A-Z][A-Z0-9_]*=',
         *revisions, "--", "configs/*-master.yaml", ".github/configs/*-master.yaml"],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    return set(re.findall(r'^(?:[^:\n]*:){0,2}\s*-\s*"?([A-Z][A-Z0-9_]*)=', found, re.M))


def test_every_name_the_corpus_exports_is_allowed_but_where_code_comes_from(
    corpus_clone: Path,
) -> None:
    """The allow-list's evidence: every `additional-settings` name in the
    reference's master configs at main passes, and at every PR branch head
    all but the names that pick where code or data comes from (which
    srt-slurm checkout, which fork, which squash image): gov decides that."""
    import subprocess

    from governance.sweeps.extra_env import allowed

    heads = subprocess.run(
        ["git", "-C", str(corpus_clone), "for-each-ref", "--format=%(objectname)", "refs/heads"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    at_main = _exported_names(corpus_clone, ["main"])
    assert {"CONFIG_FILE", "PREFILL_NODES", "SYNTHETIC_ACCEPTANCE"} <= at_main
    assert sorted(n for n in at_main if not allowed(n)) == []
    names = _exported_names(corpus_clone, sorted(set(heads)))
    assert {"CONFIG_FILE", "PREFILL_NODES", "ROUTER_TYPE", "HF_HUB_CACHE"} <= names
    assert sorted(n for n in names if not allowed(n)) == [
        "KIMIK3_CANARY_SQUASH_URL",
        "KIMIK3_SQUASH_FILE_OVERRIDE",
        "SRT_SLURM_REF",
        "SRT_SLURM_REPOSITORY",
        "VLLM_K3_FORK_REF",
    ]
    assert allowed("WEKA_LOADER_OVERRIDE")


def test_additional_settings_values_are_exported_verbatim(
    tmp_path: Path, scripts_dir: Path
) -> None:
    script = ECHO.replace(
        '"$RESULT_DIR/$RESULT_FILENAME.json"', '"$RESULT_DIR/${RESULT_FILENAME}_x.json"'
    )
    write_script(scripts_dir, "multi_node/fixed_seq_len/dsr1_fp8_mi300x.sh", script)
    document = plan_of([])
    document["multi_node"] = {"1k1k": [_multinode(["CONFIG_FILE=$(touch pwned)"])]}
    resolved = resolve_rows(
        plan_rows(document), ScriptResolver(scripts_dir), tmp_path / "r", machine="m"
    )
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        result = launch_rows(
            resolved, LocalLauncher(), ledger, commit="0" * 40, pr=None, parallel=1
        )
    assert [str(o.status) for o in result.outcomes] == ["succeeded"]
    job = result.outcomes[0].job
    assert (job.result_dir / "extra.txt").read_text() == "$(touch pwned)"
    assert job.env["CONC_LIST"] == "4 8" and job.result_dir.name.endswith("-conc4x8")
    assert not pwned(tmp_path, scripts_dir)


def test_result_folders_stay_inside_the_results_root(tmp_path: Path, scripts_dir: Path) -> None:
    write_script(scripts_dir, "single_node/fixed_seq_len/dsr1_fp8_mi300x.sh", ECHO)
    _, outcomes = run_rows(tmp_path, scripts_dir, [make_row(conc=c) for c in (4, 8)])
    root = (tmp_path / "results").resolve()
    for outcome in outcomes:
        assert outcome.job.result_dir.resolve().is_relative_to(root)
        fingerprint = outcome.job.env["RECIPE_FINGERPRINT"]
        # <results>/runs/<launch token>/<fp16>-conc<N>: the row's own folder in this launch
        assert outcome.job.result_dir.name.startswith(fingerprint[:16] + "-conc")
        assert outcome.job.result_dir.parent.parent == root / "runs"
    assert len({o.job.result_dir.parent for o in outcomes}) == 1  # one launch, one token
