#!/usr/bin/env bash
# bench-scale.sh [BIN_DIR] [--count N] [--check] [--runs N]
#
# Measures `cvm list`, `cvm current` and a shim (nvcc, a copy of `true`, so the time is cvm's)
# with 2 toolkits + 2 cuDNN builds and with N (default 200) of each, side by side in one
# hyperfine run, and prints the ratios. Target: every ratio within 1.5. With --check the script
# exits 1 when a ratio is above it.
#
# BIN_DIR holds the built cvm and cvm-shim (default: $CVM_BIN, else build-release/bin, else
# build/bin). Build it with -DCMAKE_BUILD_TYPE=Release for figures that mean something.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${CVM_BIN:-}
if [[ -z $BIN ]]; then
    BIN=$HERE/../build/bin
    [[ -x $HERE/../build-release/bin/cvm ]] && BIN=$HERE/../build-release/bin
fi
COUNT=200
CHECK=0
RUNS=
TARGET=1.5
while [[ $# -gt 0 ]]; do
    case $1 in
    --count) COUNT=${2:?}; shift 2 ;;
    --check) CHECK=1; shift ;;
    --runs) RUNS=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) BIN=$1; shift ;;
    esac
done
BIN=$(cd "$BIN" && pwd)
[[ -x $BIN/cvm && -x $BIN/cvm-shim ]] || { echo "$0: no cvm and cvm-shim in $BIN; build them or give BIN_DIR" >&2; exit 2; }
if ! command -v hyperfine >/dev/null; then
    source "$HERE/deps.sh"
    need_packages hyperfine
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cvm-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export CVM_BIN=$BIN
"$HERE/make-big-store.sh" "$WORK/small" 2 >/dev/null
"$HERE/make-big-store.sh" "$WORK/big" "$COUNT" >/dev/null
for s in small big; do
    [[ -x $WORK/$s/shims/nvcc ]] || { echo "$0: $WORK/$s/shims/nvcc missing (cvm rehash failed?)" >&2; exit 1; }
done
# `cvm list` keeps an index of each store folder once it has been still for 2 seconds (file times
# are too coarse to trust an index of a folder changed just now); a user's store is nearly always
# still, so the runs below measure that state.
sleep 2.5
# Neutral surroundings: no .cudaversion above the working folder, no outside selection.
mkdir -p "$WORK/cwd"
cd "$WORK/cwd"
unset CVM_VERSION CVM_STORE_PATH CUDA_PATH CUDA_HOME CUDNN_PATH CVM_ACTIVE || true

args=(-N --warmup 20 --export-json "$WORK/result.json" --style basic)
[[ -n $RUNS ]] && args+=(--runs "$RUNS")
cmds=()
names=()
for what in list current shim; do
    for s in small big; do
        case $what in
        list) c="env CVM_ROOT=$WORK/$s $BIN/cvm list" ;;
        current) c="env CVM_ROOT=$WORK/$s $BIN/cvm current" ;;
        shim) c="env CVM_ROOT=$WORK/$s $WORK/$s/shims/nvcc --version" ;;
        esac
        cmds+=("$c")
        names+=(--command-name "$what ($s)")
    done
done
# Sanity: each command works before it is timed.
for c in "${cmds[@]}"; do
    $c >/dev/null 2>&1 || { echo "$0: '$c' failed" >&2; exit 1; }
done
hyperfine "${args[@]}" "${names[@]}" "${cmds[@]}" >&2

python3 - "$WORK/result.json" "$COUNT" "$TARGET" "$CHECK" <<'EOF'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
count, target, check = sys.argv[2], float(sys.argv[3]), sys.argv[4] == "1"
# Wall time is what a user waits; CPU time (user + system) is what the process itself spends,
# and barely moves when other work shares the machine, so both are shown.
print(f"{'command':8} {'2 of each (wall)':>18} {count + ' of each (wall)':>20} {'ratio':>6}"
      f"   {'CPU 2':>8} {'CPU ' + count:>8} {'ratio':>6}")
bad = []
for what in ("list", "current", "shim"):
    s, b = results[f"{what} (small)"], results[f"{what} (big)"]
    ratio = b["mean"] / s["mean"]
    cs, cb = s["user"] + s["system"], b["user"] + b["system"]
    cratio = cb / cs
    over = ratio > target and cratio > target
    if over:
        bad.append(what)
    print(f"{what:8} {s['mean']*1000:9.2f} ms ±{s['stddev']*1000:5.2f} {b['mean']*1000:11.2f} ms ±{b['stddev']*1000:5.2f} {ratio:6.2f}"
          f"   {cs*1000:5.2f} ms {cb*1000:5.2f} ms {cratio:6.2f}{'  above ' + str(target) if over else ''}")
if bad:
    print(f"above the {target}x target (wall and CPU): {', '.join(bad)}")
sys.exit(1 if bad and check else 0)
EOF
