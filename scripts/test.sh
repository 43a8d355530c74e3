#!/usr/bin/env bash
# Runs every test: a warnings-as-errors build and its tests, the same under AddressSanitizer and
# UBSan, the libFuzzer targets briefly, and the Windows build under Wine.
# Usage: scripts/test.sh [--quick]   (--quick: only the first build and its tests)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
need_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
# The tests fail, not skip, when a tool of these packages (or, once built, of the Windows build)
# is missing (need_tools in tests/integration/lib.sh): CI must not skip them silently.
export CVM_TEST_DEPS=installed
jobs=$(nproc)
status=0
# Each stage line says how far into the run it starts: where CI's minutes go.
step() { echo; echo "=== $* === (at ${SECONDS} s)"; }

# The Windows cross build (tested under Wine by the windows_* tests) runs beside the first Linux
# build: on a clean machine it spends minutes configuring and building its dependencies
# (scripts/windows-deps.sh), one configure script at a time, while the other CPU would wait.
win_pid=
if [ -x scripts/build-windows.sh ] && [ "${1:-}" != "--quick" ]; then
    win_log=$(mktemp "${TMPDIR:-/tmp}/cvm-build-windows.XXXXXX")
    step "Windows cross build (mingw-w64, warnings as errors) in the background: $win_log"
    scripts/build-windows.sh --werror > "$win_log" 2>&1 &
    win_pid=$!
    trap 'kill "$win_pid" 2>/dev/null || true' EXIT
fi

step "build (warnings as errors)"
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCVM_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"
if [ -n "$win_pid" ]; then
    step "Windows cross build: its end"
    if wait "$win_pid"; then
        tail -n 2 "$win_log"
        export CVM_TEST_WINDOWS=built
    else
        tail -n 40 "$win_log"; echo "the Windows cross build FAILED (whole log: $win_log)"; status=1
    fi
    trap - EXIT
fi
step "tests"
(cd build-test && ctest --output-on-failure -j"$jobs") || status=1

[ "${1:-}" == "--quick" ] && exit $status

step "build with AddressSanitizer + UBSan"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCVM_WERROR=ON -DCVM_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs"
step "tests under AddressSanitizer + UBSan"
# The Windows tests run Wine, not these binaries, build_systems spends its minutes in nvcc, CMake
# and Meson, image_real_cuda and package_linux in compressing (label slow), not in cvm: once is enough. shell_cmd_wine runs this build's core_tests in the
# first build's Wine prefix (made there already; the runs never overlap).
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    CVM_TEST_WINEPREFIX="$PWD/../build-test/wineprefix" ctest --output-on-failure -j"$jobs" -LE '^(windows|build|slow)$') || status=1

step "fuzzers (libFuzzer, briefly)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCVM_FUZZ=ON -DCVM_TESTS=OFF >/dev/null
fuzz_targets=$(cd tests/fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')
cmake --build build-fuzz -j"$jobs" --target $fuzz_targets 2>&1 | tail -1
# One fuzzer per CPU at a time, each for CVM_FUZZ_SECONDS; the results in order afterwards.
fuzz_one() {
    local f=$1 name corpus
    name=$(basename "$f")
    corpus=tests/fuzz/corpus/${name#fuzz_}
    mkdir -p "build-fuzz/corpus-$name"
    local args=("build-fuzz/corpus-$name")
    [ -d "$corpus" ] && args+=("$corpus")
    local rc=0
    "$f" -max_total_time="${CVM_FUZZ_SECONDS:-15}" -rss_limit_mb=2048 "${args[@]}" >"build-fuzz/$name.log" 2>&1 || rc=$?
    echo "$rc" > "build-fuzz/$name.rc"
}
running=0
rm -f build-fuzz/*.rc
for f in build-fuzz/bin/fuzz_*; do
    [ -x "$f" ] || continue
    fuzz_one "$f" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
for f in build-fuzz/bin/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    if [ "$(cat "build-fuzz/$name.rc" 2>/dev/null)" = 0 ]; then
        echo "$name: $(grep -Eo 'Done [0-9]+ runs' "build-fuzz/$name.log" | tail -1)"
    else
        echo "$name: FAILED (build-fuzz/$name.log)"; tail -30 "build-fuzz/$name.log"; status=1
    fi
done

step "summary"
[ $status -eq 0 ] && echo "all test stages passed" || echo "some test stage FAILED"
exit $status
