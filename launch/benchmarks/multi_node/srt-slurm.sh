#!/bin/sh
# Example recipe runner (docs/sweeps.md, 'Multi-node rows'): what a recipe row
# runs. The reference's srt-slurm launchers check out srt-slurm and submit
# CONFIG_FILE with `srtctl apply`; this example reads the recipe of the
# repository (GOV_RECIPE_PATH), prints its resources and runs the example
# benchmark for each concurrency of CONC_LIST. A recipe of the srt-slurm
# checkout itself (CONFIG_FILE=recipes/...) needs that checkout: refused here.
set -eu
set -f
: "${CONFIG_FILE:?CONFIG_FILE is not set}"
: "${CONC_LIST:?CONC_LIST is not set}"
if [ -z "${GOV_RECIPE_PATH:-}" ]; then
  echo "recipe $CONFIG_FILE lives in the srt-slurm checkout, which this example runner does not have" >&2
  exit 2
fi
echo "recipe $CONFIG_FILE:"
grep -E '^ +(prefill|decode|agg)_(nodes|workers):' "$GOV_RECIPE_PATH" || true
exec "$(dirname "$0")/dsr1_fp8_mi355x_sglang-disagg.sh"
