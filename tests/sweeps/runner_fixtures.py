"""A small benchmark repository laid out like InferenceX for the runner launcher:
a runner file, `runners/launch_<prefix>.sh` and benchmark scripts under
`benchmarks/` (the default `scripts` setting)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.harness import Repo
from tests.sweeps.conftest import plan_of

RUNNER_FILE = """labels:
  mi300x:
    - testrig_00
    - testrig_01
  mi355x-disagg:
    - testrig_02
  gb200:
    - testrig_03
"""

# The benchmark scripts write where InferenceX's do: the result file in the
# working directory (the workspace, /workspace in the container).
SINGLE = """#!/usr/bin/env bash
set -euo pipefail
printf '{"host": "%s", "job": "%s", "conc": %s, "gpus": %s, "runner": "%s"}\\n' \\
  "${SLURMD_NODENAME:-local}" "${SLURM_JOB_ID:-}" "$CONC" "$GPU_COUNT" "$RUNNER_NAME" \\
  > "$RESULT_FILENAME.json"
echo "server log of $RESULT_FILENAME" > server.log
echo "not collected" > scratch.txt
"""
MULTI = """#!/usr/bin/env bash
set -euo pipefail
for conc in $CONC_LIST; do
  printf '{"conc": %s, "prefill_tp": %s}\\n' "$conc" "$PREFILL_TP" \\
    > "${RESULT_FILENAME}_conc${conc}.json"
done
"""
FAILING = """#!/usr/bin/env bash
echo "loading model" && echo "CUDA error: out of memory" >&2 && exit 3
"""

# A runner script without Slurm or a container: it runs the benchmark script
# the way InferenceX's launchers name it.
LOCAL_RUNNER = """#!/usr/bin/env bash
set -euo pipefail
if [ -n "${CONFIG_FILE:-}" ]; then  # an srt-slurm recipe, as launch_gb200-nv.sh runs one
  for conc in $CONC_LIST; do
    echo "{\\"recipe\\": \\"$CONFIG_FILE\\"}" > "${RESULT_FILENAME}_conc${conc}.json"
  done
elif [ "${IS_MULTINODE:-}" = true ]; then
  bash "benchmarks/multi_node/${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"
else
  bash "benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x.sh"
fi
"""

# Modelled on runners/launch_mi300x-amds.sh: allocate with `salloc --no-shell`,
# then `srun --jobid` the benchmark script in the allocation (no container).
# A multi-node row's workers are the launcher's business, as in InferenceX's
# multi-node launchers: one task per node says where it runs.
SLURM_RUNNER = """#!/usr/bin/env bash
set -euo pipefail
if [ "${IS_MULTINODE:-}" = true ]; then
  NODES=$(( PREFILL_NUM_WORKERS + DECODE_NUM_WORKERS ))
  SCRIPT="benchmarks/multi_node/${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"
else
  NODES=1
  SCRIPT="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi300x.sh"
fi
JOB_ID=$(set +o pipefail; salloc --nodes="$NODES" --time=5 --no-shell --job-name="$RUNNER_NAME" 2>&1 | tee /dev/stderr | grep -oP 'Granted job allocation \\K[0-9]+')
if [ -z "$JOB_ID" ]; then
    echo "ERROR: salloc failed to allocate a job" >&2
    exit 1
fi
trap 'scancel "$JOB_ID" 2>/dev/null || true' EXIT
if [ "$NODES" -gt 1 ]; then
  srun --jobid="$JOB_ID" --nodes="$NODES" --ntasks-per-node=1 bash -c 'echo "worker on $SLURMD_NODENAME"'
fi
srun --jobid="$JOB_ID" --nodes=1 --ntasks=1 bash "$SCRIPT"
"""


def runner_repo(repo: Repo, runner: str, *, single: str = SINGLE) -> Repo:
    """`repo` with the runner file, `runners/launch_testrig.sh` and the scripts, committed."""
    files = {
        "configs/runners.yaml": RUNNER_FILE,
        "runners/launch_testrig.sh": runner,
        "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x.sh": single,
        "benchmarks/multi_node/dsr1_fp8_mi355x_sglang-disagg.sh": MULTI,
    }
    for name, text in files.items():
        repo.write(name, text)
    repo.commit("Runner layout")
    return repo


def write_plan(path: Path, single: list[dict[str, Any]], multi: list[dict[str, Any]]) -> Path:
    document = plan_of(single)
    document["multi_node"] = {"1k1k": multi} if multi else {}
    path.write_text(json.dumps(document))
    return path
