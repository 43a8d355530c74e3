#!/usr/bin/env bash
# Runs every test (CI's .ci/run), each once, in the build that checks it best:
#   - one clang build with AddressSanitizer, UBSan and libFuzzer's coverage, warnings as errors
#     (build-test): the whole suite runs on it, and the fuzzers link its libraries;
#   - the Windows cross build (mingw-w64, warnings as errors), built beside it: the Wine tests;
#   - the build users get (gcc, warnings as errors, the shim static against musl; build-plain),
#     every file compiled alone (no unity batches, so a file that lacks an #include a batch-mate
#     gave it fails here): the tests of what only that build has (label `plain`: the musl shim,
#     the packages).
# Usage: scripts/test.sh            everything, as CI
#        scripts/test.sh --quick [BASE]
#            a developer's check: rebuilds build-test incrementally and runs the unit tests and the
#            integration tests of the areas the change touches (scripts/test-areas.sh): the files
#            changed since BASE (default: the merge base with origin/main; on main with nothing
#            uncommitted, the last commit) and those not committed yet.
# At the end: how long each stage took and the 15 longest tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

mode=full
base=
case "${1:-}" in
    "") ;;
    --quick) mode=quick; base=${2:-} ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (scripts/test.sh [--quick [BASE]])" >&2; exit 2 ;;
esac

jobs=$(nproc)
status=0
logs=$(mktemp -d "${TMPDIR:-/tmp}/cvm-test.XXXXXX")
children=()
trap 'for p in "${children[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# Stages: each line says when it starts; the table at the end says how long each took. Stages in
# the background record their own end in $logs.
stage_rows=()
stage_now=
stage_at=0
stage_close() {
    [ -n "$stage_now" ] && stage_rows+=("$stage_now|$stage_at|$SECONDS")
    stage_now=
}
step() {
    stage_close
    stage_now=$*
    stage_at=$SECONDS
    echo; echo "=== $* === (at ${SECONDS} s)"
}
# background NAME LOG CMD...: runs CMD beside the stages, its output in LOG; CMD records its own
# rows of the stage table with `row NAME FROM TO`.
background() {
    local name=$1 log=$2
    shift 2
    echo; echo "=== $name, in the background: $log === (at ${SECONDS} s)"
    "$@" > "$log" 2>&1 &
    children+=($!)
}
row_note=" (background)"
row() { echo "$1$row_note|$2|$3" >> "$logs/bg-rows"; }

# run_ctest NAME BUILD-DIR ARGS...: one ctest run, its lines kept for the table of longest tests.
# build-test's programs stop at the first error either sanitizer finds, leaks included.
run_ctest() {
    local name=$1 dir=$2
    shift 2
    (cd "$dir" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure "$@") 2>&1 |
        tee "$logs/ctest-$name.log" | grep --line-buffered -v '^ *Start ' || true
    grep -q '^100% tests passed' "$logs/ctest-$name.log"
}

summary() {
    stage_close
    echo; echo "=== summary === (at ${SECONDS} s)"
    [ -f "$logs/bg-rows" ] && while IFS= read -r row; do stage_rows+=("$row"); done < "$logs/bg-rows"
    printf '%-64s %7s %7s %7s\n' "stage" "from s" "to s" "length"
    local name from to
    printf '%s\n' "${stage_rows[@]}" | sort -s -t'|' -k2,2n | while IFS='|' read -r name from to; do
        printf '%-64s %7s %7s %7s\n' "${name:0:64}" "$from" "$to" "$((to - from))"
    done
    echo "total: ${SECONDS} s"
    echo; echo "the 15 longest tests:"
    # "  3/95 Test #11: build_systems ......   Passed   89.53 sec" -> seconds, name, run, result
    for f in "$logs"/ctest-*.log; do
        [ -f "$f" ] || continue
        local run=${f##*/ctest-}; run=${run%.log}
        sed -nE "s/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: ([^ ]+) \.*\**([A-Za-z* ]+[a-z]) +([0-9.]+) sec$/\3 \1 ($run) \2/p" "$f"
    done | sort -rn | head -15 | awk '{printf "  %8.1f s  %s\n", $1, substr($0, index($0, $2))}'
    if [ $status -eq 0 ]; then
        rm -rf "$logs"
        echo "all test stages passed"
    else
        echo "some test stage FAILED; the logs of every stage (ctest's, the Windows build's) are kept in $logs"
    fi
}

step "packages"
need_packages "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
need_nonfree_packages "${NONFREE_TEST_PACKAGES[@]}"
# The tests fail, not skip, when a tool of these packages (or, once built, of the Windows build)
# is missing (need_tools in tests/integration/lib.sh): CI must not skip them silently.
export CVM_TEST_DEPS=installed

# The Windows cross build: on a clean machine it first builds its dependencies (minutes, mostly
# configure checks one at a time); the Linux build and tests run meanwhile. Once both it and the
# Linux tests are done, the same job runs the Wine tests: one at a time (they share the build
# folder's Wine prefix), beside the plain build and the fuzzers.
# Arguments: more for ctest (--quick: the tests of the change).
windows_then_wine() {
    local rc=0 at=$SECONDS
    scripts/build-windows.sh --werror > "$logs/build-windows.log" 2>&1 || rc=$?
    row "Windows cross build (mingw-w64, -Werror)" $at $SECONDS
    if [ $rc != 0 ]; then
        tail -n 40 "$logs/build-windows.log"; echo "the Windows cross build FAILED"
        return $rc
    fi
    tail -n 2 "$logs/build-windows.log"
    at=$SECONDS
    while [ ! -e "$logs/linux-tests-done" ]; do sleep 2; done
    [ $SECONDS -gt $at ] && row "(waiting for the Linux tests)" $at $SECONDS
    at=$SECONDS
    CVM_TEST_WINDOWS=built run_ctest wine build-test -j1 -L '^wine$' "$@" || rc=$?
    row "Wine tests, one at a time" $at $SECONDS
    return $rc
}
wine_pid=
if [ $mode = full ]; then
    background "Windows cross build, then the Wine tests" "$logs/wine.log" windows_then_wine
    wine_pid=$!
fi

step "build-test: clang, ASan + UBSan + libFuzzer coverage, -Werror"
# (The compilers named, not taken from CC/CXX: a build-test an older test.sh made with gcc is then
# configured anew rather than handed clang's flags.)
cmake -S . -B build-test -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DCVM_WERROR=ON -DCVM_SANITIZE=ON -DCVM_FUZZ=ON >/dev/null
cmake --build build-test -j"$jobs"

if [ $mode = quick ]; then
    # What changed: since BASE, or since the merge base with origin/main, plus what is uncommitted.
    if [ -z "$base" ]; then
        base=$(git merge-base HEAD origin/main 2>/dev/null || echo HEAD)
        [ "$(git rev-parse "$base")" = "$(git rev-parse HEAD)" ] && [ -z "$(git status --porcelain)" ] && base=HEAD~1
    fi
    changed=$( { git diff --name-only "$base"; git ls-files --others --exclude-standard; } | sort -u)
    step "tests of the areas changed since $(git rev-parse --short "$base")"
    echo "changed: $(echo $changed)"
    areas=$(scripts/test-areas.sh $changed)
    echo "tests: unit_.* $areas"
    if [ "$areas" = all ]; then
        run_ctest quick build-test -j"$jobs" -LE '^(wine|plain)$' || status=1
    else
        pattern="^(unit_.*|$(echo $areas | tr ' ' '|'))$"
        run_ctest quick build-test -j"$jobs" -LE '^(wine|plain)$' -R "$pattern" || status=1
        # The Wine tests of the change, where the Windows build was made once before.
        wine_tests=$(cd build-test && ctest -N -L '^wine$' -R "$pattern" | sed -n 's/^Total Tests: //p')
        if [ "${wine_tests:-0}" -gt 0 ]; then
            if [ -f build-windows/bin/cvm.exe ]; then
                echo; echo "=== Windows cross build (incremental) and $wine_tests Wine tests === (at ${SECONDS} s)"
                stage_close
                touch "$logs/linux-tests-done"
                row_note=""
                windows_then_wine -R "$pattern" || status=1
            else
                echo "$wine_tests Wine tests did not run: no build-windows/bin/cvm.exe (scripts/build-windows.sh once, or the full run)"
            fi
        fi
    fi
    summary
    exit $status
fi

# GCC's warnings, and the programs as users get them: the shim static against musl, the packages.
# No debug information: this build is never debugged, and without it GCC takes half the time. It
# runs at a low priority beside the sanitized tests, on the CPU time their waits leave. Every
# target compiles file by file here (CMAKE_UNITY_BUILD=OFF), the one build that shows a file
# leaning on an #include of a batch-mate; build-test keeps the batches.
plain_build_and_tests() {
    local rc=0 at=$SECONDS
    { cmake -S . -B build-plain -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCVM_WERROR=ON -DCMAKE_UNITY_BUILD=OFF \
        -DCMAKE_C_FLAGS_DEBUG=-g0 -DCMAKE_CXX_FLAGS_DEBUG=-g0 >/dev/null &&
      nice -n 10 cmake --build build-plain -j"$jobs"; } || rc=$?
    row "build-plain: gcc, -Werror, no debug information, no unity batches" $at $SECONDS
    [ $rc = 0 ] || { echo "the plain build FAILED"; return $rc; }
    # Its own tests (label plain), and the shim's against the static shim too.
    at=$SECONDS
    run_ctest plain build-plain -j1 -L '^(plain|shim)$' || rc=$?
    row "tests of the plain build (labels plain, shim)" $at $SECONDS
    return $rc
}
background "build-plain (gcc), then its tests" "$logs/plain.log" plain_build_and_tests
plain_pid=$!

step "tests under ASan + UBSan (all but the Wine and plain ones)"
run_ctest sanitized build-test -j"$jobs" -LE '^(wine|plain)$' || status=1
touch "$logs/linux-tests-done"

# One fuzzer per CPU at a time (beside the Wine tests), each for CVM_FUZZ_SECONDS.
step "fuzzers (libFuzzer, briefly, build-test's libraries)"
fuzz_one() {
    local f=$1 corpus=tests/fuzz/corpus/${1#fuzz_}
    mkdir -p "build-test/fuzz/corpus-$f"
    local args=("build-test/fuzz/corpus-$f")
    [ -d "$corpus" ] && args+=("$corpus")
    local rc=0
    "build-test/bin/$f" -max_total_time="${CVM_FUZZ_SECONDS:-15}" -rss_limit_mb=2048 "${args[@]}" \
        > "build-test/fuzz/$f.log" 2>&1 || rc=$?
    echo $rc > "build-test/fuzz/$f.rc"
}
fuzz_targets=$(cd tests/fuzz && ls fuzz_*.cpp | sed 's/\.cpp$//')
mkdir -p build-test/fuzz
rm -f build-test/fuzz/*.rc
export -f fuzz_one
printf '%s\n' $fuzz_targets | xargs -P "$jobs" -I{} bash -c 'fuzz_one {}'
for f in $fuzz_targets; do
    if [ "$(cat "build-test/fuzz/$f.rc" 2>/dev/null)" = 0 ]; then
        echo "$f: $(grep -Eo 'Done [0-9]+ runs' "build-test/fuzz/$f.log" | tail -1)"
    else
        echo "$f: FAILED (build-test/fuzz/$f.log)"; tail -30 "build-test/fuzz/$f.log"; status=1
    fi
done

step "build-plain and its tests: their end"
wait "$plain_pid" || status=1
grep -v '^ *Start ' "$logs/plain.log" || true

step "Windows cross build and Wine tests: their end"
wait "$wine_pid" || status=1
grep -v '^ *Start ' "$logs/wine.log" || true

summary
exit $status
