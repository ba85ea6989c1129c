#!/usr/bin/env bash
# Builds the Debian package dist/farecheck_<version>_<arch>.deb: farecheck and farecheck-server with the Swift
# runtime linked statically and stripped (no Swift toolchain on the gate), their systemd units, the udev rules, the
# default configuration (a conffile), man pages and shell completions generated from the argument parser, and the
# docs. Debian's own tools do the packaging: dpkg-shlibdeps computes Depends from the binaries, dpkg-deb builds it.
#
#   scripts/build-deb.sh            build, then write dist/farecheck_<version>_<arch>.deb
#   scripts/build-deb.sh --scratch-path DIR
#                                   the release build in DIR instead of .build (CI builds there while the tests
#                                   hold .build's lock)
#   scripts/build-deb.sh --no-debug-info
#                                   no DWARF in the build directory (CI: the package's binaries are stripped
#                                   anyway, and the build takes about 8 % less CPU time)
#   apt install ./dist/farecheck_*.deb
#
# The version is the one `farecheck --version` prints, from git (scripts/version-stamp.sh). On install the
# package makes the system users farecheck (the daemon) and farecheck-server, reloads udev's rules and systemd's
# units, and enables nothing: the operator edits /etc/farecheck/farecheck.toml, then `systemctl enable --now
# farecheck`. Remove keeps /var/lib/farecheck*, /etc/farecheck-server and the users; purge deletes them.
# scripts/check-deb.sh installs, upgrades and purges the package (CI runs both).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch_path=.build
debug_info=dwarf
usage() { echo "usage: $0 [--scratch-path DIR] [--no-debug-info]" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --scratch-path) [ $# -ge 2 ] || usage; scratch_path=$2; shift 2 ;;
    --no-debug-info) debug_info=none; shift ;;
    *) usage ;;
    esac
done
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture strip gzip python3; do
    command -v "$tool" >/dev/null || { echo "build-deb: $tool is missing (scripts/install-deps.sh)" >&2; exit 2; }
done
started=$SECONDS
# SwiftPM runs the GitVersion plugin when it plans the build, not on every build: a touched manifest makes a build
# planned before plan (and stamp the version) again, and the package's version is then checked against git's. A
# scratch path never built in plans anyway; leaving the manifest alone there keeps a build of .build running beside
# this one from planning again.
[ ! -e "$scratch_path/release.yaml" ] || touch Package.swift
build=(swift build -c release --static-swift-stdlib --scratch-path "$scratch_path" -debug-info-format "$debug_info")
"${build[@]}" --product farecheck
"${build[@]}" --product farecheck-server
bin=$("${build[@]}" --show-bin-path)
version=$("$bin/farecheck" --version)
stamp=$(mktemp -d)
sh scripts/version-stamp.sh "$stamp"
expected=$(sed -n 's/^let gitVersion = "\(.*\)"$/\1/p' "$stamp/GitVersion.swift")
rm -rf "$stamp"
if [ "$version" != "$expected" ]; then
    echo "build-deb: the build says version $version, git says $expected" >&2
    exit 1
fi
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
echo "build-deb: built farecheck $version in $((SECONDS - started)) s"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
stage="$scratch/farecheck_${version}_$arch"
doc="$stage/usr/share/doc/farecheck"
install -d "$stage/DEBIAN" "$stage/usr/bin" "$doc"

# The programs, stripped (the debug symbols stay in the build directory, unless --no-debug-info).
for program in farecheck farecheck-server; do
    install -m 0755 "$bin/$program" "$stage/usr/bin/$program"
    strip --strip-unneeded "$stage/usr/bin/$program"
done
# A toolchain library in the dependencies would tie the package to the build machine.
if ldd "$stage/usr/bin/farecheck" "$stage/usr/bin/farecheck-server" | grep -E "swift|Foundation|dispatch"; then
    echo "build-deb: a binary still links the Swift runtime dynamically" >&2
    exit 1
fi

# The units (/usr/bin, where the package puts the programs), the udev rules, the configuration.
install -d "$stage/lib/systemd/system" "$stage/lib/udev/rules.d" "$stage/etc/farecheck" "$stage/etc/farecheck/languages"
for unit in Systemd/*.service; do
    sed 's|/usr/local/bin/|/usr/bin/|g' "$unit" >"$stage/lib/systemd/system/$(basename "$unit")"
done
install -m 0644 Udev/70-farecheck-scanners.rules "$stage/lib/udev/rules.d/"
install -m 0640 Config/farecheck.toml "$stage/etc/farecheck/farecheck.toml"
echo /etc/farecheck/farecheck.toml >"$stage/DEBIAN/conffiles"

# Man pages and completions, from the argument parser's own description of the commands.
install -d "$stage/usr/share/man/man1" "$stage/usr/share/man/man5" "$stage/usr/share/bash-completion/completions" \
    "$stage/usr/share/zsh/vendor-completions" "$stage/usr/share/fish/vendor_completions.d"
# (scripts/make-man.py reads `--experimental-dump-help`: the argument parser's own plugin would build both
# programs a second time.)
for program in farecheck farecheck-server; do
    python3 scripts/make-man.py "$stage/usr/bin/$program" "$stage/usr/share/man/man1" "$version"
done
# farecheck.toml(5), from the shipped configuration's own comments.
python3 scripts/make-config-man.py Config/farecheck.toml "$stage/usr/share/man/man5" "$version"
gzip -9n "$stage"/usr/share/man/man1/*.1 "$stage"/usr/share/man/man5/*.5
for program in farecheck farecheck-server; do
    "$stage/usr/bin/$program" --generate-completion-script bash \
        >"$stage/usr/share/bash-completion/completions/$program"
    "$stage/usr/bin/$program" --generate-completion-script zsh >"$stage/usr/share/zsh/vendor-completions/_$program"
    "$stage/usr/bin/$program" --generate-completion-script fish \
        >"$stage/usr/share/fish/vendor_completions.d/$program.fish"
done

# The docs, laid out as in the repository so that their links between each other hold.
install -m 0644 README.md "$doc/"
install -d "$doc/docs" "$doc/docs/images" "$doc/Systemd" "$doc/Udev"
install -m 0644 docs/*.md "$doc/docs/"
install -m 0644 docs/images/*.png "$doc/docs/images/"
install -m 0644 Systemd/README.md "$doc/Systemd/"
install -m 0644 Udev/README.md "$doc/Udev/"
# The server's configuration as an example (it follows nothing as shipped): docs/trust-sources.md says how to give it
# to the unit.
install -d "$doc/examples"
install -m 0644 Config/farecheck-server.toml "$doc/examples/"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: farecheck
Comment: Built from the farecheck repository at version $version. The Swift runtime and the Swift packages
 farecheck depends on (Package.swift) are linked statically; their licenses (Apache-2.0 with the Runtime Library
 Exception, MIT) travel with their sources.
EOF
printf 'farecheck (%s) unstable; urgency=medium\n\n  * Built from git.\n\n -- farecheck <farecheck@localhost>  %s\n' \
    "$version" "$(date -R -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")" | gzip -9n >"$doc/changelog.gz"

# Depends, from the libraries the binaries link (dpkg-shlibdeps reads a debian/control of its own).
mkdir -p "$scratch/shlibs/debian"
printf 'Source: farecheck\n\nPackage: farecheck\nArchitecture: any\n' >"$scratch/shlibs/debian/control"
depends=$(cd "$scratch/shlibs" && dpkg-shlibdeps -O "$stage/usr/bin/farecheck" "$stage/usr/bin/farecheck-server" \
    2>/dev/null | sed -n 's/^shlibs:Depends=//p')
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: farecheck
Version: $version
Architecture: $arch
Maintainer: farecheck <farecheck@localhost>
Installed-Size: $size
Depends: $depends, adduser, systemd
Recommends: udev
Section: net
Priority: optional
Description: offline fare inspection validator for transit tickets
 farecheck reads transit ticket barcodes (FC1, UIC 918.3 with FCB, UIC 918.9 DOSIPAS, ERA SSB, VDV-KA and
 UK RSP6) from serial and USB scanners, cameras and image files, and tells in milliseconds and without a
 network whether a ticket is genuine and valid now. farecheck daemon runs on vehicle gates and inspectors'
 handhelds; farecheck-server is the reference validation API server for a fleet (SQLite or PostgreSQL).
EOF
install -m 0755 packaging/postinst packaging/prerm packaging/postrm "$stage/DEBIAN/"

mkdir -p dist
deb="dist/farecheck_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "build-deb: $deb ($(du -h "$deb" | cut -f1); installed $((size / 1024)) MiB) in $((SECONDS - started)) s"
