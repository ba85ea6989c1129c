#!/usr/bin/env bash
# Runs the whole test suite N times in a row under load (`stress-ng --cpu 2` beside it) and writes one line per
# run: its number, how long it took and the tests that failed. Proves that no test waits for a fixed time where it
# should wait for an event (issue 53). Build first: `swift build --build-tests`.
#
#   scripts/stress-tests.sh [RUNS] [LOG-DIR]      # default 5 runs, logs in .build/stress
set -uo pipefail
runs=${1:-5}
logs=${2:-.build/stress}
mkdir -p "$logs"
command -v stress-ng >/dev/null || { echo "stress-ng is not installed (apt-get install stress-ng)" >&2; exit 2; }
stress-ng --cpu 2 --timeout 0 --quiet &
stress=$!
trap 'kill $stress 2>/dev/null; wait $stress 2>/dev/null' EXIT
failed_runs=0
for run in $(seq 1 "$runs"); do
    start=$(date +%s)
    swift test --skip-build --no-parallel >"$logs/run-$run.log" 2>&1
    status=$?
    took=$(( $(date +%s) - start ))
    failures=$(grep -E '^✘ Test "' "$logs/run-$run.log" | sed -E 's/^✘ Test ("[^"]*").*/\1/' | sort -u | tr '\n' ' ')
    summary=$(grep -E "^✔ Test run with|^✘ Test run with|Executed [0-9]+ tests" "$logs/run-$run.log" | tail -2 | tr '\n' ' ')
    [ $status -eq 0 ] || failed_runs=$((failed_runs + 1))
    echo "run $run: exit $status in ${took} s; $summary${failures:+; failed: $failures}" | tee -a "$logs/summary.txt"
done
echo "$failed_runs of $runs runs failed" | tee -a "$logs/summary.txt"
[ $failed_runs -eq 0 ]
