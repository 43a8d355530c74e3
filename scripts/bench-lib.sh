# Sourced by the bench scripts (bench-shim.sh, bench-startup.sh): the build to time and a scratch
# store, the same in each so that their figures compare.
# bench_prepare [BUILD]: sets `cvm` (BUILD/bin/cvm, default build-release, built Release if
# missing) and `tmp` (removed at exit), points CVM_ROOT at $tmp/root and the config files at
# names that do not exist (as on a machine without any), and unsets CVM_VERSION.
bench_prepare() {
    source scripts/deps.sh
    need_packages hyperfine "${BUILD_PACKAGES[@]}"
    local build=${1:-build-release}
    if [ ! -x "$build/bin/cvm" ]; then
        cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCVM_TESTS=OFF >/dev/null
        cmake --build "$build" -j"$(nproc)" >/dev/null
    fi
    cvm=$(realpath "$build/bin/cvm")
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    export CVM_ROOT="$tmp/root"
    export CVM_SYSTEM_CONFIG="$tmp/absent/etc/config.toml" CVM_CONFIG="$tmp/absent/config.toml"
    unset CVM_VERSION
}

# bench_toolkit DIR VERSION: the files that make DIR a toolkit of VERSION (X.Y.Z) to cvm import.
bench_toolkit() {
    local major=${2%%.*} rest=${2#*.}
    mkdir -p "$1/bin" "$1/include" "$1/lib64"
    printf '{"cuda":{"version":"%s"}}' "$2" > "$1/version.json"
    printf '#define CUDA_VERSION %d\n' $((major * 1000 + ${rest%%.*} * 10)) > "$1/include/cuda.h"
}
