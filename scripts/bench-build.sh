#!/usr/bin/env bash
# What a newcomer's build costs: a clean Release build with the tests off, no ccache, -j2, of
# two commits side by side in one run, as CPU seconds (user + system of every compiler and
# linker started) and their ratio.
#
#   scripts/bench-build.sh [BEFORE [AFTER]]   (defaults: 99e68ab, the last commit before issue 23's
#                                              build work, and HEAD)
#
# Each commit is checked out into a scratch folder (git worktree) and built from nothing; the
# folders are removed at the end. CPU seconds hardly change with other load on the machine; the
# wall time printed beside them does.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
before=${1:-99e68ab}
after=${2:-HEAD}
source "$here/scripts/deps.sh"
need_packages "${BUILD_PACKAGES[@]}" time git
work=$(mktemp -d /tmp/cvm-bench-build.XXXXXX)
cleanup() {
    for name in before after; do
        git -C "$here" worktree remove --force "$work/$name" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

# build NAME COMMIT: prints "CPU WALL" in seconds.
build() {
    git -C "$here" worktree add --detach -q "$work/$1" "$2"
    env -u CMAKE_CXX_COMPILER_LAUNCHER -u CMAKE_C_COMPILER_LAUNCHER \
        cmake -S "$work/$1" -B "$work/$1-build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCVM_TESTS=OFF \
        > "$work/$1.configure.log"
    /usr/bin/time -f "%U %S %e" -o "$work/$1.time" \
        cmake --build "$work/$1-build" -j2 > "$work/$1.build.log" 2>&1 ||
        { tail -20 "$work/$1.build.log"; echo "the build of $2 failed" >&2; exit 1; }
    awk '{ printf "%.0f %.0f\n", $1 + $2, $3 }' "$work/$1.time"
}

read -r cpu_before wall_before < <(build before "$before")
read -r cpu_after wall_after < <(build after "$after")
printf '%-8s %-10s %10s %10s\n' "" commit "CPU s" "wall s"
printf '%-8s %-10s %10s %10s\n' before "$(git -C "$here" rev-parse --short "$before")" "$cpu_before" "$wall_before"
printf '%-8s %-10s %10s %10s\n' after "$(git -C "$here" rev-parse --short "$after")" "$cpu_after" "$wall_after"
awk -v a="$cpu_after" -v b="$cpu_before" 'BEGIN { printf "after/before CPU: %.2f (target: at most 0.50)\n", a / b }'
