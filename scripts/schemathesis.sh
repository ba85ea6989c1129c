#!/usr/bin/env bash
# Checks that API/openapi.yaml and the reference server agree: starts `farecheck-server serve` on a free
# loopback port over a fresh database, registers a device, publishes a key bundle, revokes a ticket, imports the
# test blocklists (VDV-KA and DTVG), and runs schemathesis with every check against it (settings in
# API/schemathesis.toml: 413 counts as rejecting schema-violating data). Exits non-zero on any failure.
#
#   scripts/schemathesis.sh                      # a fresh SQLite file
#   scripts/schemathesis.sh postgres://USER:PASSWORD@HOST:PORT/DB
#                                                # a fresh database made (and dropped) with that role,
#                                                # which must be allowed to create databases
#
# Needs schemathesis 4.x, on PATH or in .build/schemathesis-venv (python3 -m venv .build/schemathesis-venv &&
# .build/schemathesis-venv/bin/pip install schemathesis), and psql for PostgreSQL. The server binary is
# $FARECHECK_SERVER, else .build/debug/farecheck-server (built when missing). SCHEMATHESIS_EXAMPLES sets the
# examples per operation (default 200: about 40 seconds a run on a busy 2-core machine), SCHEMATHESIS_SEED the
# seed (fixed, so that a run is repeatable).
set -euo pipefail
cd "$(dirname "$0")/.."

admin_url="${1:-}"
examples="${SCHEMATHESIS_EXAMPLES:-200}"
seed="${SCHEMATHESIS_SEED:-20261123}"
binary="${FARECHECK_SERVER:-.build/debug/farecheck-server}"
if [ ! -x "$binary" ]; then
    swift build --product farecheck-server
fi
schemathesis="$(command -v schemathesis || true)"
[ -n "$schemathesis" ] || schemathesis=".build/schemathesis-venv/bin/schemathesis"
if [ ! -x "$schemathesis" ]; then
    echo "schemathesis is not installed: pip install schemathesis (or make .build/schemathesis-venv)" >&2
    exit 2
fi

work="$(mktemp -d)"
server_pid=""
database=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid"
        wait "$server_pid" || true
    fi
    if [ -n "$database" ]; then
        psql "$admin_url" -qc "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

if [ -n "$admin_url" ]; then
    database="farecheck_schemathesis_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
    psql "$admin_url" -qc "CREATE DATABASE $database"
    # The admin URL with the new database's name in place of its own.
    db_options=(--database-url "${admin_url%/*}/$database")
else
    db_options=(--db "$work/server.sqlite")
fi

"$binary" init "${db_options[@]}" >/dev/null
token="$("$binary" devices add schemathesis "${db_options[@]}")"
# An operator too: the operator report's operations (tag `operators`) take its token, every other one the device's
# (API/schemathesis.toml reads both from the environment).
operator_token="$("$binary" operators add schemathesis "${db_options[@]}" 2>/dev/null)"
export FARECHECK_DEVICE_TOKEN="$token" FARECHECK_OPERATOR_TOKEN="$operator_token"
"$binary" keys add --issuer demo-transit --format fc1 Keys/demo-transit-es256.pub.pem "${db_options[@]}" >/dev/null
"$binary" keys publish --anchor-key Keys/demo-anchor.key "${db_options[@]}" >/dev/null
"$binary" revoke --issuer demo-transit --ticket-id 9f86d081884c7d65 --reason stolen "${db_options[@]}" >/dev/null
# The published blocklists too, so that deltas and snapshots carry their entries and versions for the checks.
lists=Tests/Fixtures/blocklists
"$binary" revoke --vdv-blocklist "$lists/vdv-blocklist.db" --version-file "$lists/vdv-version.txt" \
    "${db_options[@]}" >/dev/null 2>&1
"$binary" revoke --dtvg-blocklist "$lists/dtvg-blocklist.zip" --version-file "$lists/dtvg-version.txt" \
    "${db_options[@]}" >/dev/null 2>&1

# Port 0: the kernel picks a free port, which the server prints once bound.
"$binary" serve "${db_options[@]}" --listen 127.0.0.1:0 --anchor-key Keys/demo-anchor.key --log-level error \
    >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
base_url=""
for _ in $(seq 1 200); do
    base_url="$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$work/serve.out" | head -n 1)"
    [ -n "$base_url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$base_url" ]; then
    echo "farecheck-server did not start:" >&2
    cat "$work/serve.err" >&2
    exit 1
fi
echo "schemathesis against $base_url (${db_options[0]#--}), $examples examples per operation, seed $seed"

status=0
"$schemathesis" --config-file API/schemathesis.toml run API/openapi.yaml --url "$base_url" --checks all \
    --max-examples "$examples" --seed "$seed" --workers 1 --request-timeout 10 \
    --generation-database none --no-color || status=$?

if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "farecheck-server died during the run:" >&2
    cat "$work/serve.err" >&2
    status=1
fi
exit "$status"
