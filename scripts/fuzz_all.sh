#!/usr/bin/env bash
# Run every fuzz target of tests/fuzz/targets.py under atheris, all in parallel, each for
# SECONDS (default 600) of libFuzzer time, under `timeout` (a target that hangs past its
# time is killed and counts as a failure). Logs and new inputs go to OUT (default
# /tmp/vuc-fuzz); the saved corpus is only read. Prints one line per target: its exit
# status, the runs libFuzzer made, any crash, timeout or out-of-memory file, and the number
# of slow units libFuzzer noted. Exit 1 if any target failed.
#
# usage: scripts/fuzz_all.sh [SECONDS] [OUT]
set -u
seconds=${1:-600}
out=${2:-/tmp/vuc-fuzz}
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
targets=$("$python" -c "import sys; sys.path.insert(0, '$here/tests/fuzz'); import targets; print(' '.join(targets.TARGETS))")
mkdir -p "$out"
pids=()
for t in $targets; do
  mkdir -p "$out/$t/new" "$out/$t/crashes"
  (
    cd "$out/$t/crashes" &&
    FUZZ_WORK="$out/$t/new" timeout --kill-after=30 $((seconds + 900)) \
      nice -n 10 "$python" "$here/tests/fuzz/fuzz.py" "$t" -max_total_time="$seconds" -timeout=60 \
      -rss_limit_mb=4096 >"$out/$t/log" 2>&1
    echo $? >"$out/$t/rc"
  ) &
  pids+=($!)
done
wait "${pids[@]}"
failed=0
for t in $targets; do
  rc=$(cat "$out/$t/rc")
  runs=$(grep -oE 'Done [0-9]+ runs in [0-9]+ second' "$out/$t/log" | tail -1)
  crashes=$(ls "$out/$t/crashes" 2>/dev/null | grep -E '^(crash|timeout|oom|leak)-' | tr '\n' ' ')
  slow=$(ls "$out/$t/crashes" 2>/dev/null | grep -c '^slow-unit-')
  echo "$t: exit $rc; ${runs:-no summary}; crash/timeout/oom files: ${crashes:-none}; slow units (over 10 s, reported only): $slow"
  [ "$rc" = 0 ] && [ -z "$crashes" ] || failed=1
done
exit $failed
