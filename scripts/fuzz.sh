#!/usr/bin/env bash
# Runs the libFuzzer targets of Fuzz/ with AddressSanitizer (and LeakSanitizer, from the toolchain's own
# runtime: no extra package is needed).
#
#   scripts/fuzz.sh TARGET SECONDS   build (once) and fuzz one target, e.g. scripts/fuzz.sh fuzz-cose 120
#   scripts/fuzz.sh all SECONDS      every target in turn, SECONDS each
#   scripts/fuzz.sh list             the target names
#   FUZZ_RUNS=10000000 scripts/fuzz.sh fuzz-fcb 3600
#                                    a campaign: stop after 10 million executions or an hour, whichever is first
#
# Each run starts from the committed seeds in Fuzz/Corpora/TARGET plus what earlier runs found, kept in a scratch
# folder ($FUZZ_WORK/TARGET/corpus, default .build-fuzz/), so the committed corpus never changes. It exits non-zero on a crash, a
# leak, a timeout (10 s for one input) or running out of memory (2 GiB); the input that did it is kept as
# $FUZZ_WORK/TARGET/crash-… (or leak-…, timeout-…, oom-…) and its path printed. Replay one with
#   Fuzz/.build/debug/TARGET path/to/crash-…
# A summary line per target gives the executions and the coverage (cov: edges, ft: features) at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: $0 TARGET|all|list [SECONDS]" >&2; exit 2; }
[ $# -ge 1 ] || usage
what=$1
seconds=${2:-60}
work=${FUZZ_WORK:-$PWD/.build-fuzz}
binaries=Fuzz/.build/debug

targets() { sed -n 's/^ *("\(fuzz-[a-z0-9-]*\)".*/\1/p' Fuzz/Package.swift; }

if [ "$what" = list ]; then targets; exit 0; fi
if [ "$what" != all ] && ! targets | grep -qx "$what"; then
    echo "fuzz: no target $what (try: $0 list)" >&2
    exit 2
fi

build() {
    local started=$SECONDS
    echo "fuzz: building the targets (debug, -sanitize=fuzzer,address)"
    # -parse-as-library: the targets have no top-level code; libFuzzer's driver is called from <module>_main.
    # ld.gold warns once per ASan symbol it cannot export: thousands of harmless lines, dropped.
    local status=0
    swift build --package-path Fuzz -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
        >"$work/build.log" 2>&1 || status=$?
    grep -v "Cannot export local symbol" "$work/build.log" | tail -20
    [ "$status" -eq 0 ] || { echo "fuzz: the build failed" >&2; exit 1; }
    echo "fuzz: built in $((SECONDS - started)) s"
}

run() {
    local target=$1
    local out="$work/$target"
    # The scratch corpus is kept, so repeated runs go on where the last one stopped; the findings are not.
    mkdir -p "$out/corpus"
    rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* "$out"/slow-unit-*
    local log="$out/fuzz.log"
    echo "fuzz: $target for $seconds s"
    local status=0
    local started_at
    started_at=$(date +%s)
    # Found inputs go to $out/corpus (first corpus dir); the committed seeds are only read.
    # malloc_context_size=5: ASan keeps every distinct allocation stack it records, forever. With its default of
    # 30 frames, the recursive decoders (CBOR above all) give a new stack for nearly every new nesting shape, and
    # fuzz-cose grew by 0.6 MB per thousand inputs until the RSS limit stopped it (4.2 M runs); with 5 frames it
    # stays flat at 550 MB. Faults keep their full stack; only "allocated by"/"freed by" traces are shortened.
    ASAN_OPTIONS=detect_leaks=1:malloc_context_size=5 \
        "$binaries/$target" "$out/corpus" "Fuzz/Corpora/$target" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -malloc_limit_mb=2048 \
        -artifact_prefix="$out/" -print_final_stats=1 ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} >"$log" 2>&1 || status=$?
    local done_line
    done_line=$(grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -1 || true)
    local execs cov ft
    execs=$(grep -E "^stat::number_of_executed_units:" "$log" | awk '{print $2}' || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\) .*/\1/p' <<<"$done_line")
    ft=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' <<<"$done_line")
    if [ "$status" -ne 0 ]; then
        echo "fuzz: $target FAILED (exit $status); from $log:" >&2
        # A Swift trap is reported twice: the runtime's backtrace (which names the failing line) comes first;
        # an ASan report from inside the backtracer (memserver_read) may follow it and can be ignored.
        grep -m1 -A16 -E "Swift runtime failure|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)" "$log" >&2 || true
        tail -4 "$log" >&2
        ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null >&2 || true
        return 1
    fi
    local took=$(( $(date +%s) - started_at ))
    echo "fuzz: $target ok: ${execs:-?} executions in $took s, cov ${cov:-?}, ft ${ft:-?}"
}

mkdir -p "$work"
build
failed=()
if [ "$what" = all ]; then
    for target in $(targets); do run "$target" || failed+=("$target"); done
else
    run "$what" || failed+=("$what")
fi
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: findings in ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: no findings"
