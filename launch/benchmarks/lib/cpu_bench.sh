#!/bin/sh
# A small, real benchmark for the example repository: checksum a buffer whose
# size is proportional to CONC x ISL, time it, and write the result file the
# reference's templates expect (<RESULT_FILENAME>.json in RESULT_DIR, spec 2.3;
# eval rows: results_<RESULT_FILENAME>.json plus meta_env.json).
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

out="$RESULT_DIR/$RESULT_FILENAME.json"
if [ "${EVAL_ONLY:-false}" = "true" ]; then
  out="$RESULT_DIR/results_$RESULT_FILENAME.json"
  printf '{"framework": "%s", "precision": "%s"}\n' "${FRAMEWORK:-}" "${PRECISION:-}" \
    > "$RESULT_DIR/meta_env.json"
fi
tmp="$out.tmp"
# Strings go through printf %s; JSON-escaping is not needed for the example's
# plain tokens, but a value with a quote would only break this file, never run.
printf '{"model_id": "%s", "exp_name": "%s", "max_concurrency": %s, "num_prompts": %s,\n' \
  "${MODEL:-}" "${EXP_NAME:-}" "$CONC" "$CONC" > "$tmp"
printf ' "input_len": %s, "output_len": %s, "duration_ns": %s,\n' "$ISL" "$OSL" "$ns" >> "$tmp"
printf ' "total_token_throughput": %s.%03d, "recipe_fingerprint": "%s"}\n' \
  "$(( milli / 1000 ))" "$(( milli % 1000 ))" "${RECIPE_FINGERPRINT:-}" >> "$tmp"
mv "$tmp" "$out"
echo "conc=$CONC isl=$ISL osl=$OSL: $tokens tokens in $ns ns -> $out"
