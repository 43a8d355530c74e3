#!/usr/bin/env bash
# Builds cvm's packages into dist/ (or --out DIR):
#   cvm_<version>_amd64.deb, cvm-<version>-linux-x86_64.tar.gz   (CPack, from a Release build)
#   cvm-<version>-windows-x64.zip                                  (the mingw cross build, with
#                                                                   install.cmd and install.ps1)
# Usage: scripts/package.sh [--out DIR] [--linux-only | --windows-only]
#                           [--build-dir DIR]     package this configured build instead of building
#                           [--windows-bin DIR]   zip these .exe files instead of cross building
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
out=dist build="" windows_bin="" linux=1 windows=1
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --windows-bin) windows_bin=$2; shift 2 ;;
    --linux-only) windows=0; shift ;;
    --windows-only) linux=0; shift ;;
    *) echo "package.sh: unknown argument $1 (see the usage at the top of scripts/package.sh)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n 's/^project(cvm VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || { echo "package.sh: no version in CMakeLists.txt's project()" >&2; exit 1; }

if [ $linux = 1 ]; then
    need_packages "${BUILD_PACKAGES[@]}" dpkg-dev file
    if [ -z "$build" ]; then
        build=build-package
        cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCVM_TESTS=OFF >/dev/null
        cmake --build "$build" -j"$(nproc)"
    fi
    (cd "$build" && cpack -G "DEB;TGZ" -B "$out/cpack" >/dev/null)
    mv "$out/cpack/cvm_${version}_amd64.deb" "$out/cpack/cvm-${version}-linux-x86_64.tar.gz" "$out/"
    rm -rf "$out/cpack"
    echo "$out/cvm_${version}_amd64.deb"
    echo "$out/cvm-${version}-linux-x86_64.tar.gz"
fi

if [ $windows = 1 ]; then
    need_packages zip
    if [ -z "$windows_bin" ]; then
        windows_bin=$(scripts/build-windows.sh | tail -1)
    fi
    for exe in cvm.exe cvm-shim.exe cvm-probe.exe; do
        [ -f "$windows_bin/$exe" ] || { echo "package.sh: $windows_bin/$exe is missing; run scripts/build-windows.sh" >&2; exit 1; }
    done
    name=cvm-${version}-windows-x64
    stage=$(mktemp -d)
    trap 'rm -rf "$stage"' EXIT
    mkdir -p "$stage/$name/bin" "$stage/$name/share/cvm/registry"
    cp "$windows_bin"/cvm.exe "$windows_bin"/cvm-shim.exe "$windows_bin"/cvm-probe.exe "$stage/$name/bin/"
    cp registry/*.toml "$stage/$name/share/cvm/registry/"
    # cmd reads its scripts best with Windows line ends.
    sed 's/$/\r/' scripts/windows/install.cmd >"$stage/$name/install.cmd"
    sed 's/$/\r/' scripts/windows/install.ps1 >"$stage/$name/install.ps1"
    sed 's/$/\r/' README.md >"$stage/$name/README.txt"
    rm -f "$out/$name.zip"
    (cd "$stage" && zip -qr "$out/$name.zip" "$name")
    echo "$out/$name.zip"
fi
