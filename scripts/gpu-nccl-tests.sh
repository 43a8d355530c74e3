#!/usr/bin/env bash
# On the GPU machine (issue 39): NVIDIA's nccl-tests, built with nothing but cvm's environment
# against the torch wheel's NCCL, beside `cvm probe --nccl` on the same selection, in one table.
#   1. The toolkit (CUDA_DIR) and the torch wheel's nvidia/nccl imported, `cvm use TOOLKIT+ncclX.Y.Z`
#      in a project folder; nccl-tests' own Makefile under `cvm exec -- make` (no -I, -L, CUDA_HOME or
#      NCCL_HOME by hand; NVCC_GENCODE narrowed to the GPUs' architecture; all_reduce_perf only).
#   2. `cvm exec -- build/all_reduce_perf -b 8 -e 1G -f 2 -g GPUS` (one process over GPUS GPUs; it
#      must load the selected libnccl.so.2, checked with ldd under cvm exec).
#   3. `cvm probe --nccl --benchmark --json` with the same selection. The probe all-reduces floats
#      from 8 MiB to 1 GiB, doubling (20 times each, 5 from 128 MiB), over every visible GPU; on one
#      GPU --benchmark times every size too (without it, one checked 8 MiB all-reduce). Both run out of
#      place; nccl-tests' figures in the table are its out-of-place ones (20 iterations, as its
#      default -n). The table: size, nccl-tests time/algbw/busbw, cvm's, and at 1 GiB the ratios.
#
#   scripts/gpu-nccl-tests.sh BUILD_DIR [NCCL_TESTS_TGZ] [--gpus N]
#     BUILD_DIR: a build folder with bin/cvm, bin/cvm-probe and bin/cvm-shim (or the folder of them)
#     NCCL_TESTS_TGZ: the nccl-tests snapshot (default ../shared/clients/nccl-tests-2.19.6.tgz beside
#       the checkout); --gpus N: use the first N visible GPUs (CUDA_VISIBLE_DEVICES for both runs)
#
# Variables: CUDA_DIR (default /usr/local/cuda), PYTHON (default /opt/torch/.venv/bin/python, else
# python3), WHEEL_NCCL (default the PYTHON's nvidia/nccl), OUT (folder for the reports; default a
# temporary one), JOBS (make -j; default the processors). NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0) unless set. Needs no network. The last lines are a summary: `ok:` /
# `FAILED:` / `note:` lines and the table.
set -uo pipefail

BUILD=
TGZ=
GPUS_WANTED=
while (($#)); do
    case $1 in
    --gpus) GPUS_WANTED=${2:?--gpus takes a number}; shift 2 ;;
    --gpus=*) GPUS_WANTED=${1#--gpus=}; shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) if [ -z "$BUILD" ]; then BUILD=$1; elif [ -z "$TGZ" ]; then TGZ=$1; else echo "gpu-nccl-tests: unexpected argument $1" >&2; exit 2; fi; shift ;;
    esac
done
[ -n "$BUILD" ] || { echo "usage: scripts/gpu-nccl-tests.sh BUILD_DIR [NCCL_TESTS_TGZ] [--gpus N]" >&2; exit 2; }
BIN=$BUILD
[ -x "$BIN/cvm" ] || BIN=$BUILD/bin
[ -x "$BIN/cvm" ] && [ -x "$BIN/cvm-probe" ] || { echo "gpu-nccl-tests: no cvm and cvm-probe in $BUILD or $BUILD/bin" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
TGZ=${TGZ:-$SOURCE_DIR/../shared/clients/nccl-tests-2.19.6.tgz}
[ -f "$TGZ" ] || { echo "gpu-nccl-tests: no nccl-tests snapshot at $TGZ; give its path as the second argument" >&2; exit 2; }
TGZ=$(cd "$(dirname "$TGZ")" && pwd)/$(basename "$TGZ") # the script works in other folders
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
if [ -z "${PYTHON:-}" ]; then
    PYTHON=/opt/torch/.venv/bin/python
    [ -x "$PYTHON" ] || PYTHON=$(command -v python3)
fi
OUT_DIR=${OUT:-$(mktemp -d)}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$CUDA_DIR/bin/nvcc" ] || { echo "gpu-nccl-tests: no nvcc in $CUDA_DIR; set CUDA_DIR" >&2; exit 2; }
[ -x "$PYTHON" ] || { echo "gpu-nccl-tests: no Python at $PYTHON; set PYTHON" >&2; exit 2; }
WHEEL_NCCL=${WHEEL_NCCL:-$("$PYTHON" -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null)}
[ -f "$WHEEL_NCCL/lib/libnccl.so.2" ] || { echo "gpu-nccl-tests: no libnccl.so.2 in '$WHEEL_NCCL/lib'; set WHEEL_NCCL" >&2; exit 2; }

export CVM_ROOT=$WORK/root CVM_SHIM_BINARY=$BIN/cvm-shim COLUMNS=${COLUMNS:-110}
export CVM_REGISTRY_DIR=${CVM_REGISTRY_DIR:-$SOURCE_DIR/registry}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export PATH=$BIN:$PATH
unset LD_LIBRARY_PATH CVM_VERSION VIRTUAL_ENV CUDA_HOME CUDA_PATH NCCL_HOME NCCL_ROOT CPATH LIBRARY_PATH || true
SUMMARY=()
say() { printf '\n== %s\n' "$*"; }
ok() { SUMMARY+=("ok: $*"); }
bad() { SUMMARY+=("FAILED: $*"); }
note() { SUMMARY+=("note: $*"); }
id_of() { "$PYTHON" -c 'import json, sys; print(([e["id"] for e in json.load(sys.stdin)["imported"] if e["kind"] == sys.argv[1]] + [""])[0])' "$1" 2>/dev/null; }

say "machine"
cvm --version
nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv 2>&1 | tee "$OUT_DIR/smi.txt"
VISIBLE=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then VISIBLE=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .); fi
GPUS=${GPUS_WANTED:-$VISIBLE}
[ "$GPUS" -ge 1 ] 2>/dev/null || { echo "gpu-nccl-tests: no GPU visible (nvidia-smi lists $VISIBLE)" >&2; exit 1; }
[ "$GPUS" -le "$VISIBLE" ] || { echo "gpu-nccl-tests: --gpus $GPUS but $VISIBLE visible" >&2; exit 2; }
if [ -n "$GPUS_WANTED" ] && [ "$GPUS" -lt "$VISIBLE" ]; then
    # Both runs over the same GPUs: the probe uses every visible one.
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        CUDA_VISIBLE_DEVICES=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | head -n "$GPUS" | paste -sd, -)
    else
        CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))
    fi
    export CUDA_VISIBLE_DEVICES
fi
# One architecture per distinct compute capability of the GPUs (9.0 -> sm_90).
GENCODE=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' .' | sort -u |
    sed 's/.*/-gencode=arch=compute_&,code=sm_&/' | paste -sd' ' -)
[ -n "$GENCODE" ] || GENCODE=-gencode=arch=compute_90,code=sm_90
echo "GPUs: $GPUS (CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-all}); NVCC_GENCODE=$GENCODE; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"

say "imports (CVM_ROOT $CVM_ROOT)"
cuda_id=$(cvm import --json "$CUDA_DIR" | id_of cuda)
nccl_id=$(cvm import --json "$WHEEL_NCCL" | id_of nccl)
cvm list 2>&1 | tee "$OUT_DIR/list.txt"
[ -n "$cuda_id" ] || { echo "gpu-nccl-tests: importing $CUDA_DIR gave no toolkit" >&2; exit 1; }
[ -n "$nccl_id" ] || { echo "gpu-nccl-tests: importing $WHEEL_NCCL gave no NCCL" >&2; exit 1; }
ok "toolkit $cuda_id and the wheel's NCCL $nccl_id imported"
SPEC="${cuda_id}+nccl${nccl_id%%-cuda*}"
PROJ=$WORK/project
mkdir -p "$PROJ"
cd "$PROJ" || exit 1
cvm use "$SPEC" || { echo "gpu-nccl-tests: cvm use $SPEC failed" >&2; exit 1; }
cvm current | tee "$OUT_DIR/current.txt"
cvm exec -- sh -c 'echo "CUDA_HOME=$CUDA_HOME"; echo "NCCL_HOME=$NCCL_HOME"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"'

say "1. nccl-tests built under cvm exec -- make"
mkdir -p "$PROJ/nccl-tests"
tar -xzf "$TGZ" -C "$PROJ/nccl-tests" || { echo "gpu-nccl-tests: cannot unpack $TGZ" >&2; exit 1; }
B=$PROJ/nccl-tests/build
start=$(date +%s)
if cvm exec -- make -C "$PROJ/nccl-tests/src" -j"$JOBS" BUILDDIR="$B" NVCC_GENCODE="$GENCODE" "$B/all_reduce_perf" >"$OUT_DIR/make.log" 2>&1; then
    ok "nccl-tests' all_reduce_perf built with nothing but cvm's environment ($(($(date +%s) - start)) s, make -j$JOBS)"
else
    tail -n 30 "$OUT_DIR/make.log"
    bad "nccl-tests did not build under cvm exec (log $OUT_DIR/make.log)"
    for line in "${SUMMARY[@]}"; do echo "$line"; done
    exit 1
fi
loaded=$(cvm exec -- ldd "$B/all_reduce_perf" | awk '$1 == "libnccl.so.2" { print $3 }')
echo "all_reduce_perf loads libnccl.so.2 from $loaded ($(readlink -f "$loaded"))"
if [ "$(readlink -f "$loaded")" = "$(readlink -f "$WHEEL_NCCL/lib/libnccl.so.2")" ]; then
    ok "all_reduce_perf loads the selected NCCL (the wheel's)"
else
    bad "all_reduce_perf loads $loaded, not the wheel's $WHEEL_NCCL/lib/libnccl.so.2"
fi

say "2. all_reduce_perf -b 8 -e 1G -f 2 -g $GPUS"
(cd "$PROJ/nccl-tests" && cvm exec -- ./build/all_reduce_perf -b 8 -e 1G -f 2 -g "$GPUS") 2>&1 | tee "$OUT_DIR/all_reduce_perf.txt"
nt_rc=${PIPESTATUS[0]}
[ "$nt_rc" = 0 ] && ok "all_reduce_perf ran over $GPUS GPU(s)" || bad "all_reduce_perf exited $nt_rc"
grep -q 'Out of bounds values : 0 OK' "$OUT_DIR/all_reduce_perf.txt" && ok "nccl-tests checked every size: no wrong value" ||
    bad "nccl-tests did not report 'Out of bounds values : 0 OK'"

say "3. cvm probe --nccl ($SPEC)"
cvm probe --nccl --benchmark | tee "$OUT_DIR/probe.txt"
probe_rc=${PIPESTATUS[0]}
cvm probe --nccl --benchmark --json >"$OUT_DIR/probe.json" 2>"$OUT_DIR/probe.err"
[ "$probe_rc" = 0 ] && ok "cvm probe --nccl passes (every rank's every sum exact)" || bad "cvm probe --nccl exited $probe_rc"

say "table"
"$PYTHON" - "$OUT_DIR/all_reduce_perf.txt" "$OUT_DIR/probe.json" "$GPUS" <<'PY' | tee "$OUT_DIR/table.txt"
import json, re, sys

nt = {}
version = ""
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s*(\d+)\s+(\d+)\s+\w+\s+\w+\s+-?\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+|N/A)", line)
    if m:
        nt[int(m.group(1))] = (float(m.group(3)), float(m.group(4)), float(m.group(5)))
    elif "nccl-library" in line or "NCCL version" in line:
        version = version or line.strip().lstrip("#").strip()
try:
    d = json.load(open(sys.argv[2]))
    n = d.get("nccl") or {}
except (OSError, ValueError):
    n = {}
cvm = {s["bytes"]: (s.get("time_us"), s.get("algbw_gbs"), s.get("busbw_gbs")) for s in n.get("all_reduce") or []}


def size(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return "%d %s" % (b // k, unit)
    return "%d B" % b


def num(v, fmt):
    return "-" if v is None else fmt % v


print("nccl-tests: %s" % (version or "(version not printed)"))
print("cvm probe: NCCL %s, %s rank(s)%s" % ((n.get("version") or {}).get("text", "?"), n.get("ranks", "?"),
                                            ", " + n["note"] if n.get("note") else ""))
print("%-9s | %12s %9s %9s | %12s %9s %9s" % ("size", "nccl-tests", "algbw", "busbw", "cvm probe", "algbw", "busbw"))
print("%-9s | %12s %9s %9s | %12s %9s %9s" % ("", "time (us)", "(GB/s)", "(GB/s)", "time (us)", "(GB/s)", "(GB/s)"))
for b in sorted(set(nt) | set(cvm)):
    t = nt.get(b, (None, None, None))
    c = cvm.get(b, (None, None, None))
    print("%-9s | %12s %9s %9s | %12s %9s %9s" % (size(b), num(t[0], "%.1f"), num(t[1], "%.2f"), num(t[2], "%.2f"),
                                                 num(c[0], "%.1f"), num(c[1], "%.2f"), num(c[2], "%.2f")))
g = 1 << 30
if g in nt and g in cvm and cvm[g][0]:
    t, c = nt[g], cvm[g]
    line = "at 1 GiB: cvm probe time / nccl-tests time = %.2f" % (c[0] / t[0])
    if t[2] and c[2]:
        line += ", busbw cvm / nccl-tests = %.2f" % (c[2] / t[2])
    print(line)
else:
    print("at 1 GiB: no ratio (%s)" % ("the probe measured no 1 GiB all-reduce" if g in nt
                                       else "nccl-tests printed no 1 GiB row"))
PY

say "summary (reports in $OUT_DIR)"
for line in "${SUMMARY[@]}"; do echo "$line"; done
! printf '%s\n' "${SUMMARY[@]}" | grep -q '^FAILED'
