#!/bin/sh
# A small, real benchmark for the example repository: checksum a buffer whose
# size is proportional to CONC x ISL, time it, and write the result file the
# reference's templates expect, in the reference's shape (docs/results.md):
# <RESULT_FILENAME>.json in RESULT_DIR as the serving benchmark saves it; eval
# rows: lm-eval's results_<RESULT_FILENAME>.json plus meta_env.json.
# Row values arrive as environment variables; every expansion is quoted.
set -eu

: "${RESULT_DIR:?RESULT_DIR is not set}"
: "${RESULT_FILENAME:?RESULT_FILENAME is not set}"
: "${CONC:?CONC is not set}"
ISL="${ISL:-1024}"
OSL="${OSL:-1024}"

case "$CONC$ISL$OSL" in
  *[!0-9]*) echo "CONC, ISL and OSL must be integers" >&2; exit 2 ;;
esac

kib=$(( CONC * (ISL + OSL) / 64 ))
[ "$kib" -gt 0 ] || kib=1
start=$(date +%s%N)
dd if=/dev/zero bs=1024 count="$kib" 2>/dev/null | cksum >/dev/null
end=$(date +%s%N)
ns=$(( end - start ))
[ "$ns" -gt 0 ] || ns=1
tokens=$(( CONC * (ISL + OSL) ))
# tokens per second with three decimals, in integer arithmetic
milli=$(( tokens * 1000000000 / ns * 1000 ))

# The latency split of the reference's serving benchmark, modelled on the
# timed checksum: prefill (TTFT) is the input's share of the time, decode
# (TPOT) the output's share per output token; all in integer arithmetic.
ttft_ns=$(( ns * ISL / (ISL + OSL) ))
tpot_ns=$(( ns * OSL / (ISL + OSL) / OSL ))
[ "$tpot_ns" -gt 0 ] || tpot_ns=1
e2el_ns=$(( ttft_ns + tpot_ns * OSL ))
ms() { printf '%s.%06d' "$(( $1 / 1000000 ))" "$(( $1 % 1000000 ))"; }  # ns -> ms

if [ "${EVAL_ONLY:-false}" = "true" ]; then
  # Eval rows: lm-eval's results file (results_*.json) and meta_env.json.
  out="$RESULT_DIR/results_$RESULT_FILENAME.json"
  printf '{"framework": "%s", "precision": "%s"}\n' "${FRAMEWORK:-}" "${PRECISION:-}" \
    > "$RESULT_DIR/meta_env.json"
  score=$(( 900 + CONC % 50 ))
  tmp="$out.tmp"
  printf '{"results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.%03d,\n' \
    "$score" > "$tmp"
  printf ' "exact_match_stderr,strict-match": 0.008}}, "model_name": "%s",\n' "${MODEL:-}" >> "$tmp"
  printf ' "n-samples": {"gsm8k": {"original": 1319, "effective": 1319}}}\n' >> "$tmp"
  mv "$tmp" "$out"
  echo "eval conc=$CONC: gsm8k 0.$score -> $out"
  exit 0
fi

# Fixed-seq-len rows: the serving benchmark's --save-result file, <RF>.json.
out="$RESULT_DIR/$RESULT_FILENAME.json"
tmp="$out.tmp"
# Strings go through printf %s; JSON-escaping is not needed for the example's
# plain tokens, but a value with a quote would only break this file, never run.
printf '{"backend": "%s", "model_id": "%s", "exp_name": "%s", "max_concurrency": %s,\n' \
  "${FRAMEWORK:-}" "${MODEL:-}" "${EXP_NAME:-}" "$CONC" > "$tmp"
printf ' "num_prompts": %s, "completed": %s, "duration": %s,\n' \
  "$(( CONC * 10 ))" "$(( CONC * 10 ))" "$(( ns / 1000000000 )).$(printf '%09d' "$(( ns % 1000000000 ))")" >> "$tmp"
printf ' "total_input_tokens": %s, "total_output_tokens": %s,\n' \
  "$(( CONC * ISL ))" "$(( CONC * OSL ))" >> "$tmp"
printf ' "input_len": %s, "output_len": %s, "duration_ns": %s,\n' "$ISL" "$OSL" "$ns" >> "$tmp"
printf ' "median_ttft_ms": %s, "median_tpot_ms": %s, "median_itl_ms": %s, "median_e2el_ms": %s,\n' \
  "$(ms "$ttft_ns")" "$(ms "$tpot_ns")" "$(ms "$tpot_ns")" "$(ms "$e2el_ns")" >> "$tmp"
printf ' "total_token_throughput": %s.%03d, "recipe_fingerprint": "%s"}\n' \
  "$(( milli / 1000 ))" "$(( milli % 1000 ))" "${RECIPE_FINGERPRINT:-}" >> "$tmp"
mv "$tmp" "$out"
echo "conc=$CONC isl=$ISL osl=$OSL: $tokens tokens in $ns ns -> $out"
