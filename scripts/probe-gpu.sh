#!/usr/bin/env bash
# On the GPU machine: probe the CUDA 13 toolkit and the cuDNN 9.19 wheel there, and time the
# probe against the PyTorch check people use today, side by side, with peak memory for both.
#
#   scripts/probe-gpu.sh [BIN_DIR]
#
# BIN_DIR (or $CVM_BIN) holds cvm-probe and, when built, cvm: a Release build folder's bin (or the
# build folder itself). Default: build-release/bin, build/bin, then build-probe/gpu; with none of
# those, cvm-probe is compiled here from src/probe (it needs only a C++17 compiler and libdl).
# Needs no network.
# With a working `cvm` that has `probe`, the toolkit and cuDNN are imported into a throw-away
# CVM_ROOT, selected, and probed through `cvm probe`; otherwise cvm-probe runs with
# LD_LIBRARY_PATH set by hand to the same two folders.
# Variables: CUDA_DIR, CUDNN_DIR, PYTHON, RUNS (timed runs per command, default 10), SPEC (the
# selection for cvm, default 13+9), OUT (folder for the reports; default a temporary one).
set -uo pipefail

CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
CUDNN_DIR=${CUDNN_DIR:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn}
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
RUNS=${RUNS:-10}
SPEC=${SPEC:-13+9}
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
OUT_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

say() { printf '\n== %s\n' "$*"; }
die() {
    echo "probe-gpu: $*" >&2
    exit 1
}

[ -d "$CUDA_DIR" ] || die "no CUDA toolkit at $CUDA_DIR; set CUDA_DIR"
[ -d "$CUDNN_DIR" ] || die "no cuDNN at $CUDNN_DIR; set CUDNN_DIR"
[ -x "$PYTHON" ] || die "no Python at $PYTHON; set PYTHON"

# ---- the binaries ----
BIN=
for dir in "${1:-}" "${1:+$1/bin}" "${CVM_BIN:-}" "$SOURCE_DIR/build-release/bin" "$SOURCE_DIR/build/bin" \
    "$SOURCE_DIR/build-probe/gpu"; do
    if [ -n "$dir" ] && [ -x "$dir/cvm-probe" ] && "$dir/cvm-probe" --version >/dev/null 2>&1; then
        BIN=$dir
        break
    fi
done
if [ -z "$BIN" ]; then
    say "building cvm-probe from $SOURCE_DIR/src/probe"
    BIN=$WORK/bin
    mkdir -p "$BIN"
    sources=()
    for f in "$SOURCE_DIR"/src/probe/*.cpp; do
        [ "$(basename "$f")" = os_windows.cpp ] || sources+=("$f")
    done
    ${CXX:-g++} -std=c++17 -O2 -o "$BIN/cvm-probe" "${sources[@]}" -ldl ||
        die "could not build cvm-probe"
fi
echo "cvm-probe: $BIN/cvm-probe ($("$BIN/cvm-probe" --version))"

MODE=ld_library_path
CVM=
if [ -x "$BIN/cvm" ] && "$BIN/cvm" probe --help >/dev/null 2>&1; then
    CVM=$BIN/cvm
    MODE=cvm
fi
if [ -x "$BIN/cvm" ] && [ -z "$CVM" ]; then
    echo "note: $BIN/cvm does not run here or has no probe command:"
    "$BIN/cvm" --version 2>&1 | head -3
fi

# ---- the selection ----
if [ "$MODE" = cvm ]; then
    say "importing and selecting with $CVM (CVM_ROOT in $WORK/root)"
    export CVM_ROOT=$WORK/root
    export CVM_REGISTRY_DIR=${CVM_REGISTRY_DIR:-$SOURCE_DIR/registry}
    "$CVM" import "$CUDA_DIR" || die "cvm import $CUDA_DIR failed"
    "$CVM" import "$CUDNN_DIR" || die "cvm import $CUDNN_DIR failed"
    "$CVM" list || true
    "$CVM" use --global "$SPEC" || die "cvm use --global $SPEC failed"
    "$CVM" current || true
    PROBE=("$CVM" probe)
else
    say "no usable cvm: running cvm-probe with LD_LIBRARY_PATH set by hand"
    export LD_LIBRARY_PATH="$CUDNN_DIR/lib:$CUDA_DIR/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    PROBE=("$BIN/cvm-probe")
fi

# ---- one run of each, for the record ----
TORCH_CODE="import torch, torch.nn.functional as F
v = torch.backends.cudnn.version()
x = torch.randn(1, 3, 32, 32, device='cuda')
w = torch.randn(8, 3, 3, 3, device='cuda')
y = F.conv2d(x, w, padding=1)
torch.cuda.synchronize()
print('torch', torch.__version__, 'cudnn', v, 'conv2d', tuple(y.shape))"

# The check people run today (the issue's `python -c "..."`), kept in a file so that every timing
# tool runs the same bytes.
printf '%s\n' "$TORCH_CODE" >"$WORK/torch_check.py"
TORCH=("$PYTHON" "$WORK/torch_check.py")

say "probe"
"${PROBE[@]}" | tee "$OUT_DIR/probe.txt"
probe_rc=${PIPESTATUS[0]}
echo "exit status: $probe_rc"
say "probe --benchmark"
"${PROBE[@]}" --benchmark | tee "$OUT_DIR/probe-benchmark.txt"
bench_rc=${PIPESTATUS[0]}
echo "exit status: $bench_rc"
"${PROBE[@]}" --benchmark --json >"$OUT_DIR/probe-benchmark.json"
say "PyTorch check"
cat "$WORK/torch_check.py"
"${TORCH[@]}" | tee "$OUT_DIR/pytorch.txt"

# ---- side by side: wall time and peak memory of each whole process ----
# Each run is a fresh process. Peak memory: /proc is sampled every 2 ms for the process and its
# children (`cvm probe` runs cvm-probe as a child) and the largest sum of their resident sizes,
# or the largest single VmHWM, is kept. wait4's ru_maxrss is printed too, but it cannot go below
# the measuring Python's own size: a forked child starts with its parent's resident pages.
COMMANDS=$("$PYTHON" - "${#PROBE[@]}" "${PROBE[@]}" "${TORCH[@]}" <<'EOF'
import json, sys
n = int(sys.argv[1])
probe, torch = sys.argv[2:2 + n], sys.argv[2 + n:]
print(json.dumps([["probe", probe], ["probe --benchmark", probe + ["--benchmark"]],
                  ["pytorch check", torch]]))
EOF
)
say "timing: $RUNS runs of each after one warm-up"
"$PYTHON" "$SOURCE_DIR/scripts/measure_runs.py" "$RUNS" "$COMMANDS" >"$OUT_DIR/timing.json" || die "measuring failed"
"$PYTHON" - "$OUT_DIR/timing.json" <<'EOF' | tee "$OUT_DIR/summary.txt"
import json, sys
rows = json.load(open(sys.argv[1]))
print(f"{'command':<20}{'mean s':>9}{'median s':>10}{'min s':>8}{'max s':>8}{'peak RSS MiB':>14}"
      f"{'ru_maxrss MiB':>15}  exit")
for r in rows:
    print(f"{r['name']:<20}{r['mean_s']:>9.3f}{r['median_s']:>10.3f}{r['min_s']:>8.3f}"
          f"{r['max_s']:>8.3f}{r['peak_rss_mib']:>14.1f}{r['ru_maxrss_mib']:>15.1f}  {r['exit_codes']}")
by = {r["name"]: r for r in rows}
torch, probe = by["pytorch check"], by["probe"]
print(f"PyTorch check / probe: {torch['mean_s'] / probe['mean_s']:.1f}x the wall time, "
      f"{torch['peak_rss_mib'] / probe['peak_rss_mib']:.1f}x the peak memory")
EOF
if command -v hyperfine >/dev/null; then
    say "hyperfine"
    q() { printf '%q ' "$@"; }
    hyperfine -i --warmup 1 --runs "$RUNS" -n probe "$(q "${PROBE[@]}")" \
        -n "probe --benchmark" "$(q "${PROBE[@]}" --benchmark)" \
        -n "pytorch check" "$(q "${TORCH[@]}")" || true
else
    echo "(hyperfine is not installed here; the figures above come from wait4)"
fi
echo
echo "mode: $MODE; reports in $OUT_DIR"
[ "$probe_rc" = 0 ] && [ "$bench_rc" = 0 ]
