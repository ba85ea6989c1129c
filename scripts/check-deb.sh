#!/usr/bin/env bash
# Installs the Debian package on this machine, uses it, upgrades it over itself and purges it, leaving the
# machine as it was (CI runs it after scripts/build-deb.sh; needs root or sudo). Fails, naming the step, when:
#
#   - a program from the package links a library of the Swift toolchain, or does not run in an environment that
#     sees nothing of the toolchain (env -i, PATH of the system only);
#   - `farecheck demo` does not give its verdicts; `farecheck daemon --check` refuses the installed configuration
#     (run as the package's farecheck user); `farecheck-server serve` from /usr/bin does not answer its health;
#   - an upgrade over itself loses the store or the operator's edit of the configuration;
#   - purge leaves a file, a directory or a user behind.
#
#   scripts/check-deb.sh [dist/farecheck_*.deb]
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(ls -t dist/farecheck_*.deb | head -1)}
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
fail() { echo "check-deb: $*" >&2; exit 1; }
step() { echo "check-deb: $*"; }
dpkg-query -W farecheck >/dev/null 2>&1 && fail "farecheck is installed already; purge it first"
for user in farecheck farecheck-server; do getent passwd "$user" >/dev/null && fail "user $user exists already"; done
scratch=$(mktemp -d)
chmod 0755 "$scratch"
trap '$sudo dpkg -P farecheck >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
# A clean environment: no toolchain on PATH, no LD_LIBRARY_PATH, an empty home.
clean=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$scratch/home" LANG=C.UTF-8)
mkdir -p "$scratch/home"

step "installing $(basename "$deb")"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
for program in /usr/bin/farecheck /usr/bin/farecheck-server; do
    [ -x "$program" ] || fail "$program is not installed"
    swift_libraries=$(ldd "$program" | grep -Ei "swift|libFoundation|libdispatch" || true)
    [ -z "$swift_libraries" ] || fail "$program links the toolchain: $swift_libraries"
done
for path in /lib/systemd/system/farecheck.service /lib/systemd/system/farecheck-server.service \
    /lib/udev/rules.d/70-farecheck-scanners.rules /etc/farecheck/farecheck.toml \
    /usr/share/man/man1/farecheck.1.gz /usr/share/man/man1/farecheck-server.1.gz \
    /usr/share/man/man5/farecheck.toml.5.gz /usr/share/bash-completion/completions/farecheck \
    /usr/share/doc/farecheck/README.md; do
    [ -e "$path" ] || fail "$path is not installed"
done
getent passwd farecheck >/dev/null || fail "the farecheck user was not made"
getent passwd farecheck-server >/dev/null || fail "the farecheck-server user was not made"
[ "$(stat -c '%U:%G %a' /etc/farecheck/farecheck.toml)" = "root:farecheck 640" ] ||
    fail "the configuration is $(stat -c '%U:%G %a' /etc/farecheck/farecheck.toml), not root:farecheck 640"
version=$("${clean[@]}" /usr/bin/farecheck --version)
[ "$version" = "$("${clean[@]}" /usr/bin/farecheck-server --version)" ] || fail "the two programs' versions differ"
[ "$(dpkg-query -W -f='${Version}' farecheck)" = "$version" ] || fail "the package's version is not $version"
step "installed $version"

step "farecheck demo in a clean environment"
demo=$(cd "$scratch" && "${clean[@]}" /usr/bin/farecheck demo 2>&1) || fail "farecheck demo failed: $demo"
echo "$demo" | grep -q "All 8 verdicts as expected" || fail "farecheck demo: $demo"

step "farecheck daemon --check on the installed configuration, as the farecheck user"
# /run/farecheck as the unit's RuntimeDirectory= makes it (no systemd runs here): --check tries the verdict socket's
# directory, and binds the page's port.
$sudo install -d -o farecheck -g farecheck -m 0750 /run/farecheck
check=$($sudo runuser -u farecheck -- "${clean[@]}" /usr/bin/farecheck daemon --config /etc/farecheck/farecheck.toml \
    --check 2>&1) || fail "daemon --check refused the installed configuration: $check"
# Installed 0640 root:farecheck, the configuration draws no warning about who may read it; the one warning of a new
# installation is its empty store (every scan would read unknown-key).
echo "$check" | grep -q "holds no keys" || fail "daemon --check did not warn about the empty store: $check"
if echo "$check" | grep "warning" | grep -vq "holds no keys"; then
    fail "daemon --check warns about the installed configuration: $check"
fi
$sudo rm -rf /run/farecheck

step "farecheck-server from /usr/bin answers its health"
(cd "$scratch" && timeout -s TERM 20 $sudo runuser -u farecheck-server -- "${clean[@]}" /usr/bin/farecheck-server \
    serve --db /var/lib/farecheck-server/server.sqlite --listen 127.0.0.1:0 >"$scratch/server.out" \
    2>"$scratch/server.err") 2>/dev/null &
server=$!
url=""
for _ in $(seq 1 100); do
    url=$(sed -n 's|.*listening on \(http://[0-9.:]*\).*|\1|p' "$scratch/server.out" 2>/dev/null | head -1)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || fail "farecheck-server did not start: $(cat "$scratch/server.err")"
health=$(curl -s -m 5 "$url/v1/health")
echo "$health" | grep -q '"status":"ok"' || fail "farecheck-server's health: $health"
$sudo pkill -TERM -f "/usr/bin/farecheck-server serve --db /var/lib/farecheck-server" || true
wait "$server" 2>/dev/null || true

step "upgrading over itself: the store and the edited configuration stay"
$sudo runuser -u farecheck -- "${clean[@]}" /usr/bin/farecheck revoke --create --db /var/lib/farecheck/farecheck.sqlite \
    --issuer check-deb --ticket-id 00 --reason "kept across the upgrade" >/dev/null
echo "# edited by check-deb" | $sudo tee -a /etc/farecheck/farecheck.toml >/dev/null
$sudo env DEBIAN_FRONTEND=noninteractive dpkg -i --force-confold "$deb" >/dev/null
grep -q "# edited by check-deb" /etc/farecheck/farecheck.toml || fail "the upgrade lost the configuration's edit"
$sudo test -s /var/lib/farecheck/farecheck.sqlite || fail "the upgrade lost the store"

step "removing keeps the store; purging leaves nothing"
$sudo dpkg -r farecheck >/dev/null
$sudo test -s /var/lib/farecheck/farecheck.sqlite || fail "remove deleted the store"
[ ! -e /usr/bin/farecheck ] || fail "remove left /usr/bin/farecheck"
$sudo dpkg -P farecheck >/dev/null
for path in /usr/bin/farecheck /usr/bin/farecheck-server /etc/farecheck /etc/farecheck-server /var/lib/farecheck \
    /var/lib/farecheck-server /lib/systemd/system/farecheck.service /lib/udev/rules.d/70-farecheck-scanners.rules \
    /usr/share/doc/farecheck; do
    [ ! -e "$path" ] || fail "purge left $path"
done
for user in farecheck farecheck-server; do
    ! getent passwd "$user" >/dev/null || fail "purge left the user $user"
    ! getent group "$user" >/dev/null || fail "purge left the group $user"
done
step "ok: installed, used, upgraded, removed and purged $version"
