#!/bin/sh
# Run every fuzz target at once, each for SECONDS (default 600), seeded from its saved corpus
# and from $FUZZ_SEED/<target>/new/ (an earlier run's output) when given; each target's new inputs, log and any crash go to
# $FUZZ_OUT/<target>/ (default /tmp/vuc-fuzz). Exit 1 when a target crashed.
#   sh tests/fuzz/run_all.sh 600
set -u
SECONDS_EACH=${1:-600}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${FUZZ_OUT:-/tmp/vuc-fuzz}
PY=${PYTHON:-python3}
TARGETS=$("$PY" -c "import sys; sys.path.insert(0, '$HERE'); import targets; print(' '.join(targets.TARGETS))")
for t in $TARGETS; do
  mkdir -p "$OUT/$t/new" "$OUT/$t/crash"
  if [ -n "${FUZZ_SEED:-}" ] && [ -d "$FUZZ_SEED/$t/new" ]; then cp -r "$FUZZ_SEED/$t/new/." "$OUT/$t/new/"; fi
  FUZZ_WORK="$OUT/$t/new" "$PY" "$HERE/fuzz.py" "$t" -max_total_time="$SECONDS_EACH" -timeout=30 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/$t/crash/" > "$OUT/$t/log" 2>&1 &
done
wait
status=0
for t in $TARGETS; do
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$t/log" | grep -o '[0-9]*$' | tail -1)
  crashes=$(ls "$OUT/$t/crash" | wc -l)
  echo "$t: ${runs:-?} runs, $crashes crash(es)"
  [ "$crashes" -eq 0 ] || status=1
done
exit $status
