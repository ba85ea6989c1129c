#!/usr/bin/env bash
# Checks the systemd units in Systemd/ without a running systemd (CI has none):
#
#   1. `systemd-analyze verify`: each unit parses, its directives exist, its ExecStart binary is there (the units'
#      /usr/local/bin paths are pointed at the built binaries in a scratch copy);
#   2. `systemd-analyze security --offline`: each unit's exposure is 2.0 or less;
#   3. the system call filter: `farecheck daemon --demo` (HTTP page, events, metrics, health, the demo scans) and
#      `farecheck-server serve` (health, key bundle) run under strace, and every system call they make must be
#      allowed by the unit's SystemCallFilter= lines (setpriority, which Dispatch tries and an unprivileged user
#      is refused anyway, is the one call named as denied on purpose).
#
#   scripts/check-units.sh [BUILD_DIR]    BUILD_DIR: where farecheck and farecheck-server are (default .build/debug)
#
# Needs systemd-analyze (systemd), strace, curl and python3. Every child stops by itself (timeouts).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cd "${1:-.build/debug}" && pwd)
for tool in systemd-analyze strace curl python3; do
    command -v "$tool" >/dev/null || { echo "check-units: $tool is missing" >&2; exit 2; }
done
for program in farecheck farecheck-server; do
    [ -x "$bin/$program" ] || { echo "check-units: no $bin/$program (build first)" >&2; exit 2; }
done
root=$PWD
scratch=$(mktemp -d)
# The programs run as the unprivileged user `nobody`, as the units run them as their own users: as root, SQLite
# (for one) also chowns its files, which a service never does.
chmod 0777 "$scratch"
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(-u nobody)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$scratch"' EXIT
status=0

# 1 and 2: verify and score a copy whose ExecStart names the built binaries.
for unit in Systemd/*.service; do
    name=$(basename "$unit")
    sed "s|/usr/local/bin/|$bin/|g" "$unit" >"$scratch/$name"
    if ! (cd "$scratch" && systemd-analyze verify --man=no "./$name" 2>&1 | tee "$scratch/verify.log" && \
        ! grep -q . "$scratch/verify.log"); then
        echo "check-units: systemd-analyze verify $name is not clean" >&2
        status=1
    fi
    score=$(cd "$scratch" && systemd-analyze security --offline=true "./$name" 2>&1 |
        sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
    if [ -z "$score" ] || python3 -c "import sys; sys.exit(0 if float('$score') <= 2.0 else 1)"; then
        [ -n "$score" ] && echo "check-units: $name exposure $score (at most 2.0)"
        [ -n "$score" ] || { echo "check-units: no exposure score for $name" >&2; status=1; }
    else
        echo "check-units: $name exposure $score is above 2.0" >&2
        status=1
    fi
done

# 3: the system calls each program makes, under strace, while it serves.
trace_daemon() {
    (cd "$scratch" && timeout -s TERM 30 strace -f -qq "${as_user[@]}" -o "$scratch/daemon.trace" "$bin/farecheck" daemon --demo \
        --http 127.0.0.1:0 --out "$scratch/demo" >"$scratch/daemon.out" 2>"$scratch/daemon.err") &
    local pid=$! url=""
    for _ in $(seq 1 200); do
        url=$(sed -n 's|.*inspector page on \(http://[0-9.:]*\)/.*|\1|p' "$scratch/daemon.err" | head -1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "check-units: the daemon did not start" >&2; cat "$scratch/daemon.err" >&2; return 1; }
    for path in / /healthz /metrics; do curl -s -m 5 -o /dev/null "$url$path"; done
    curl -s -m 2 -o /dev/null "$url/events" || true
    sleep 3
    kill -TERM "$(pgrep -f "$bin/farecheck daemon --demo" | head -1)" 2>/dev/null || true
    wait "$pid" || true
}
trace_server() {
    # A copy the unprivileged user may read (the repository's may be root's alone).
    install -m 0644 "$root/Keys/demo-anchor.key" "$scratch/anchor.key"
    (cd "$scratch" && timeout -s TERM 30 strace -f -qq "${as_user[@]}" -o "$scratch/server.trace" "$bin/farecheck-server" serve \
        --db "$scratch/server.sqlite" --listen 127.0.0.1:0 --anchor-key "$scratch/anchor.key" \
        >"$scratch/server.out" 2>"$scratch/server.err") &
    local pid=$! url=""
    for _ in $(seq 1 200); do
        url=$(sed -n 's|.*listening on \(http://[0-9.:]*\).*|\1|p' "$scratch/server.out" | head -1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    [ -n "$url" ] || { echo "check-units: the server did not start" >&2; cat "$scratch/server.err" >&2; return 1; }
    curl -s -m 5 -o /dev/null "$url/v1/health" || true
    curl -s -m 5 -o /dev/null "$url/v1/keys" || true
    sleep 1
    kill -TERM "$(pgrep -f "$bin/farecheck-server serve" | head -1)" 2>/dev/null || true
    wait "$pid" || true
}
trace_daemon || status=1
trace_server || status=1

python3 - "$scratch" <<'EOF' || status=1
import re, subprocess, sys
from pathlib import Path

scratch = Path(sys.argv[1])

def expand(name, seen=None):
    """The system calls of a name or @group, groups expanded (systemd-analyze syscall-filter)."""
    if not name.startswith("@"):
        return {name}
    seen = seen if seen is not None else set()
    if name in seen:
        return set()
    seen.add(name)
    out = subprocess.run(["systemd-analyze", "syscall-filter", name], capture_output=True, text=True).stdout
    calls = set()
    for line in out.splitlines()[1:]:
        line = line.strip()
        if line and not line.startswith("#"):
            calls |= expand(line, seen)
    return calls

def allowed(unit):
    """What the unit's SystemCallFilter= lines allow, in order: the first sets an allow list, ~ lines remove."""
    calls = None
    for line in (scratch / unit).read_text().splitlines():
        if not line.startswith("SystemCallFilter="):
            continue
        value = line.split("=", 1)[1].strip()
        deny = value.startswith("~")
        names = set().union(*(expand(n) for n in value.lstrip("~").split()))
        if calls is None:
            calls = set() if deny else set(names)
            if deny:
                raise SystemExit(f"{unit}: a deny list first is not checked here")
        elif deny:
            calls -= names
        else:
            calls |= names
    return calls

def used(trace):
    names = set()
    for line in (scratch / trace).read_text(errors="replace").splitlines():
        match = re.match(r"^\d+ +(?:<\.\.\. )?([a-z_0-9]+)[( ]", line)
        if match and match.group(1) not in ("exited", "killed", "resumed"):
            names.add(match.group(1))
    return names

# Refused on purpose (see the units): a nice value below 0, which an unprivileged user cannot have anyway.
expected_denials = {"setpriority"}
failed = False
for unit, trace in (("farecheck.service", "daemon.trace"), ("farecheck-server.service", "server.trace")):
    calls, permitted = used(trace), allowed(unit)
    outside = sorted(calls - permitted - expected_denials)
    print(f"check-units: {unit}: {len(calls)} system calls seen, {len(permitted)} allowed", end="")
    if outside:
        print(f"; OUTSIDE the filter: {' '.join(outside)}")
        failed = True
    else:
        print("; all inside the filter")
sys.exit(1 if failed else 0)
EOF
[ "$status" -eq 0 ] && echo "check-units: ok"
exit "$status"
