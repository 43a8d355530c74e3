#!/usr/bin/env bash
# On the GPU machine: issue 14's checks against real GPUs and real libraries, with the output to
# report.
#   1. GPU architectures: nvidia-smi's compute capabilities, `cvm probe`'s devices, the toolkit's
#      `nvcc --list-gpu-arch` against registry/gpu_archs.toml, PyTorch's get_arch_list(), and
#      `cvm doctor` with CUDA 13.0 (nothing to say) and with a stand-in CUDA 11.2 toolkit (a GPU
#      newer than its last architecture: gpu-arch-jit).
#   2. Sub-library truth: a folder holding the torch wheel's libcudnn.so.9 (and its other
#      sub-libraries) with libcudnn_engines_*.so.9 copied from the system's cuDNN package (the
#      shape of PyTorch issue 188892). `cvm doctor` must name it sublibraries-mixed, every file with
#      its release and owner; `cvm probe` reports what the convolution does with it
#      (sublibrary_mismatch when cuDNN refuses the set). The same with the wheel's own folder has
#      nothing to say.
#
#   scripts/gpu-compat.sh BUILD_DIR     (a Release build folder: BUILD_DIR/bin/cvm, cvm-probe and
#                                        cvm-shim; or the folder holding those three)
#
# Variables: CUDA_DIR (default /usr/local/cuda), PYTHON (default /opt/torch/.venv/bin/python),
# WHEEL_CUDNN (the wheel's nvidia/cudnn folder; default: found in PYTHON's site-packages),
# SYSTEM_LIB (default /usr/lib/x86_64-linux-gnu), OUT (folder for the reports; default a temporary
# one). Needs no network. The last lines are a summary: one `ok:` / `FAILED:` / `note:` line per check.
set -uo pipefail

BUILD=${1:?give the Release build folder (with bin/cvm, bin/cvm-probe, bin/cvm-shim)}
BIN=$BUILD
[ -x "$BIN/cvm" ] || BIN=$BUILD/bin
[ -x "$BIN/cvm" ] && [ -x "$BIN/cvm-probe" ] || { echo "gpu-compat: no cvm and cvm-probe in $BUILD or $BUILD/bin" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
SYSTEM_LIB=${SYSTEM_LIB:-/usr/lib/x86_64-linux-gnu}
OUT_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$CUDA_DIR/bin/nvcc" ] || { echo "gpu-compat: no nvcc in $CUDA_DIR; set CUDA_DIR" >&2; exit 2; }
[ -x "$PYTHON" ] || { echo "gpu-compat: no Python at $PYTHON; set PYTHON" >&2; exit 2; }
VENV=$(cd "$(dirname "$PYTHON")/.." && pwd)
if [ -z "${WHEEL_CUDNN:-}" ]; then
    WHEEL_CUDNN=$("$PYTHON" -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else list(nvidia.cudnn.__path__)[0])' 2>/dev/null)
fi
[ -f "${WHEEL_CUDNN:-}/lib/libcudnn.so.9" ] || { echo "gpu-compat: no libcudnn.so.9 in '${WHEEL_CUDNN:-}/lib'; set WHEEL_CUDNN" >&2; exit 2; }

export CVM_ROOT=$WORK/root CVM_SHIM_BINARY=$BIN/cvm-shim CVM_PYTHON=$PYTHON COLUMNS=${COLUMNS:-110}
export PATH=$BIN:$PATH
unset LD_LIBRARY_PATH CVM_VERSION VIRTUAL_ENV || true
SUMMARY=()
say() { printf '\n== %s\n' "$*"; }
ok() { SUMMARY+=("ok: $*"); }
bad() { SUMMARY+=("FAILED: $*"); }
note() { SUMMARY+=("note: $*"); }
# json FILE EXPR: a Python expression over the document d.
json() { "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); r = eval(sys.argv[2]); print(r if isinstance(r, str) else json.dumps(r))' "$@"; }

say "machine"
cvm --version
nvidia-smi --query-gpu=index,name,compute_cap,driver_version --format=csv 2>&1 | tee "$OUT_DIR/smi.txt"
"$CUDA_DIR/bin/nvcc" --version | tail -2
ls -l "$SYSTEM_LIB"/libcudnn*.so.9* 2>&1 | head -20
dpkg-query -W -f='${Package} ${Version}\n' 'libcudnn9*' 2>/dev/null
ls -d "$(dirname "$WHEEL_CUDNN")"/../nvidia_cudnn*.dist-info 2>/dev/null
"$PYTHON" - <<'PY' 2>&1 | tee "$OUT_DIR/torch.txt"
import torch
print("torch", torch.__version__, "built for CUDA", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
print("get_arch_list", torch.cuda.get_arch_list())
for i in range(torch.cuda.device_count()):
    print("device", i, torch.cuda.get_device_name(i), "capability", torch.cuda.get_device_capability(i))
PY

say "selection: CUDA 13 from $CUDA_DIR and the wheel's cuDNN $WHEEL_CUDNN (CVM_ROOT $CVM_ROOT)"
# id_of KIND: the id of the first entry of that kind `cvm import --json` names.
id_of() { "$PYTHON" -c 'import json, sys; print(([e["id"] for e in json.load(sys.stdin)["imported"] if e["kind"] == sys.argv[1]] + [""])[0])' "$1" 2>/dev/null; }
cuda_id=$(cvm import --json "$CUDA_DIR" | id_of cuda)
cudnn_id=$(cvm import --json "$WHEEL_CUDNN" | id_of cudnn)
cvm list 2>&1
echo "toolkit $cuda_id, cuDNN $cudnn_id"
[ -n "$cuda_id" ] && [ -n "$cudnn_id" ] || { echo "gpu-compat: the imports of $CUDA_DIR and $WHEEL_CUDNN gave no toolkit or no cuDNN" >&2; exit 1; }

# ---- 1. GPU architectures ----
say "nvcc --list-gpu-arch against registry/gpu_archs.toml"
"$CUDA_DIR/bin/nvcc" --list-gpu-arch | tr '\n' ' ' | tee "$OUT_DIR/list-gpu-arch.txt"
echo
listed=$(grep -o 'compute_[0-9]*' "$OUT_DIR/list-gpu-arch.txt" | sed 's/compute_//' | sort -n | tr '\n' ' ' | sed 's/ $//')
mm=$(echo "$cuda_id" | cut -d. -f1,2)
row=$("$PYTHON" - "$SOURCE_DIR/registry/gpu_archs.toml" "$mm" <<'PY'
import re, sys
text, want = open(sys.argv[1]).read(), sys.argv[2]
for block in text.split("[[toolkit]]")[1:]:
    if re.search(r'^cuda = "%s"' % re.escape(want), block, re.M):
        print(" ".join(re.search(r"^compute = \[([^\]]*)\]", block, re.M).group(1).replace(",", " ").split()))
PY
)
echo "nvcc: $listed"
echo "registry ($mm): $row"
if [ -n "$listed" ] && [ "$listed" = "$row" ]; then ok "registry/gpu_archs.toml's $mm row is what nvcc --list-gpu-arch prints"; else bad "registry/gpu_archs.toml's $mm row ($row) differs from nvcc --list-gpu-arch ($listed)"; fi

P=$WORK/project
mkdir -p "$P" && cd "$P"
say "cvm probe (CUDA $cuda_id + cuDNN $cudnn_id): every GPU's compute capability"
cvm use "$cuda_id+$cudnn_id" 2>&1
cvm probe 2>&1 | tee "$OUT_DIR/probe-clean.txt"
cvm probe --json >"$OUT_DIR/probe-clean.json" 2>"$OUT_DIR/probe-clean.err"
echo "probe rc=$?"
devices=$(json "$OUT_DIR/probe-clean.json" '", ".join(x["name"] + " " + str(x.get("compute_capability")) for x in d.get("devices", []))' 2>/dev/null)
smi_caps=$(tail -n +2 "$OUT_DIR/smi.txt" | awk -F', ' '{print $3}' | tr '\n' ' ')
echo "probe devices: $devices; nvidia-smi: $smi_caps"
if [ -n "$devices" ]; then ok "cvm probe reports the GPUs: $devices (nvidia-smi: $smi_caps)"; else bad "cvm probe --json has no devices ($(head -c 300 "$OUT_DIR/probe-clean.err"))"; fi

say "cvm doctor (CUDA $cuda_id + cuDNN $cudnn_id, PyTorch of $PYTHON): the GPUs against the toolkit, the cuDNN build and torch"
cvm doctor 2>&1 | tee "$OUT_DIR/doctor-clean.txt"
cvm doctor --json >"$OUT_DIR/doctor-clean.json" 2>/dev/null
codes=$(json "$OUT_DIR/doctor-clean.json" '" ".join(f["severity"] + ":" + f["code"] for f in d["findings"])')
echo "findings: $codes"
case " $codes " in *nothing-selected*|*selection-unresolved*) bad "doctor sees no selection of $cuda_id+$cudnn_id" ;; esac
case " $codes " in
*gpu-arch-*|*cudnn-arch-*|*torch-arch-*) bad "architecture findings with CUDA $cuda_id + cuDNN $cudnn_id and this torch: $codes" ;;
*) ok "no architecture finding for CUDA $cuda_id + cuDNN $cudnn_id + torch on these GPUs ($codes)" ;;
esac
case " $codes " in *sublibraries-mixed*) bad "the wheel's own cuDNN folder is called mixed" ;; *) ok "the wheel's own cuDNN folder is one release (no sublibraries-mixed)" ;; esac

say "a stand-in CUDA 11.2 toolkit (version.json and cuda.h only) selected on these GPUs"
T=$WORK/cuda-11.2
mkdir -p "$T/bin" "$T/include" "$T/lib64"
printf '{"cuda":{"name":"CUDA SDK","version":"11.2.2"}}\n' >"$T/version.json"
printf '#define CUDA_VERSION 11020\n' >"$T/include/cuda.h"
printf '#!/bin/sh\necho "stand-in nvcc 11.2"\n' >"$T/bin/nvcc" && chmod +x "$T/bin/nvcc"
: >"$T/lib64/libcudart.so.11.0"
cvm import "$T" 2>&1
cvm use 11.2 2>&1
cvm doctor 2>&1 | tee "$OUT_DIR/doctor-11.2.txt"
cvm doctor --json >"$OUT_DIR/doctor-11.2.json" 2>/dev/null
jit=$(json "$OUT_DIR/doctor-11.2.json" '"\n".join(f["message"] for f in d["findings"] if f["code"] in ("gpu-arch-jit", "gpu-arch-unsupported"))')
echo "$jit"
case $jit in
*"CUDA 11.2"*"cannot build for sm_"*) ok "gpu-arch: $(echo "$jit" | head -1)" ;;
*) bad "no gpu-arch-jit finding for CUDA 11.2 on these GPUs (findings: $(json "$OUT_DIR/doctor-11.2.json" '" ".join(f["code"] for f in d["findings"])'))" ;;
esac

# ---- 2. the mixed cuDNN folder ----
M=$WORK/mixed
mkdir -p "$M"
say "the mixed folder $M: the wheel's libcudnn*.so.9, libcudnn_engines_*.so.9 from $SYSTEM_LIB"
for f in "$WHEEL_CUDNN"/lib/libcudnn*.so.9; do cp -L "$f" "$M/"; done
engines=0
for f in "$SYSTEM_LIB"/libcudnn_engines_*.so.9; do
    [ -e "$f" ] || continue
    cp -L "$f" "$M/$(basename "$f")" && engines=$((engines + 1))
    echo "$(basename "$f") <- $(readlink -f "$f")"
done
[ "$engines" -gt 0 ] || { bad "no libcudnn_engines_*.so.9 in $SYSTEM_LIB to mix in"; }
ls -l "$M"
cvm use "$cuda_id" 2>&1 # the toolkit only: the folder below gives cuDNN
export LD_LIBRARY_PATH=$M VIRTUAL_ENV=$VENV

say "cvm doctor with LD_LIBRARY_PATH=$M"
cvm doctor 2>&1 | tee "$OUT_DIR/doctor-mixed.txt"
cvm doctor --json >"$OUT_DIR/doctor-mixed.json" 2>/dev/null
echo "doctor rc=$?"
mixed=$(json "$OUT_DIR/doctor-mixed.json" '"\n".join(f["message"] + "\n  fix: " + f["fix"] for f in d["findings"] if f["code"] == "sublibraries-mixed")')
echo "$mixed"
if [ -z "$mixed" ]; then
    bad "cvm doctor did not flag the mixed folder (findings: $(json "$OUT_DIR/doctor-mixed.json" '" ".join(f["code"] for f in d["findings"])'))"
else
    missing=
    for f in "$M"/libcudnn_engines_*.so.9; do
        n=$(basename "$f")
        echo "$mixed" | grep -q "$n 9\.1[0-8]" || missing="$missing $n"
    done
    echo "$mixed" | grep -q "libcudnn.so.9 9\.19" || missing="$missing libcudnn.so.9"
    if [ -z "$missing" ]; then ok "cvm doctor: sublibraries-mixed names the engines files with the system's release and libcudnn.so.9 with 9.19"
    else bad "cvm doctor's sublibraries-mixed does not give the right release for:$missing"; fi
    case $mixed in *ld.so.conf*|*"from PATH"*) bad "the fix mentions a system folder" ;; esac
fi

# cvm probe runs with the selection's environment, which drops a folder of other CUDA libraries
# from LD_LIBRARY_PATH: the mixed set is imported as a cuDNN of its own and selected.
unset LD_LIBRARY_PATH
MI=$WORK/mixed-import
mkdir -p "$MI/lib" && cp -a "$M"/. "$MI/lib/" && cp -r "$WHEEL_CUDNN/include" "$MI/"
say "the mixed folder imported as a cuDNN ($MI: its lib/, the wheel's include/) and selected with CUDA 13"
mixed_id=$(cvm import --json "$MI" | id_of cudnn)
cvm use "$cuda_id+$mixed_id" 2>&1
cvm doctor --json >"$OUT_DIR/doctor-mixed-selected.json" 2>/dev/null
codes=$(json "$OUT_DIR/doctor-mixed-selected.json" '" ".join(f["code"] for f in d["findings"])')
case " $codes " in
*sublibraries-mixed*) ok "cvm doctor flags the selected mixed cuDNN $mixed_id (sublibraries-mixed)" ;;
*) bad "cvm doctor did not flag the selected mixed cuDNN $mixed_id (findings: $codes)" ;;
esac

say "cvm probe with $cuda_id+$mixed_id"
cvm probe 2>&1 | tee "$OUT_DIR/probe-mixed.txt"
cvm probe --json >"$OUT_DIR/probe-mixed.json" 2>/dev/null
probe_rc=$?
echo "probe rc=$probe_rc"
kinds=$(json "$OUT_DIR/probe-mixed.json" '" ".join(p["kind"] for p in d.get("problems", []))' 2>/dev/null)
echo "problems: $kinds"
case " $kinds " in
*sublibrary_mismatch*) ok "cvm probe: sublibrary_mismatch: $(json "$OUT_DIR/probe-mixed.json" '[p["message"] for p in d["problems"] if p["kind"] == "sublibrary_mismatch"][0]' | head -c 600)" ;;
*) if [ "$probe_rc" = 0 ]; then note "cvm probe: the convolution ran with the mixed folder (cuDNN accepted it here); doctor's finding stands on the files"
   else bad "cvm probe failed without naming sublibrary_mismatch: $kinds"; fi ;;
esac

say "PyTorch with the mixed folder first (LD_PRELOAD of its libcudnn.so.9; informational)"
LD_PRELOAD=$M/libcudnn.so.9 "$PYTHON" - <<'PY' 2>&1 | tail -5 | tee "$OUT_DIR/torch-mixed.txt"
import torch, torch.nn.functional as F
x = torch.randn(1, 3, 32, 32, device="cuda"); w = torch.randn(8, 3, 3, 3, device="cuda")
print("cudnn", torch.backends.cudnn.version(), "conv2d", tuple(F.conv2d(x, w, padding=1).shape))
PY
unset LD_LIBRARY_PATH VIRTUAL_ENV

say "summary (reports in $OUT_DIR)"
status=0
for line in "${SUMMARY[@]}"; do
    echo "$line"
    case $line in FAILED:*) status=1 ;; esac
done
exit $status
