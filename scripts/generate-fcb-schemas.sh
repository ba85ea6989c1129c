#!/usr/bin/env bash
# Writes FCB's schema data (Sources/TicketFormats/FCB/FCBSchemaV*.swift) from the UIC's ASN.1 modules in
# scripts/fcb-asn1, with scripts/asn1-schema-to-swift.py and the committed `swift format` configuration.
# Usage: scripts/generate-fcb-schemas.sh [OUTPUT_DIRECTORY]   (default: Sources/TicketFormats/FCB)
# A new FCB version: add its module to scripts/fcb-asn1 and a line below, run this, review and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-Sources/TicketFormats/FCB}"
mkdir -p "$out"

# module file | Swift enum | the file's first line
schemas=(
    "uicRailTicketData_v1.3.5.asn|FCBSchemaV13|FCB v1.3.5: the types of uicRailTicketData_v1.3.5.asn (U_FLEX version 13 or 01, DOSIPAS FCB1/FCB13)."
    "uicRailTicketData_v2.0.3.asn|FCBSchemaV2|FCB v2.0.3: the types of uicRailTicketData_v2.0.3.asn (U_FLEX version 02, DOSIPAS FCB2)."
    "uicRailTicketData_v3.0.6.asn|FCBSchemaV3|FCB v3.0.6: the types of uicRailTicketData_v3.0.6.asn (U_FLEX version 03, DOSIPAS FCB3)."
)
for schema in "${schemas[@]}"; do
    IFS='|' read -r module name title <<<"$schema"
    raw="$(mktemp)"
    python3 scripts/asn1-schema-to-swift.py "scripts/fcb-asn1/$module" "$name" "$title" >"$raw"
    swift format --configuration .swift-format "$raw" >"$out/$name.swift"
    rm -f "$raw"
done
