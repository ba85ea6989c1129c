#!/usr/bin/env bash
# Fails when a build log (the output of `swift build` from a clean build, as CI's is) holds a compiler warning in
# the project's own files: Swift and C sources under Sources/, Tests/, Benchmarks/ or Fuzz/. Warnings in the
# dependencies' checkouts (.build/) are theirs, not ours.
#
#   scripts/check-warnings.sh BUILD-LOG
set -euo pipefail
log=${1:?usage: scripts/check-warnings.sh BUILD-LOG}
root=$(cd "$(dirname "$0")/.." && pwd)
found=$(grep -E "^${root}/(Sources|Tests|Benchmarks|Fuzz)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" | sort -u || true)
if [ -n "$found" ]; then
    echo "warnings in the project's own code (fix them; CI treats them as errors):"
    echo "$found"
    exit 1
fi
echo "warnings: none in the project's own code"
