#!/usr/bin/env bash
# CI: FCB's committed schema data (Sources/TicketFormats/FCB/FCBSchemaV*.swift) is exactly what
# scripts/generate-fcb-schemas.sh writes from the ASN.1 modules in scripts/fcb-asn1; any difference fails.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
bash scripts/generate-fcb-schemas.sh "$scratch"
status=0
for generated in "$scratch"/FCBSchemaV*.swift; do
    committed="Sources/TicketFormats/FCB/$(basename "$generated")"
    if ! diff -u "$committed" "$generated"; then
        echo "check-fcb-generated: $committed differs from what scripts/generate-fcb-schemas.sh writes" >&2
        status=1
    fi
done
# A committed schema file without a module behind it is as wrong as one that differs.
for committed in Sources/TicketFormats/FCB/FCBSchemaV*.swift; do
    if [ ! -e "$scratch/$(basename "$committed")" ]; then
        echo "check-fcb-generated: $committed is not generated from any module in scripts/fcb-asn1" >&2
        status=1
    fi
done
[ "$status" -eq 0 ] && echo "check-fcb-generated: FCBSchemaV*.swift match scripts/fcb-asn1"
exit "$status"
