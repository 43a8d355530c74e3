#!/usr/bin/env bash
# Cross build cvm for 64-bit Windows with mingw-w64: cvm.exe, cvm-shim.exe and cvm-probe.exe in
# build-windows/ (bin/ below it), statically linked (they need only DLLs that come with Windows).
# The last line on stdout is the folder holding the three .exe files.
#
#   scripts/build-windows.sh [options] [-- extra cmake configure arguments]
#
# Options:
#   --build-dir DIR   build folder (default: <source>/build-windows, or $CVM_WIN_BUILD_DIR)
#   --source-dir DIR  project to build (default: the checkout holding this script)
#   --type TYPE       CMAKE_BUILD_TYPE (default Release)
#   --tests           also build the unit tests (CVM_TESTS=ON; needs Catch2 for Windows)
#   --werror          CVM_WERROR=ON
#   --fresh           delete the build folder first
#   --deps-only       only prepare the cached dependencies (scripts/windows-deps.sh)
#   --smoke           afterwards run `cvm.exe --version` under Wine
#   -j N              parallel jobs (default: number of CPUs, or $CVM_JOBS)
#
# What it does:
#   1. scripts/windows-deps.sh: installs missing Debian packages (mingw-w64, wine, ...; as root,
#      apt-get update first), builds liblzma, libarchive and libcurl (Schannel) for Windows from
#      Debian's source packages, or finds them in the cache
#      (${CVM_WIN_DEPS:-~/.cache/cvm/windows-deps}; a cached run takes about a second).
#   2. Configures the project with cmake/toolchain-mingw64.cmake (Ninja, CVM_TESTS=OFF).
#   3. Builds and checks that no .exe imports a mingw runtime DLL (libstdc++, winpthread, zlib1).
#
# Run the results with scripts/windows-wine.sh build-windows/cvm.exe ... (headless Wine,
# WINEPREFIX ~/.cache/cvm/wineprefix unless WINEPREFIX or CVM_WINEPREFIX is set).
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/.." && pwd)"
SOURCE="$REPO"
BUILD=""
TYPE=Release
TESTS=OFF
WERROR=OFF
FRESH=0
DEPS_ONLY=0
SMOKE=0
JOBS="${CVM_JOBS:-$(nproc 2>/dev/null || echo 2)}"
EXTRA=()

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
die() {
  echo "build-windows.sh: $*" >&2
  exit 1
}
need_arg() { [[ $# -ge 2 && -n $2 ]] || { echo "build-windows.sh: $1 needs a value" >&2; exit 2; }; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) need_arg "$@"; BUILD="$2"; shift 2 ;;
    --source-dir) need_arg "$@"; SOURCE="$(cd "$2" && pwd)"; shift 2 ;;
    --type) need_arg "$@"; TYPE="$2"; shift 2 ;;
    --tests) TESTS=ON; shift ;;
    --werror) WERROR=ON; shift ;;
    --fresh) FRESH=1; shift ;;
    --deps-only) DEPS_ONLY=1; shift ;;
    --smoke) SMOKE=1; shift ;;
    -j) need_arg "$@"; JOBS="$2"; shift 2 ;;
    -j*) JOBS="${1#-j}"; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "build-windows.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
BUILD="${BUILD:-${CVM_WIN_BUILD_DIR:-$SOURCE/build-windows}}"

t0=$SECONDS
deps_out="$(CVM_JOBS="$JOBS" "$REPO/scripts/windows-deps.sh")" || die "preparing the Windows dependencies failed"
PREFIX="$(sed -n 's/^PREFIX=//p' <<<"$deps_out")"
HEADERS="$(sed -n 's/^HEADERS=//p' <<<"$deps_out")"
[[ -n $PREFIX && -n $HEADERS ]] || die "scripts/windows-deps.sh printed no PREFIX/HEADERS"
echo "[build-windows] dependencies ready in $((SECONDS - t0)) s: $PREFIX" >&2
if [[ $DEPS_ONLY -eq 1 ]]; then
  echo "$deps_out"
  exit 0
fi

if ! grep -q 'Dependencies-windows' "$SOURCE/cmake/Dependencies.cmake" 2>/dev/null; then
  die "$SOURCE/cmake/Dependencies.cmake does not include cmake/Dependencies-windows.cmake;
add at its top:
  if(WIN32 AND NOT MSVC)
    include(\${CMAKE_CURRENT_LIST_DIR}/Dependencies-windows.cmake)
    return()
  endif()"
fi

[[ $FRESH -eq 1 ]] && rm -rf "$BUILD"
t1=$SECONDS
cmake -S "$SOURCE" -B "$BUILD" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$REPO/cmake/toolchain-mingw64.cmake" \
  -DCVM_WIN_DEPS_PREFIX="$PREFIX" -DCVM_WIN_HEADERS_DIR="$HEADERS" \
  -DCMAKE_BUILD_TYPE="$TYPE" -DCVM_TESTS="$TESTS" -DCVM_WERROR="$WERROR" \
  "${EXTRA[@]}" >&2 || die "configure failed (build folder $BUILD)"
cmake --build "$BUILD" -j "$JOBS" >&2 || die "build failed (build folder $BUILD)"
echo "[build-windows] built in $((SECONDS - t1)) s" >&2

# The .exe files must run on a bare Windows: no imports of mingw or third-party DLLs.
objdump="x86_64-w64-mingw32-objdump"
status=0
bindir=""
for exe in cvm cvm-shim cvm-probe; do
  path="$(find "$BUILD" -name "$exe.exe" -type f -not -path '*/CMakeFiles/*' | head -n1)"
  if [[ -z $path ]]; then
    echo "[build-windows] missing: $exe.exe" >&2
    status=1
    continue
  fi
  bindir="$(dirname "$path")"
  dlls="$("$objdump" -p "$path" | sed -n 's/^[[:space:]]*DLL Name: //p' | tr '\n' ' ')"
  bad="$(tr ' ' '\n' <<<"$dlls" | grep -iE '^(lib.*|zlib1|.*curl.*|.*archive.*|.*lzma.*)\.dll$' || true)"
  if [[ -n $bad ]]; then
    echo "[build-windows] $exe.exe needs non-system DLLs: $bad" >&2
    status=1
  fi
  echo "[build-windows] $path ($(stat -c %s "$path") bytes) imports: $dlls" >&2
done
[[ $status -eq 0 ]] || die "the Windows build is incomplete or not self-contained"

if [[ $SMOKE -eq 1 ]]; then
  echo "[build-windows] smoke test under Wine: cvm.exe --version" >&2
  "$REPO/scripts/windows-wine.sh" "$bindir/cvm.exe" --version || die "cvm.exe --version failed under Wine"
fi
echo "$bindir" # the folder with cvm.exe, cvm-shim.exe, cvm-probe.exe (CVM_BIN for the tests)
