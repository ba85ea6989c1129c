#!/usr/bin/env bash
# Builds the benchmark package in Benchmarks/ (release) with the programs its figures run, then runs
# farecheck-bench from the repository root with the arguments given:
#
#   scripts/bench.sh                       every figure (long: the sync and blocklist parts take minutes)
#   scripts/bench.sh verify --seconds 1    one part; `scripts/bench.sh --help` lists the parts and options
#   BENCH_CONFIGURATION=debug scripts/bench.sh pin --runs 1
#                                          a quick check that the bench builds and runs (figures meaningless)
#
# The bench is a package of its own so that no product of the root package links it or the simulators it drives;
# `farecheck` and `farecheck-server` are built in the same package (as products of its dependency) because the
# bench runs them as children from beside itself.
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=${BENCH_CONFIGURATION:-release}
for product in farecheck farecheck-server farecheck-bench; do
    swift build --package-path Benchmarks -c "$configuration" --product "$product"
done
exec "Benchmarks/.build/$configuration/farecheck-bench" "$@"
