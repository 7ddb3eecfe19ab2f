"""Which `additional-settings` names a multi-node row may export to its script.

A row's `additional-settings: ["KEY=VALUE", ...]` come from the master
configs, which a PR controls; they reach the launch script as environment
variables. A deny-list let `HF_ENDPOINT`, `HTTPS_PROXY`, `NODE_OPTIONS`,
`GIT_SSH_COMMAND`, `TMPDIR` and `HF_TOKEN` through (where downloads go and
with which credentials, what runs at process start), so this is an
allow-list, built from the evidence of the reference repository (the
corpus): every name its master configs ever exported (101 names, main's
history with merges and every PR branch head), plus the names its launch scripts hand on to the serving containers
(`WEKA_LOADER_OVERRIDE`), grouped into the families they come from.

* `NAMES`: exact names (workload, topology, images, the recipe knobs).
* `FAMILIES`: prefixes of the serving engines' own tuning variables
  (`VLLM_`, `SGLANG_`, `NCCL_`, ...), minus any name in a family that
  loads code or redirects traffic or credentials (ending in `_PLUGIN`,
  `_PRELOAD`, `_PATH`, `_PROXY`, `_TOKEN`, `_SERVER`, ...) or that picks
  where code or data comes from or goes (a word `REPOSITORY`, `REF`,
  `FILE`, `URL`, `MIRROR`, `SCRIPT`, ... anywhere after the prefix).
* Never: what the launcher itself sets or inherits (`RESULT_DIR`, `PATH`,
  `HOME`, `TMPDIR`, `HF_TOKEN`, ...), except `HF_HUB_CACHE` (a cache
  folder, which 10 PR branch heads of the corpus export).

A name outside the list is refused (GOV703) with the name; a repository that
needs another one adds it here with its evidence (docs/sweeps.md).
"""

from __future__ import annotations

import re

NAMES = frozenset(
    {
        # workload, topology and images
        "CONFIG_FILE", "EVAL_CONFIG_FILE", "EVAL_CONCURRENT_REQUESTS", "CLIENT_IMAGE",
        "GPUS_PER_NODE", "SLURM_PARTITION", "NATIVE_MULTINODE", "DP_ATTENTION",
        "MODEL_NAME", "MODEL_YAML_KEY", "MAX_MODEL_LEN", "KV_CACHE_DTYPE", "LOAD_FORMAT",
        "GPU_MEMORY_UTILIZATION", "ASYNC_SCHEDULING", "DOCKER_PULL_POLICY",
        "RANDOM_RANGE_RATIO", "MAX_FAILURE_RATE", "BENCH_NUM_PROMPTS_MULTIPLIER",
        "INFMAX_CONTAINER_WORKSPACE",
        "IX_AIPERF_TOKENIZER", "DWITH_STORE", "AMD_SERIALIZE_KERNEL",
        "INFERENCEX_MOONCAKE_MAX_TRANSFER_BATCH_KEYS", "MC_WORKERS_PER_CTX", "MC_PROTOCOL",
        "ROUTER_TYPE", "SYNC_BARRIER_TIMEOUT", "ENABLE_PREFIX_CACHING",
        # a model cache folder: exported by 10 PR branch heads of the corpus
        "HF_HUB_CACHE",
        # what the reference's server scripts pass on into the container
        "WEKA_LOADER_OVERRIDE", "AIPERF_FAILED_REQUEST_THRESHOLD",
    }
)  # fmt: skip
FAMILIES = (
    "PREFILL_", "DECODE_", "MULTINODE_", "SYNTHETIC_", "AGENTIC_", "EVAL_",
    "VLLM_", "SGLANG_", "NCCL_", "KIMIK3_", "HICACHE_", "LMCACHE_", "MORI_", "MORIIO_",
    "AITER_",
)  # fmt: skip
# Inside a family: names that load code, move traffic or carry credentials,
# by their last word (`VLLM_USAGE_STATS_SERVER`, `NCCL_SOCKET_IFNAME` ...).
_UNSAFE_SUFFIX = re.compile(
    r".*_(PLUGINS?|PRELOAD|LIBRARY|LIB|PATH|DIR|HOME|ROOT|PROXY|ENDPOINT|HOST|HOSTNAME|URL|URI|"
    r"ADDR|ADDRESS|SERVER|TOKEN|SECRET|PASSWORD|KEY|CREDENTIALS?|COMMAND|CMD|OPTIONS|"
    r"EXECUTABLE|IFNAME)"
)
# ... or by any word: names that pick where code or data comes from (a
# repository, a ref, a file, a mirror, a script) or where traffic goes. So
# `SRT_SLURM_REPOSITORY`/`SRT_SLURM_REF` (which srt-slurm checkout runs),
# `VLLM_K3_FORK_REF`, `KIMIK3_SQUASH_FILE_OVERRIDE`, `NCCL_DEBUG_FILE`
# (where NCCL writes) and `MULTINODE_SERVER_SCRIPT` are refused, though PR
# branch heads of the corpus exported some of them: gov decides what runs.
_UNSAFE_WORD = re.compile(
    r"(?:.*_)?(REPO|REPOSITORY|REPOS|REF|REFS|BRANCH|COMMIT|REVISION|FORK|FILE|FILES|URL|URI|"
    r"URLS|MIRROR|REMOTE|REGISTRY|SOURCE|SRC|SCRIPT|SCRIPTS|UPSTREAM|DOWNLOAD|WEBHOOK|"
    r"ENDPOINT|PROXY|HOST)(?:_.*)?"
)
# Exact names above win: `CONFIG_FILE`/`EVAL_CONFIG_FILE` name a recipe inside
# the repository, resolved and checked by gov (docs/sweeps.md).
# Set or inherited by the launcher: never from a row.
_LAUNCHER_NAMES = frozenset(
    {
        "RESULT_DIR", "RESULT_FILENAME", "RUNNER_NAME", "PATH", "HOME", "LANG", "LC_ALL",
        "TMPDIR", "TZ", "USER", "HF_TOKEN",
    }
)  # fmt: skip


def allowed(name: str) -> bool:
    """May an `additional-settings` entry export `name`?"""
    if name in _LAUNCHER_NAMES or name.startswith("GOV_"):
        return False
    if name in NAMES:
        return True
    family = next((p for p in FAMILIES if name.startswith(p) and len(name) > len(p)), None)
    if family is None:
        return False
    return not (_UNSAFE_SUFFIX.fullmatch(name) or _UNSAFE_WORD.fullmatch(name[len(family) :]))
