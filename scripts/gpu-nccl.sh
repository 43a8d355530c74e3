#!/usr/bin/env bash
# On the GPU machine: issue 24's figures, with the output to report.
#   1. `cvm probe` (CUDA 13 and the torch wheel's cuDNN selected) against the PyTorch check
#      (`import torch; torch.backends.cudnn.version(); F.conv2d(...)`), interleaved in one run,
#      RUNS times each after one warm-up: median wall time, peak memory, the ratio. Targets: the
#      probe at most 0.45 s (median) and at least 8x faster than the check. Also --benchmark.
#   2. The two NCCLs of the machine: NVIDIA's apt libnccl2 in SYSTEM_LIB and the torch wheel's
#      nvidia/nccl: both imported (their releases read from the libraries), and `cvm doctor`'s
#      NCCL findings for a program started here and for PyTorch.
#   3. The all-reduce: `cvm probe --nccl` with the wheel's NCCL selected, over every visible GPU
#      (one GPU: one checked one-rank all-reduce): per size the time, algbw and busbw, NCCL's
#      version and the topology. NVLink multicast stays off (NCCL_NVLS_ENABLE=0) unless set.
#
#   scripts/gpu-nccl.sh BUILD_DIR     (a Release build folder: BUILD_DIR/bin/cvm, cvm-probe and
#                                      cvm-shim; or the folder holding those three)
#
# Variables: CUDA_DIR (default /usr/local/cuda), PYTHON (default /opt/torch/.venv/bin/python),
# SYSTEM_LIB (default /usr/lib/x86_64-linux-gnu), RUNS (default 5), OUT (folder for the reports;
# default a temporary one). Needs no network. Works on one GPU and on several. The last lines are
# a summary: one `ok:` / `FAILED:` / `note:` line per check, and the figures.
set -uo pipefail

BUILD=${1:?give the Release build folder (with bin/cvm, bin/cvm-probe, bin/cvm-shim)}
BIN=$BUILD
[ -x "$BIN/cvm" ] || BIN=$BUILD/bin
[ -x "$BIN/cvm" ] && [ -x "$BIN/cvm-probe" ] || { echo "gpu-nccl: no cvm and cvm-probe in $BUILD or $BUILD/bin" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
SYSTEM_LIB=${SYSTEM_LIB:-/usr/lib/x86_64-linux-gnu}
RUNS=${RUNS:-5}
OUT_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$CUDA_DIR/bin/nvcc" ] || { echo "gpu-nccl: no nvcc in $CUDA_DIR; set CUDA_DIR" >&2; exit 2; }
[ -x "$PYTHON" ] || { echo "gpu-nccl: no Python at $PYTHON; set PYTHON" >&2; exit 2; }
wheel_dir() { # MODULE: the folder of the wheel's nvidia/<MODULE>
    "$PYTHON" -c 'import importlib, sys; m = importlib.import_module("nvidia." + sys.argv[1]); print(list(m.__path__)[0])' "$1" 2>/dev/null
}
WHEEL_CUDNN=${WHEEL_CUDNN:-$(wheel_dir cudnn)}
WHEEL_NCCL=${WHEEL_NCCL:-$(wheel_dir nccl)}
[ -f "$WHEEL_CUDNN/lib/libcudnn.so.9" ] || { echo "gpu-nccl: no libcudnn.so.9 in '$WHEEL_CUDNN/lib'; set WHEEL_CUDNN" >&2; exit 2; }
[ -f "$WHEEL_NCCL/lib/libnccl.so.2" ] || { echo "gpu-nccl: no libnccl.so.2 in '$WHEEL_NCCL/lib'; set WHEEL_NCCL" >&2; exit 2; }

export CVM_ROOT=$WORK/root CVM_SHIM_BINARY=$BIN/cvm-shim CVM_PYTHON=$PYTHON COLUMNS=${COLUMNS:-110}
# The registry of this checkout: a carried build folder's compiled-in source path is not here.
export CVM_REGISTRY_DIR=${CVM_REGISTRY_DIR:-$SOURCE_DIR/registry}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export PATH=$BIN:$PATH
unset LD_LIBRARY_PATH CVM_VERSION VIRTUAL_ENV CUDA_MODULE_LOADING || true
SUMMARY=()
FIGURES=()
say() { printf '\n== %s\n' "$*"; }
ok() { SUMMARY+=("ok: $*"); }
bad() { SUMMARY+=("FAILED: $*"); }
note() { SUMMARY+=("note: $*"); }
# json FILE EXPR: a Python expression over the document d.
json() { "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); r = eval(sys.argv[2]); print(r if isinstance(r, str) else json.dumps(r))' "$@"; }
# id_of KIND: the first id of that kind `cvm import --json` names.
id_of() { "$PYTHON" -c 'import json, sys; print(([e["id"] for e in json.load(sys.stdin)["imported"] if e["kind"] == sys.argv[1]] + [""])[0])' "$1" 2>/dev/null; }

say "machine"
cvm --version
nvidia-smi --query-gpu=index,name,compute_cap,driver_version,pci.bus_id --format=csv 2>&1 | tee "$OUT_DIR/smi.txt"
nvidia-smi topo -m 2>&1 | tee "$OUT_DIR/topo.txt"
GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
df -h /dev/shm | tail -1
ls -l "$SYSTEM_LIB"/libnccl.so* 2>&1
dpkg-query -W -f='${Package} ${Version}\n' 'libnccl*' 2>/dev/null
ls -d "$WHEEL_NCCL"/../../nvidia_nccl*.dist-info 2>/dev/null
"$PYTHON" - <<'PY' 2>&1 | tee "$OUT_DIR/torch.txt"
import torch
print("torch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version(),
      "NCCL", torch.cuda.nccl.version(), "GPUs", torch.cuda.device_count())
PY

say "imports (CVM_ROOT $CVM_ROOT)"
cuda_id=$(cvm import --json "$CUDA_DIR" | id_of cuda)
cudnn_id=$(cvm import --json "$WHEEL_CUDNN" | id_of cudnn)
wheel_nccl_id=$(cvm import --json "$WHEEL_NCCL" | id_of nccl)
apt_nccl_id=$(cvm import --json "$(dirname "$(dirname "$SYSTEM_LIB")")" | id_of nccl)
cvm list 2>&1 | tee "$OUT_DIR/list.txt"
echo "toolkit $cuda_id, cuDNN $cudnn_id, wheel NCCL $wheel_nccl_id, apt NCCL $apt_nccl_id"
[ -n "$cuda_id" ] && [ -n "$cudnn_id" ] || { echo "gpu-nccl: the imports gave no toolkit or no cuDNN" >&2; exit 1; }
[ -n "$wheel_nccl_id" ] && ok "the wheel's NCCL imported as $wheel_nccl_id (release read from its library)" ||
    bad "the wheel's NCCL $WHEEL_NCCL was not imported"
[ -n "$apt_nccl_id" ] && ok "apt's NCCL imported as $apt_nccl_id" || note "no NCCL imported from $SYSTEM_LIB"
cudnn_version=${cudnn_id%%-cuda*}
SPEC="${cuda_id}+${cudnn_version}"

# ---- 1. the probe against the PyTorch check ----
say "1. cvm probe ($SPEC) against the PyTorch check, $RUNS runs each, interleaved"
cvm use --global "$SPEC" >/dev/null 2>&1 || { echo "gpu-nccl: cvm use --global $SPEC failed" >&2; exit 1; }
cvm probe | tee "$OUT_DIR/probe.txt"
probe_rc=${PIPESTATUS[0]}
[ "$probe_rc" = 0 ] && ok "cvm probe passes ($SPEC)" || bad "cvm probe exited $probe_rc"
cvm probe --json >"$OUT_DIR/probe.json"
echo "algorithm choice: $(json "$OUT_DIR/probe.json" 'd["algorithm_choice"]'), timings: $(json "$OUT_DIR/probe.json" 'd["timings_ms"]')"
cat >"$WORK/torch_check.py" <<'PY'
import torch, torch.nn.functional as F
v = torch.backends.cudnn.version()
x = torch.randn(1, 3, 32, 32, device='cuda')
w = torch.randn(8, 3, 3, 3, device='cuda')
y = F.conv2d(x, w, padding=1)
torch.cuda.synchronize()
print('torch', torch.__version__, 'cudnn', v, 'conv2d', tuple(y.shape))
PY
COMMANDS=$("$PYTHON" -c 'import json, sys; print(json.dumps([["cvm probe", [sys.argv[1], "probe"]], ["pytorch check", [sys.argv[2], sys.argv[3]]], ["cvm probe --benchmark", [sys.argv[1], "probe", "--benchmark"]]]))' \
    "$BIN/cvm" "$PYTHON" "$WORK/torch_check.py")
"$PYTHON" "$SOURCE_DIR/scripts/measure_runs.py" "$RUNS" "$COMMANDS" --interleave >"$OUT_DIR/timing.json" || bad "measuring failed"
"$PYTHON" - "$OUT_DIR/timing.json" <<'PY' | tee "$OUT_DIR/timing.txt"
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    walls = " ".join(f"{w:.3f}" for w in r["walls_s"])
    print(f"{r['name']:<24} median {r['median_s']:.3f} s  (runs: {walls})  peak {r['peak_rss_mib']:.0f} MiB  exit {r['exit_codes']}")
by = {r["name"]: r for r in rows}
p, t = by["cvm probe"], by["pytorch check"]
print(f"ratio: the PyTorch check takes {t['median_s'] / p['median_s']:.1f}x the probe's median wall time")
PY
probe_median=$(json "$OUT_DIR/timing.json" '"%.3f" % [r for r in d if r["name"] == "cvm probe"][0]["median_s"]')
torch_median=$(json "$OUT_DIR/timing.json" '"%.3f" % [r for r in d if r["name"] == "pytorch check"][0]["median_s"]')
ratio=$("$PYTHON" -c "print('%.1f' % ($torch_median / $probe_median))")
FIGURES+=("cvm probe median ${probe_median} s, PyTorch check median ${torch_median} s, ratio ${ratio}x ($RUNS runs each, interleaved)")
"$PYTHON" -c "import sys; sys.exit(0 if $probe_median <= 0.45 else 1)" && ok "probe median ${probe_median} s <= 0.45 s" ||
    bad "probe median ${probe_median} s > 0.45 s"
"$PYTHON" -c "import sys; sys.exit(0 if $ratio >= 8 else 1)" && ok "the PyTorch check is ${ratio}x the probe (>= 8x)" ||
    bad "the PyTorch check is only ${ratio}x the probe (< 8x)"
CUDA_MODULE_LOADING=EAGER cvm probe --json >"$OUT_DIR/probe-eager.json" 2>/dev/null
json "$OUT_DIR/probe-eager.json" 'any("CUDA_MODULE_LOADING=EAGER" in w for w in d["warnings"])' | grep -qx true &&
    ok "CUDA_MODULE_LOADING=EAGER is said by the probe" || bad "the probe says nothing of CUDA_MODULE_LOADING=EAGER"

# ---- 2. the two NCCLs ----
say "2. the two NCCLs: $SYSTEM_LIB and $WHEEL_NCCL, cvm doctor with $SPEC and PYTHON=$PYTHON"
cvm doctor --json >"$OUT_DIR/doctor.json" 2>"$OUT_DIR/doctor.err"
cvm doctor >"$OUT_DIR/doctor.txt" 2>&1
json "$OUT_DIR/doctor.json" '[(l["scenario"], l["path"], l["version"], l["mechanism"], l["shadowed"]) for l in d["libraries"] if l["family"] == "nccl"]'
json "$OUT_DIR/doctor.json" '"\n".join("%s %s: %s" % (f["severity"], f["code"], f["message"]) for f in d["findings"] if "nccl" in f["code"] or f["code"] == "shm-too-small")'
for code in nccl-two-versions framework-own-nccl; do
    if json "$OUT_DIR/doctor.json" "any(f['code'] == '$code' for f in d['findings'])" | grep -qx true; then
        ok "cvm doctor: $code"
    else
        bad "cvm doctor has no $code (apt's and the wheel's NCCL differ: $(ls "$SYSTEM_LIB"/libnccl.so.2.* 2>/dev/null | head -1) vs $WHEEL_NCCL)"
    fi
done
FIGURES+=("two NCCLs: $(json "$OUT_DIR/doctor.json" '"; ".join(f["message"] for f in d["findings"] if f["code"] == "nccl-two-versions")')")

# ---- 3. the all-reduce ----
NCCL_VERSION=${wheel_nccl_id%%-cuda*}
SPEC_NCCL="${SPEC}+nccl${NCCL_VERSION}"
say "3. cvm probe with $SPEC_NCCL over $GPUS GPU(s) (NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE)"
cvm use --global "$SPEC_NCCL" >/dev/null 2>&1 || bad "cvm use --global $SPEC_NCCL failed"
cvm probe | tee "$OUT_DIR/probe-nccl.txt"
nccl_rc=${PIPESTATUS[0]}
cvm probe --json >"$OUT_DIR/probe-nccl.json"
[ "$nccl_rc" = 0 ] && ok "cvm probe with NCCL passes (every rank's every sum exact)" || bad "cvm probe with NCCL exited $nccl_rc"
ranks=$(json "$OUT_DIR/probe-nccl.json" 'd["nccl"]["ranks"]')
[ "$ranks" = "$GPUS" ] && ok "one communicator over all $GPUS GPU(s)" || bad "the communicator has $ranks ranks, nvidia-smi lists $GPUS GPUs"
json "$OUT_DIR/probe-nccl.json" '"NCCL %s (%s), init %.0f ms, links: %s" % (d["nccl"]["version"]["text"], d["nccl"]["banner"], d["nccl"]["init_ms"], d["nccl"]["links"])'
FIGURES+=("all-reduce over $ranks GPU(s), NCCL $(json "$OUT_DIR/probe-nccl.json" 'd["nccl"]["version"]["text"]'): $(json "$OUT_DIR/probe-nccl.json" '", ".join("%d MiB %.1f us%s" % (s["bytes"] >> 20, s["time_us"], "" if s["busbw_gbs"] is None else " busbw %.1f GB/s" % s["busbw_gbs"]) for s in d["nccl"]["all_reduce"])')")
if [ "$ranks" = 1 ]; then
    json "$OUT_DIR/probe-nccl.json" 'd["nccl"]["note"]'
    note "one GPU: the all-reduce is checked, no link is measured; run again on several GPUs for the bandwidth"
fi
# The apt NCCL too, for its release and load (another CUDA build's shows in the warnings).
if [ -n "$apt_nccl_id" ]; then
    cvm probe --json "${cuda_id}+nccl${apt_nccl_id%%-cuda*}" >"$OUT_DIR/probe-apt-nccl.json" 2>/dev/null
    FIGURES+=("apt's NCCL through cvm probe: $(json "$OUT_DIR/probe-apt-nccl.json" '"%s from %s, ok=%s" % (d["nccl"]["version"]["text"], d["nccl"]["library"]["path"], d["ok"])')")
fi
cvm probe --json --benchmark >"$OUT_DIR/probe-nccl-benchmark.json" 2>/dev/null

say "summary (reports in $OUT_DIR)"
for line in "${SUMMARY[@]}"; do echo "$line"; done
for line in "${FIGURES[@]}"; do echo "figure: $line"; done
! printf '%s\n' "${SUMMARY[@]}" | grep -q '^FAILED'
