"""The runner launcher's contract, as data: which runner script runs a row and
what environment the benchmark job templates give it (docs/sweeps.md, 'The
runner launcher').

InferenceX's job templates (`.github/workflows/benchmark-tmpl.yml`, single
node; `benchmark-multinode-tmpl.yml`, multi node) run, on a runner node named
like `mi300x-amds_00`, `bash ./runners/launch_${RUNNER_NAME%%_*}.sh` from a
checkout of the swept commit, with the environment below, then collect the
files listed in `COLLECTED`. Nothing here is code: the runner launcher reads
these tables, and the docs' tables are these tables.
"""

from __future__ import annotations

import re

RUNNERS_FOLDER = "runners"  # beside the scripts folder, at the checkout's root
SCRIPT_GLOB = "launch_*.sh"
SCRIPT_TEMPLATE = "launch_{prefix}.sh"  # prefix: RUNNER_NAME up to its first "_"
PREFIX_SEPARATOR = "_"
# A row's runner label picks its nodes from the runner file's `labels`. A
# label the file lacks (GOV521, which InferenceX ignores: runners carry more
# GitHub labels than the file lists) is looked up by these rules in order:
# "label:<template>" a label of the file; "prefix:<template>" every node
# whose prefix (up to its first "_") is that name. `{bare}` is the label
# without `cluster:`.
LABEL_FALLBACKS = ("label:cluster:{bare}", "prefix:{bare}")
CLUSTER_PREFIX = "cluster:"
# A node name of the runner file and its prefix become a file name: plain
# names only (no "/", no leading dot, no shell metacharacter).
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*(_[A-Za-z0-9.+-]*)*")
PREFIX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*")

# The names each template's `env:` block and launch step set. A name the row
# does not give is set empty (as the template's unset input is), unless
# DEFAULTS gives the template's default.
SINGLE_NODE_NAMES = (
    "RANDOM_RANGE_RATIO", "HF_HUB_CACHE", "EXP_NAME", "RECIPE_FINGERPRINT", "MODEL",
    "MODEL_PREFIX", "ISL", "OSL", "MAX_MODEL_LEN", "IMAGE", "FRAMEWORK", "PRECISION", "TP",
    "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "EP_SIZE", "DP_ATTENTION", "CONC", "SPEC_DECODING",
    "DISAGG", "RUN_EVAL", "EVAL_ONLY", "SCENARIO_TYPE", "SCENARIO_SUBDIR", "IS_AGENTIC",
    "KV_OFFLOADING", "KV_OFFLOAD_BACKEND", "KV_OFFLOAD_BACKEND_METADATA", "ROUTER_METADATA",
    "KV_P2P_TRANSFER", "TOTAL_CPU_DRAM_GB", "DURATION", "REQUIRE_POWER",
    "AIPERF_EXPERIMENTAL_FAST", "EVAL_LIMIT", "SWEBENCH_GEN_MODE",
    "AIPERF_FAILED_REQUEST_THRESHOLD", "RESULT_DIR", "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX", "SWEBENCH_USE_MODAL", "SALLOC_EXCLUDE",
    # the launch step
    "RUNNER_NAME", "RUNNER_TYPE", "GITHUB_STEP_SUMMARY", "RESULT_FILENAME_BASE",
    "RESULT_FILENAME", "GPU_COUNT",
)  # fmt: skip
MULTI_NODE_NAMES = (
    "RANDOM_RANGE_RATIO", "EXP_NAME", "RECIPE_FINGERPRINT", "IMAGE", "MODEL_PREFIX", "MODEL",
    "FRAMEWORK", "PRECISION", "ISL", "OSL", "MAX_MODEL_LEN", "CONC_LIST", "SPEC_DECODING",
    "DISAGG", "PREFILL_HARDWARE", "DECODE_HARDWARE", "RUN_EVAL", "EVAL_ONLY", "EVAL_CONC",
    "EVAL_LIMIT", "SWEBENCH_GEN_MODE", "SWEBENCH_USE_MODAL", "REQUIRE_POWER",
    "POWER_PRODUCER_SHA", "SCENARIO_TYPE", "SCENARIO_SUBDIR", "IS_AGENTIC", "CONC", "DURATION",
    "AIPERF_EXPERIMENTAL_FAST", "KV_OFFLOADING", "KV_OFFLOAD_BACKEND",
    "KV_OFFLOAD_BACKEND_METADATA", "ROUTER_METADATA", "KV_P2P_TRANSFER", "TOTAL_CPU_DRAM_GB",
    "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX",
    "PREFILL_NUM_WORKERS", "PREFILL_TP", "PREFILL_PP_SIZE", "PREFILL_DCP_SIZE",
    "PREFILL_PCP_SIZE", "PREFILL_EP", "PREFILL_DP_ATTN",
    "DECODE_NUM_WORKERS", "DECODE_TP", "DECODE_PP_SIZE", "DECODE_DCP_SIZE", "DECODE_PCP_SIZE",
    "DECODE_EP", "DECODE_DP_ATTN",
    # the launch step (plus the row's `additional-settings`, exported there)
    "RUNNER_NAME", "RUNNER_TYPE", "RESULT_FILENAME_BASE", "RESULT_FILENAME", "IS_MULTINODE",
)  # fmt: skip

# Values the templates set whatever the row: constants of the `env:` block
# and the defaults of inputs no row carries (labels and manual dispatch set
# them in the reference: `require-power`, `agentx-fast`, `eval-limit`, ...).
CONSTANTS_SINGLE = {
    "RANDOM_RANGE_RATIO": "0.8",
    "HF_HUB_CACHE": "/mnt/hf_hub_cache/",
    "REQUIRE_POWER": "0",
    "AIPERF_EXPERIMENTAL_FAST": "0",
    "AIPERF_FAILED_REQUEST_THRESHOLD": "0.10",
    "RESULT_DIR": "/workspace/results",  # the workspace as the container mounts it
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": "/tmp/inferencex-pycache",
    "SWEBENCH_USE_MODAL": "true",
    "SALLOC_EXCLUDE": "b300-005,b300-006",
    "GITHUB_STEP_SUMMARY": "",
}
CONSTANTS_MULTI = {
    "RANDOM_RANGE_RATIO": "0.8",
    "SWEBENCH_USE_MODAL": "true",
    "REQUIRE_POWER": "0",
    "AIPERF_EXPERIMENTAL_FAST": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": "/tmp/inferencex-pycache",
    "IS_MULTINODE": "true",
}
# Input defaults a row may override.
DEFAULTS_SINGLE = {
    "PP_SIZE": "1",
    "DCP_SIZE": "1",
    "PCP_SIZE": "1",
    "RUN_EVAL": "false",
    "EVAL_ONLY": "false",
    "SCENARIO_TYPE": "fixed-seq-len",
    "TOTAL_CPU_DRAM_GB": "0",
    "DURATION": "3600",
}
DEFAULTS_MULTI = {
    "PREFILL_PP_SIZE": "1",
    "PREFILL_DCP_SIZE": "1",
    "PREFILL_PCP_SIZE": "1",
    "DECODE_PP_SIZE": "1",
    "DECODE_DCP_SIZE": "1",
    "DECODE_PCP_SIZE": "1",
    "RUN_EVAL": "false",
    "EVAL_ONLY": "false",
    "SCENARIO_TYPE": "fixed-seq-len",
    "TOTAL_CPU_DRAM_GB": "600",
    "DURATION": "3600",
}
# Credentials the templates take from the repository's secrets: passed on
# from gov's own environment when set there, never written or printed.
SECRETS = ("HF_TOKEN", "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET")
# What gov adds beside the templates' names: the workspace (GitHub sets it for
# every job) and gov's own GOV_* (the row as JSON, node count, recipe path).
ADDED = ("GITHUB_WORKSPACE",)
ADDED_PREFIX = "GOV_"
# How the names neither a constant nor the row's own value are computed
# (docs/sweeps.md's table says the same).
DERIVED = {
    "RUNNER_NAME": "a node of the row's runner label in the runner file (rows take them in turn)",
    "RUNNER_TYPE": "the row's runner label",
    "RESULT_FILENAME_BASE": "RF (machine part: RUNNER_NAME)",
    "RESULT_FILENAME": "RF, then `_recipe-<first 16 hex>` when the row has a fingerprint",
    "GPU_COUNT": "TP × PP_SIZE × PCP_SIZE",
    "SCENARIO_SUBDIR": "`agentic/` or `fixed_seq_len/`",
    "IS_AGENTIC": "`1` or `0`",
    "CONC_LIST": "the row's concurrencies, space-separated",
    "ROUTER_METADATA": "the row's `router` as GitHub's `toJson`",
    "KV_OFFLOAD_BACKEND_METADATA": "the row's `kv-offload-backend` as GitHub's `toJson`",
    "GITHUB_WORKSPACE": "the row's workspace (`<results>/.runner/<launch>/<job key>`)",
}
# Where gov's value knowingly differs from the template's, and why.
DEPARTURES = {
    "CONC": "multi node: the first of CONC_LIST (the template passes `conc` to agentic rows only)",
}
# Row values the templates receive through `toJson(...)`: GitHub's JSON, keys
# in the row's order, indented by two spaces.
JSON_NAMES = {"ROUTER_METADATA": "router", "KV_OFFLOAD_BACKEND_METADATA": "kv-offload-backend"}
JSON_INDENT = 2

# The files the templates' later steps collect from the workspace (upload
# steps and their checks), by kind of row; `{RF}` is RESULT_FILENAME. They are
# copied into the row's result folder, where gov records and verifies them.
COLLECTED = {
    "single": (
        "{RF}.json", "agg_{RF}.json", "power_validation_{RF}.json", "server.log",
        "results/*.log", "results/*_config.json", "gpu_metrics.csv",
        "gpu_metrics_energy_start.csv", "gpu_metrics_energy_end.csv",
        "gpu_metrics_identity.json",
    ),
    "single-agentic": ("{RF}.json", "results/**", "server.log", "gpu_metrics*.csv"),
    "multi": (
        "{RF}_*.json", "agg_{RF}_*.json", "power_validation_{RF}_*.json", "LOGS/power/**",
        "LOGS/*/results_*.json", "multinode_server_logs.tar.gz",
    ),
    "multi-agentic": ("{RF}_conc*.json", "LOGS/agentic/**", "multinode_server_logs.tar.gz"),
    "eval": (
        "meta_env.json", "results*.json", "sample*.jsonl", "agent_preds.json",
        "predictions.jsonl", "swebench_report_*.json", "*.traj*",
    ),
}  # fmt: skip
# Never collected, as the templates exclude them (bulky raw inputs).
NOT_COLLECTED = ("aiperf_artifacts/inputs.json", "aiperf_artifacts/profile_export_raw.jsonl")

# How a runner script's log tells that the cluster refused its allocation
# (the real scripts tee salloc's output to stderr, then say so and exit 1):
# one of REFUSED lines, and no GRANTED line. GRANTED also names the
# allocations gov cancels when the script ends (the templates' post-run
# `scancel`, scoped to this row's own jobs).
REFUSED = re.compile(r"^(?:salloc|sbatch|srun): error: (.+)$", re.MULTILINE)
GRANTED = re.compile(r"Granted job allocation (\d+)")
LOG_TAIL_LINES = 5  # the failure detail: the last lines of the script's log
