#!/usr/bin/env bash
# Installs axe-core, the accessibility rules the inspector page's and the report's browser tests run inside
# headless Chromium (WCAG 2 A and AA: contrast, names, roles, landmarks, keyboard focus).
#
# axe-core is published as JavaScript (npm); PyPI, which this machine can reach, carries the same file inside the
# axe-playwright-python wheel. The wheel is pinned by version and hash, and only axe.min.js is taken from it (the
# tests inject it into the page under test; nothing of it ships). Installed to /usr/local/share/axe-core, or to
# $FARECHECK_AXE_DIR; the tests read it from there (or from $FARECHECK_AXE_JS).
set -euo pipefail
version=0.1.8
axe_version=4.12.1
sha256=fdd263c998388f1a8e67cad02677e612d946248bd44d163be5e8650ea31f95f8
directory=${FARECHECK_AXE_DIR:-/usr/local/share/axe-core}
if [ -f "$directory/axe.min.js" ] && head -c 20 "$directory/axe.min.js" | grep -q "axe v$axe_version"; then
    echo "install-axe-core: axe-core $axe_version present in $directory"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A venv of its own for pip: Debian's python3 has none (python3-venv, from install-deps.sh, brings one along).
python3 -m venv "$work/venv"
"$work/venv/bin/pip" download -q --no-deps --only-binary :all: -d "$work" "axe-playwright-python==$version"
wheel=$(ls "$work"/axe_playwright_python-"$version"-*.whl)
echo "$sha256  $wheel" | sha256sum --check --quiet
python3 - "$wheel" "$work/axe.min.js" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, open(sys.argv[2], "wb") as out:
    out.write(wheel.read("axe_playwright_python/axe.min.js"))
PY
head -c 20 "$work/axe.min.js" | grep -q "axe v$axe_version" || { echo "install-axe-core: not axe $axe_version" >&2; exit 1; }
sudo=""
[ -w "$(dirname "$directory")" ] || [ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo mkdir -p "$directory"
$sudo install -m 0644 "$work/axe.min.js" "$directory/axe.min.js"
echo "install-axe-core: axe-core $axe_version installed in $directory"
