#!/usr/bin/env bash
# Installs the Debian 12 packages farecheck builds and tests against. Needs root (or sudo).
# The Swift 6.3 toolchain itself is not a Debian package: install it from swift.org first.
# postgresql (15 on Debian 12) is only for the reference server's PostgreSQL tests; .ci/run starts it.
# python3-venv holds schemathesis (scripts/schemathesis.sh) apart from Debian's own Python packages.
# faketime (with libfaketime) gives the tests' farecheck processes a wrong wall clock (1970, hours behind).
# systemd (for systemd-analyze), strace and curl: scripts/check-units.sh scores the units and checks their system
# call filters against what the programs do. dpkg-dev: dpkg-shlibdeps for scripts/build-deb.sh.
# zxing-cpp is not Debian's libzxing-dev (1.4, which aborts on camera frames): scripts/build-zxing.sh builds 3.1.1
# from its pinned source with cmake and ninja (about a minute on two cores). zxing-cpp-tools stays: its ZXingReader
# (1.4) is an anchor the benchmarks compare with. libv4l-dev: libv4l2, through which the daemon's camera source
# captures (it converts the many camera formats to a few). scripts/install-axe-core.sh: axe-core 4.12.1 (pinned,
# from PyPI) for the browser tests' accessibility checks.
# libldap-dev: the VDV-KA certificate directory is read over LDAP (TrustSources); slapd: its tests start their own on
# loopback (Tests/Support/LoopbackSLAPD.swift), so the service the package starts is stopped and disabled at once.
set -euo pipefail
packages=(
    pkg-config libssl-dev zlib1g-dev libsqlite3-dev
    libzbar-dev libqrencode-dev libpng-dev libjpeg-dev libusb-1.0-0-dev libv4l-dev
    openssl zbar-tools zxing-cpp-tools qrencode
    chromium fonts-dejavu-core
    faketime
    postgresql
    python3-venv
    systemd strace curl
    cmake ninja-build
    dpkg-dev
    libldap-dev slapd
)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
else
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "install-deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian's slapd package starts a system slapd on port 389: the tests never use it, and no machine should keep one.
if [ -e /etc/init.d/slapd ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    if command -v systemctl > /dev/null && [ -d /run/systemd/system ]; then
        $sudo systemctl disable --now slapd > /dev/null 2>&1 || true
    else
        $sudo service slapd stop > /dev/null 2>&1 || true
        $sudo update-rc.d slapd disable > /dev/null 2>&1 || true
    fi
fi
bash "$(dirname "$0")/build-zxing.sh"
bash "$(dirname "$0")/install-axe-core.sh"
