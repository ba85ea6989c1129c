#!/usr/bin/env bash
# Builds zxing-cpp 3.1.1's C++ core from the PyPI source distribution (the whole core under core/), pinned by
# version and SHA-256, and installs it under /opt/farecheck/zxing-cpp-3.1.1 with a pkg-config file of its own
# (farecheck-zxing.pc) and a library name of its own (libfarecheck-zxing.a), which the CZXingCore system library
# reads. Needs root (or sudo), PyPI, cmake and ninja (scripts/install-deps.sh installs them, then runs this).
#
# Why not Debian's libzxing-dev (1.4): it is built with its assertions on, and camera-like frames reach one of them
# (RegressionLine.h:144, `intersect`, on the Aztec path), which aborts the whole process; and on such frames 3.1.1
# reads about two and a half times as many symbols (docs/camera.md). The prefix is our own so that nothing of
# Debian's zxing (headers, libZXing.so, zxing.pc) is shadowed or shadows this build: both can be installed at once.
# A Release build: assertions off (NDEBUG), as upstream's own release builds and the PyPI wheel are.
set -euo pipefail
version=3.1.1
sha256=1051a521b21a9fe206702ad4186aeb195154e3e1badcd99576d030723f36382b
prefix=/opt/farecheck/zxing-cpp-$version
pc_dir=/usr/local/lib/pkgconfig
pc_file=$pc_dir/farecheck-zxing.pc

if [ -f "$prefix/lib/libfarecheck-zxing.a" ] && [ -f "$pc_file" ] && grep -q "Version: $version" "$pc_file"; then
    echo "build-zxing: zxing-cpp $version present in $prefix"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
# pip downloads the sdist only (no build, no dependencies); a venv keeps the system's Python untouched.
python3 -m venv "$work/venv"
"$work/venv/bin/pip" download -q --no-binary :all: --no-deps --dest "$work" "zxing-cpp==$version"
archive="$work/zxing_cpp-$version.tar.gz"
echo "$sha256  $archive" | sha256sum -c --quiet
tar -xzf "$archive" -C "$work"
# Readers, and the old writers (MultiFormatWriter: Aztec and QR for issuing test tickets) so that no zint is needed.
cmake -S "$work/zxing_cpp-$version/core" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DZXING_READERS=ON -DZXING_WRITERS=OLD -DZXING_EXPERIMENTAL_API=OFF \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >"$work/configure.log"
cmake --build "$work/build" --parallel "$(nproc)" >"$work/build.log"
$sudo cmake --install "$work/build" >"$work/install.log"
# A name of its own: a link line also holds -L/usr/lib/x86_64-linux-gnu (from other pkg-config files), where Debian's
# libZXing.so (1.4) would be found first for -lZXing. zxing's CMake and pkg-config files name the old name: gone.
$sudo mv "$prefix/lib/libZXing.a" "$prefix/lib/libfarecheck-zxing.a"
$sudo rm -rf "$prefix/lib/cmake" "$prefix/lib/pkgconfig"
$sudo mkdir -p "$pc_dir"
$sudo tee "$pc_file" >/dev/null <<PC
prefix=$prefix
Name: farecheck-zxing
Description: zxing-cpp $version C++ core, built from the pinned PyPI sdist by farecheck's scripts/build-zxing.sh
Version: $version
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -lfarecheck-zxing
PC
echo "build-zxing: zxing-cpp $version built and installed in $prefix in $(($(date +%s) - started)) s"
