"""Plan row -> LaunchJob: environment, result file name, folders (docs/sweeps.md).

Row values reach a script only as environment variables and as a JSON file;
the script runs from an argv list, never through a shell string. Values that
name files are validated in `rows`; everything else is passed verbatim (a
script that quotes its variables is safe whatever a config says).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from governance.core.atomic import write_atomically
from governance.sweeps import extra_env
from governance.sweeps.identity import PlanRow, RowError, checked_fingerprint, conc_label, job_key
from governance.sweeps.identity import safe_token as token
from governance.sweeps.multinode import node_count
from governance.sweeps.naming import hardware_token

if TYPE_CHECKING:
    from governance.sweeps.launcher import LaunchJob

ROW_JSON_NAME = "gov-row.json"
# What gov itself writes in a row's folder (gov-row.json, the wrapper's
# gov-launch.* and gov-exit.json, gov-slurm.json, gov-job.log): never a result.
GOV_FILE_PREFIX = "gov-"
DEFAULT_TIMEOUT_SECONDS = 500 * 60  # the reference's single-node job timeout

# row key -> env name (the reference's direct renames)
DIRECT = {
    "exp-name": "EXP_NAME",
    "model": "MODEL",
    "model-prefix": "MODEL_PREFIX",
    "isl": "ISL",
    "osl": "OSL",
    "max-model-len": "MAX_MODEL_LEN",
    "image": "IMAGE",
    "framework": "FRAMEWORK",
    "precision": "PRECISION",
    "tp": "TP",
    "pp": "PP_SIZE",
    "dcp-size": "DCP_SIZE",
    "pcp-size": "PCP_SIZE",
    "ep": "EP_SIZE",
    "dp-attn": "DP_ATTENTION",
    "spec-decoding": "SPEC_DECODING",
    "disagg": "DISAGG",
    "run-eval": "RUN_EVAL",
    "eval-only": "EVAL_ONLY",
    "scenario-type": "SCENARIO_TYPE",
    "kv-offloading": "KV_OFFLOADING",
    "kv-p2p-transfer": "KV_P2P_TRANSFER",
    "total-cpu-dram-gb": "TOTAL_CPU_DRAM_GB",
    "duration": "DURATION",
}
WORKER = {
    "num-worker": "NUM_WORKERS",
    "tp": "TP",
    "pp": "PP_SIZE",
    "dcp-size": "DCP_SIZE",
    "pcp-size": "PCP_SIZE",
    "ep": "EP",
    "dp-attn": "DP_ATTN",
    "hardware": "HARDWARE",
}
ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
# `additional-settings` may export KEY=VALUE, but never a name that
# changes how a process or shell starts, nor one gov itself sets.
FORBIDDEN_EXTRA = re.compile(
    r"(PATH|HOME|IFS|ENV|BASH_ENV|BASHOPTS|SHELLOPTS|PS4|PYTHON\w*|LD_\w*|DYLD_\w*|GOV_\w*)"
)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _checked_env(row: PlanRow, env: dict[str, str]) -> dict[str, str]:
    for name, value in env.items():
        if "\0" in value:
            raise RowError(f"{row.where}: the value for {name} contains a NUL byte")
    return env


def machine_name(launcher_name: str) -> str:
    """RUNNER_NAME / the RF machine part: `<launcher>-<host>` as a safe token."""
    import socket  # launching only; the preflight's dry resolution names no host

    host = "".join(c if c.isalnum() or c in "-." else "-" for c in socket.gethostname())
    return f"{launcher_name}-{host.strip('-.') or 'host'}"[:64]


def extra_settings(row: PlanRow, role: str) -> list[tuple[str, str]]:
    """A worker's `additional-settings` as (KEY, VALUE); RowError on a bad one."""
    worker = row.data.get(role)
    out = []
    for setting in (
        worker.get("additional-settings") if isinstance(worker, Mapping) else None
    ) or []:
        name, sep, value = str(setting).partition("=")
        if not sep or not ENV_NAME.fullmatch(name) or FORBIDDEN_EXTRA.fullmatch(name):
            raise RowError(
                f"{row.where}: {role}.additional-settings entry {setting!r:.80} is not "
                "KEY=VALUE with an allowed upper-case KEY"
            )
        if not extra_env.allowed(name):
            raise RowError(
                f"{row.where}: {role}.additional-settings exports {name}, which is not on "
                "the allow-list of names launch scripts read (governance/sweeps/extra_env.py)"
            )
        out.append((name, value))
    return out


def check_row(row: PlanRow, machine: str) -> None:
    """What `row_env` would refuse, without building the environment (dry run)."""
    result_filename(row, machine)
    for role in ("prefill", "decode"):
        extra_settings(row, role)
    if row.is_multinode:
        node_count(row, hardware_token(_text(row.data.get("runner", ""))))
    if any(isinstance(v, str) and "\0" in v for v in row.data.values()):
        raise RowError(f"{row.where}: a row value contains a NUL byte")


def result_filename(row: PlanRow, machine: str) -> str:
    """The result file name (RF, docs/sweeps.md), built from validated tokens only."""
    data = row.data
    fingerprint = checked_fingerprint(row)
    head = "_".join((token(row, "exp-name"), token(row, "precision"), token(row, "framework")))
    if row.is_multinode:
        parts = []
        for role in ("prefill", "decode"):
            w = data[role]
            parts.append(
                f"{role}-tp{token(row, 'tp', w.get('tp'))}-pp{token(row, 'pp', w.get('pp', 1))}"
                f"-dcp{token(row, 'dcp', w.get('dcp-size', 1))}"
                f"-pcp{token(row, 'pcp', w.get('pcp-size', 1))}-ep{token(row, 'ep', w.get('ep'))}"
                f"-dp{token(row, 'dp-attn', w.get('dp-attn'))}"
                f"-nw{token(row, 'num-worker', w.get('num-worker'))}"
            )
        shape = "_".join(parts)
    else:
        shape = (
            f"tp{token(row, 'tp')}-pp{token(row, 'pp')}-dcp{token(row, 'dcp-size')}"
            f"-pcp{token(row, 'pcp-size')}-ep{token(row, 'ep')}-dpa{token(row, 'dp-attn')}"
        )
    disagg = token(row, "disagg", data.get("disagg", False))
    spec = token(row, "spec-decoding")
    name = f"{head}_{shape}_disagg-{disagg}_spec-{spec}_conc{conc_label(row)}_{machine}"
    return f"{name}_recipe-{fingerprint[:16]}" if fingerprint else name


def row_env(row: PlanRow, *, machine: str, result_dir: Path, row_json: Path) -> dict[str, str]:
    """The environment a script receives for one row (without the inherited base)."""
    data = row.data
    env = {name: _text(data[key]) for key, name in DIRECT.items() if data.get(key) is not None}
    env["RECIPE_FINGERPRINT"] = checked_fingerprint(row) or ""
    backend = data.get("kv-offload-backend")
    if isinstance(backend, Mapping):
        env["KV_OFFLOAD_BACKEND"] = _text(backend.get("name", ""))
        env["KV_OFFLOAD_BACKEND_METADATA"] = _text(backend)
    if data.get("router") is not None:
        env["ROUTER_METADATA"] = _text(data["router"])
    if row.is_agentic:
        env.update(ISL="0", OSL="0", MAX_MODEL_LEN="0", DISAGG="false")
        env["SCENARIO_TYPE"] = "agentic-coding"
    env["SCENARIO_SUBDIR"] = "agentic/" if row.is_agentic else "fixed_seq_len/"
    env["IS_AGENTIC"] = "1" if row.is_agentic else "0"
    env["RANDOM_RANGE_RATIO"] = "0.8"
    env["RUNNER_TYPE"] = _text(data.get("runner", ""))
    env["RUNNER_NAME"] = machine
    if row.is_eval:
        env.setdefault("RUN_EVAL", "true")
        env["EVAL_ONLY"] = "true"
    if row.is_multinode:
        concs = data["conc"] if isinstance(data["conc"], list) else [data["conc"]]
        env["CONC_LIST"] = " ".join(str(c) for c in concs)
        env["CONC"] = str(concs[0])
        env["IS_MULTINODE"] = "true"
        if data.get("eval-conc") is not None:
            env["EVAL_CONC"] = _text(data["eval-conc"])
        for role in ("prefill", "decode"):
            worker = data[role]
            prefix = role.upper()
            for key, name in WORKER.items():
                if worker.get(key) is not None:
                    env[f"{prefix}_{name}"] = _text(worker[key])
            for name, value in extra_settings(row, role):
                env.setdefault(name, value)
    else:
        env["CONC"] = conc_label(row)
        tp, pp, pcp = (data.get(k, 1) for k in ("tp", "pp", "pcp-size"))
        if all(type(v) is int for v in (tp, pp, pcp)):
            env["GPU_COUNT"] = str(tp * pp * pcp)
    env["RESULT_DIR"] = str(result_dir)
    env["RESULT_FILENAME"] = result_filename(row, machine)
    env["GOV_ROW_JSON"] = str(row_json)
    return _checked_env(row, env)


def result_dir_for(launch_root: Path, row: PlanRow, key: str | None = None) -> Path:
    """`<launch folder>/<job key>`: the row's own folder in one launch
    (`runfiles.launch_folder`), which nothing else ever writes.

    The key comes from validated values (hex, digits, `x`, `eval-`), so the
    folder is inside `launch_root` by construction; the check below is lexical."""
    name = key or job_key(row)
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        raise RowError(f"{row.where}: result folder {name!r} is not a plain name")
    return launch_root / name


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON through a temporary file and rename: never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (json.dumps(data, indent=1) + "\n").encode("utf-8"))


def build_job(
    row: PlanRow,
    script: Path,
    *,
    launch_root: Path,
    machine: str,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    key: str | None = None,
    recipe_path: Path | None = None,
) -> LaunchJob:
    """A LaunchJob for one row. Writes nothing: `prepare_job_dir` does that.

    A multi-node row also gets `GOV_NODES` (the nodes it asks for) and, when
    it runs a recipe of the repository, `GOV_RECIPE_PATH` (its absolute path;
    `CONFIG_FILE` keeps the row's own value)."""
    key = key or job_key(row)
    result_dir = result_dir_for(launch_root, row, key)
    row_json = result_dir / ROW_JSON_NAME
    env = row_env(row, machine=machine, result_dir=result_dir, row_json=row_json)
    nodes = None
    if row.is_multinode:
        nodes = node_count(row, hardware_token(env.get("RUNNER_TYPE", "")))
        env["GOV_NODES"] = str(nodes)
        if recipe_path is not None:
            env["GOV_RECIPE_PATH"] = str(recipe_path)
    # Imported here: resolving rows (the preflight on every hook) builds no job.
    from governance.sweeps.launcher import LaunchJob

    return LaunchJob(key, script, env, row_json, result_dir, timeout_seconds, nodes)


def prepare_job_dir(job: LaunchJob, row: PlanRow) -> None:
    """The row's new result folder with the row JSON. The folder must not
    exist: a run's folder is written by that run only (FileExistsError)."""
    job.result_dir.parent.mkdir(parents=True, exist_ok=True)
    job.result_dir.mkdir()
    write_json_atomic(job.row_json, dict(row.data))
