#!/usr/bin/env bash
# The Wine tests (windows_*, shell_cmd_wine) many times in a row while the machine is kept busy:
# a busy loop per CPU beside them, as another build would. Stops at the first failure and shows
# its output; a Wine test must never fail by chance.
#
#   scripts/stress-wine.sh [--build-dir DIR] [--runs N] [--no-load]
#
# DIR is a configured and built build folder (default build); the Windows programs come from
# build-windows/bin (scripts/build-windows.sh), or CVM_WINDOWS_BIN. Prints one line per run and
# the total at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build runs=20 load=1
while [[ $# -gt 0 ]]; do
    case $1 in
    --build-dir) build=${2:?--build-dir needs a folder}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --no-load) load=0; shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--runs N] [--no-load]" >&2; exit 2 ;;
    esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "stress-wine.sh: --runs needs a positive number, not '$runs'" >&2; exit 2; }
[[ -f $build/CTestTestfile.cmake ]] || { echo "stress-wine.sh: $build is no built build folder; run cmake --build $build first" >&2; exit 2; }
windows_bin=${CVM_WINDOWS_BIN:-build-windows/bin}
[[ -f $windows_bin/cvm.exe ]] || { echo "stress-wine.sh: no $windows_bin/cvm.exe; run scripts/build-windows.sh" >&2; exit 2; }

busy=()
stop_load() {
    local pid
    for pid in "${busy[@]}"; do kill "$pid" 2> /dev/null || true; done
    busy=()
}
trap stop_load EXIT
if ((load)); then
    for ((i = 0; i < $(nproc); i++)); do
        (while :; do :; done) &
        busy+=($!)
    done
fi

export CVM_TEST_WINDOWS=built CVM_TEST_DEPS=installed
log=$(mktemp "${TMPDIR:-/tmp}/stress-wine.XXXXXX")
start=$SECONDS
for ((run = 1; run <= runs; run++)); do
    t0=$SECONDS
    if (cd "$build" && ctest -j2 -R '^(windows_.*|shell_cmd_wine)$' --output-on-failure) > "$log" 2>&1; then
        # A wineserver that lib_wine.sh had to start again is no failure, but counted here.
        restarts=$(grep -c 'note: the wineserver started for' "$build/Testing/Temporary/LastTest.log" || true)
        late=$(grep -c 'showed in /proc only at look' "$build/Testing/Temporary/LastTest.log" || true)
        starts=$(grep -c 'note: Wine could not start' "$build/Testing/Temporary/LastTest.log" || true)
        # The load average says how busy the machine was (with --no-load: whatever else ran).
        echo "run $run/$runs: $(grep -Eo '[0-9]+ tests failed out of [0-9]+' "$log" || echo '?'), $restarts wineserver restarts, $starts process starts again, $late late in /proc ($((SECONDS - t0)) s, load $(cut -d' ' -f1 /proc/loadavg))"
        grep 'note: the wineserver started for' "$build/Testing/Temporary/LastTest.log" || true
    else
        cat "$log"
        echo "stress-wine.sh: run $run of $runs FAILED (output above, also in $log)" >&2
        exit 1
    fi
done
rm -f "$log"
if ((load)); then beside="$(nproc) busy loops beside them"; else beside="no busy loops of its own (--no-load)"; fi
echo "stress-wine.sh: $runs runs of the Wine tests passed, $beside: $((SECONDS - start)) s"
