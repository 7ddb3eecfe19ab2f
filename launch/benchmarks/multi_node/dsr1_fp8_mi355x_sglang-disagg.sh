#!/bin/sh
# Example multi-node benchmark script (a disaggregated prefill/decode row, the
# mi355x rule of docs/sweeps.md, 'Multi-node rows'). Inside a Slurm job it
# first starts one task per node with srun, as a real script starts its
# workers, and records the nodes that answered in nodes.txt. Then, for each
# concurrency of CONC_LIST, the example benchmark writes
# <RESULT_FILENAME>_conc<N>.json (the reference's multi-node result names).
set -eu
set -f # CONC_LIST is split on spaces below, never globbed
: "${RESULT_DIR:?RESULT_DIR is not set}"
: "${RESULT_FILENAME:?RESULT_FILENAME is not set}"
: "${CONC_LIST:?CONC_LIST is not set}"
here=$(dirname "$0")
if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null 2>&1; then
  srun --ntasks-per-node=1 sh -c 'printf "%s\n" "$SLURMD_NODENAME"' | sort > "$RESULT_DIR/nodes.txt"
  echo "workers on $(wc -l < "$RESULT_DIR/nodes.txt") node(s) (asked: ${GOV_NODES:-?})"
fi
rf="$RESULT_FILENAME"
for conc in $CONC_LIST; do
  case "$conc" in
    '' | *[!0-9]*) echo "CONC_LIST holds $conc, not a number" >&2; exit 2 ;;
  esac
  CONC="$conc" RESULT_FILENAME="${rf}_conc$conc" "$here/../lib/cpu_bench.sh"
done
