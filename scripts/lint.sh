#!/usr/bin/env bash
# swift format lint over every Swift file of the project (the packages in ., Benchmarks/ and Fuzz/), with the
# committed .swift-format: any finding fails. `swift format format -i -r Sources Tests …` fixes most of them.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --recursive \
    Package.swift Sources Tests Benchmarks/Package.swift Benchmarks/Sources Fuzz/Package.swift Fuzz/Sources
echo "lint: no findings"
