#!/bin/sh
# Example benchmark script (see launch/benchmarks/lib/cpu_bench.sh).
set -eu
here=$(dirname "$0")
exec "$here/../../lib/cpu_bench.sh"
