#!/usr/bin/env bash
# CI's time, measured as CI spends it: a clean clone of a commit (default: this checkout's HEAD),
# its .ci/run, and the stage table and longest tests scripts/test.sh prints at the end.
# Usage: scripts/bench-ci.sh [--cold] [COMMIT]
#   --cold  also empties the caches a fresh machine lacks (the Windows libraries in
#           ~/.cache/cvm/windows-deps, the tests' downloads in ~/.cache/cvm-tests): the figure the
#           README states is a cold run on a fresh machine with its packages installed.
# The clone and the full log stay in $TMPDIR (their paths are printed).
set -euo pipefail
cold=0
commit=HEAD
for arg in "$@"; do
    case "$arg" in
        --cold) cold=1 ;;
        -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "bench-ci.sh: unknown option '$arg'" >&2; exit 2 ;;
        *) commit=$arg ;;
    esac
done
src=$(cd "$(dirname "$0")/.." && pwd)
rev=$(git -C "$src" rev-parse --verify "$commit^{commit}") ||
    { echo "bench-ci.sh: no commit '$commit' in $src" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cvm-bench-ci.XXXXXX")
# As a checkout is: the tests run programs from it as other users (nobody), who must reach them.
chmod 755 "$work"
git clone -q "$src" "$work/clone"
git -C "$work/clone" checkout -q "$rev"
if [ $cold = 1 ]; then
    # The same folders scripts/windows-deps.sh and tests/integration/lib.sh use.
    rm -rf "${CVM_WIN_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/cvm/windows-deps}" \
        "${CVM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cvm-tests}"
fi
echo "bench-ci: $(git -C "$src" log -1 --format='%h %s' "$rev" | cut -c1-80)"
echo "bench-ci: clone $work/clone, log $work/ci.log; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
rc=0
(cd "$work/clone" && CI=true bash .ci/run) > "$work/ci.log" 2>&1 || rc=$?
total=$(($(date +%s) - start))
# The stages as test.sh began them, then its summary (stage table and longest tests).
grep -E '^=== ' "$work/ci.log" | grep -v '=== summary' || true
sed -n '/^=== summary/,$p' "$work/ci.log"
echo "bench-ci: .ci/run exited $rc after $total s ($(date -u +%F), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo))"
exit $rc
