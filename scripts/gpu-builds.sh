#!/usr/bin/env bash
# On the GPU machine: what a build sees is the selection (issue 21), with the real libraries there:
# CUDA 13.0 in /usr/local/cuda, cuDNN 9.19 from the torch wheel selected, NVIDIA's apt cuDNN 9.14
# headers in /usr/include (a default include folder) and libraries in /usr/lib/x86_64-linux-gnu.
#   1. Without cvm: nvcc conv.cu -lcudnn compiles against the apt 9.14 header, and the program
#      loads whichever libcudnn the loader finds (the mismatch users meet).
#   2. Through cvm's shim (`cvm use 13.0+9.19`): the same command compiles against 9.19's header,
#      links and loads 9.19 (header and library releases equal), and the convolution runs.
#   3. CMake (CXX first, find_package(CUDAToolkit)) under `cvm exec`, where cmake is installed.
#   4. torch.utils.cpp_extension.load_inline building a CUDA extension that includes cudnn.h,
#      against cvm's CUDA_HOME (the merged view), under `cvm exec`: it loads into PyTorch, runs a
#      kernel, and reports the header's and the library's cuDNN versions.
#   5. cvm doctor in a shell that is not activated: the cudnn.h a build would see is 9.14's.
#
#   scripts/gpu-builds.sh BUILD_DIR      (a Release build folder with bin/cvm and bin/cvm-shim)
#
# Variables as scripts/gpu-compat.sh: CUDA_DIR, PYTHON, WHEEL_CUDNN, OUT. The last lines are the
# summary: one `ok:` / `FAILED:` / `note:` line per check.
set -uo pipefail

BUILD=${1:?give the Release build folder (with bin/cvm and bin/cvm-shim)}
BIN=$BUILD
[ -x "$BIN/cvm" ] || BIN=$BUILD/bin
[ -x "$BIN/cvm" ] && [ -x "$BIN/cvm-shim" ] || { echo "gpu-builds: no cvm and cvm-shim in $BUILD or $BUILD/bin" >&2; exit 2; }
BIN=$(cd "$BIN" && pwd)
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
OUT_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -x "$CUDA_DIR/bin/nvcc" ] || { echo "gpu-builds: no nvcc in $CUDA_DIR; set CUDA_DIR" >&2; exit 2; }
[ -x "$PYTHON" ] || { echo "gpu-builds: no Python at $PYTHON; set PYTHON" >&2; exit 2; }
if [ -z "${WHEEL_CUDNN:-}" ]; then
    WHEEL_CUDNN=$("$PYTHON" -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else list(nvidia.cudnn.__path__)[0])' 2>/dev/null)
fi
[ -f "${WHEEL_CUDNN:-}/lib/libcudnn.so.9" ] || { echo "gpu-builds: no libcudnn.so.9 in '${WHEEL_CUDNN:-}/lib'; set WHEEL_CUDNN" >&2; exit 2; }

export CVM_ROOT=$WORK/root CVM_SHIM_BINARY=$BIN/cvm-shim CVM_PYTHON=$PYTHON COLUMNS=${COLUMNS:-110}
unset LD_LIBRARY_PATH LIBRARY_PATH CPATH CVM_VERSION VIRTUAL_ENV CUDA_HOME CUDA_PATH CUDACXX || true
SUMMARY=()
say() { printf '\n== %s\n' "$*"; }
ok() { SUMMARY+=("ok: $*"); }
bad() { SUMMARY+=("FAILED: $*"); }
note() { SUMMARY+=("note: $*"); }

say "machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$CUDA_DIR/bin/nvcc" --version | tail -1
grep -h -E '#define CUDNN_(MAJOR|MINOR|PATCHLEVEL)' /usr/include/cudnn_version.h /usr/include/x86_64-linux-gnu/cudnn_version_v9.h 2>/dev/null | head -3
echo "wheel cuDNN: $WHEEL_CUDNN"

PROJ=$WORK/project
mkdir -p "$PROJ"
cat > "$PROJ/conv.cu" <<'EOS'
#include <cstdio>
#include <cudnn.h>
int main() {
    cudnnHandle_t h;
    cudnnStatus_t s = cudnnCreate(&h);
    cudnnTensorDescriptor_t x;
    cudnnCreateTensorDescriptor(&x);
    cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 4, 4);
    std::printf("header=%d library=%zu create=%s\n", CUDNN_VERSION, cudnnGetVersion(), cudnnGetErrorString(s));
    cudnnDestroyTensorDescriptor(x);
    if (s == CUDNN_STATUS_SUCCESS) cudnnDestroy(h);
    return s == CUDNN_STATUS_SUCCESS ? 0 : 1;
}
EOS

say "1. without cvm: $CUDA_DIR/bin/nvcc conv.cu -lcudnn"
if (cd "$PROJ" && "$CUDA_DIR/bin/nvcc" -o conv-plain conv.cu -lcudnn) > "$OUT_DIR/plain.log" 2>&1; then
    out=$(LD_LIBRARY_PATH=$WHEEL_CUDNN/lib "$PROJ/conv-plain" 2>&1)
    echo "$out" | tee "$OUT_DIR/plain.txt"
    note "without cvm (the wheel's folder on LD_LIBRARY_PATH at run time): $out"
else
    tail -3 "$OUT_DIR/plain.log"
    note "without cvm nvcc -lcudnn does not even link: $(tail -1 "$OUT_DIR/plain.log")"
fi

say "2. through cvm's shim"
"$BIN/cvm" import "$CUDA_DIR" 2>&1 | tail -2
"$BIN/cvm" import --cuda 13 "$WHEEL_CUDNN" 2>&1 | tail -2
"$BIN/cvm" list
TK=$("$BIN/cvm" list --json | "$PYTHON" -c 'import json,sys; print([e["id"] for e in json.load(sys.stdin)["cuda"]][0])')
DNN=$("$BIN/cvm" list --json | "$PYTHON" -c 'import json,sys; print([e["id"] for e in json.load(sys.stdin)["cudnn"] if "9.19" in e["id"] and "site-packages" in e["path"]][0])')
(cd "$PROJ" && "$BIN/cvm" use "$TK+${DNN%%-cuda*}") 2>&1 | tail -2
export PATH=$CVM_ROOT/shims:$BIN:$PATH
if (cd "$PROJ" && nvcc -o conv conv.cu -lcudnn) > "$OUT_DIR/shim.log" 2>&1; then
    out=$(cd "$PROJ" && "$BIN/cvm" exec -- ./conv 2>&1)
    echo "$out" | tee "$OUT_DIR/shim.txt"
    [[ $out == "header=91900 library=91900 create=CUDNN_STATUS_SUCCESS" ]] && ok "shim: nvcc conv.cu -lcudnn: $out" ||
        bad "shim: nvcc conv.cu -lcudnn gave: $out"
else
    cat "$OUT_DIR/shim.log"
    bad "shim: nvcc conv.cu -lcudnn failed: $(tail -1 "$OUT_DIR/shim.log")"
fi

say "3. CMake under cvm exec"
if command -v cmake > /dev/null; then
    mkdir -p "$PROJ/cm"
    cat > "$PROJ/cm/CMakeLists.txt" <<'EOS'
cmake_minimum_required(VERSION 3.18)
project(conv LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
find_library(CUDNN_LIB cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} NO_DEFAULT_PATH REQUIRED)
message(STATUS "nvcc=${CMAKE_CUDA_COMPILER} cudnn=${CUDNN_LIB}")
add_executable(conv ../conv.cu)
target_link_libraries(conv PRIVATE ${CUDNN_LIB})
EOS
    if (cd "$PROJ" && "$BIN/cvm" exec -- cmake -S cm -B cmb && "$BIN/cvm" exec -- cmake --build cmb) > "$OUT_DIR/cmake.log" 2>&1; then
        out=$(cd "$PROJ" && "$BIN/cvm" exec -- ./cmb/conv 2>&1)
        grep 'nvcc=' "$OUT_DIR/cmake.log"
        [[ $out == "header=91900 library=91900 create=CUDNN_STATUS_SUCCESS" ]] && ok "cmake: $out" || bad "cmake gave: $out"
    else
        tail -20 "$OUT_DIR/cmake.log"
        bad "cmake under cvm exec failed"
    fi
else
    note "no cmake on this machine: CMake is checked by tests/integration/build_systems.sh"
fi

say "4. torch.utils.cpp_extension.load_inline against cvm's CUDA_HOME"
cat > "$WORK/ext.py" <<'EOS'
import os, time, torch
from torch.utils.cpp_extension import load_inline
cpp = "std::vector<int64_t> versions(); torch::Tensor add_one(torch::Tensor x);"
cuda = r'''
#include <cudnn.h>
#include <torch/extension.h>
__global__ void k(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
std::vector<int64_t> versions() { return {CUDNN_VERSION, (int64_t)cudnnGetVersion()}; }
torch::Tensor add_one(torch::Tensor x) { auto y = x.clone(); k<<<(y.numel() + 255) / 256, 256>>>(y.data_ptr<float>(), y.numel()); return y; }
'''
t = time.time()
m = load_inline(name="cvm_ext", cpp_sources=cpp, cuda_sources=cuda, functions=["versions", "add_one"],
                extra_ldflags=["-lcudnn"], build_directory=os.environ["EXT_DIR"], verbose=False)
x = torch.arange(4, dtype=torch.float32, device="cuda")
y = m.add_one(x)
print("CUDA_HOME=%s header,library=%s add_one=%s build=%.1fs torch_cudnn=%s" % (
    os.environ.get("CUDA_HOME"), m.versions(), y.tolist(), time.time() - t, torch.backends.cudnn.version()))
EOS
mkdir -p "$WORK/ext"
if (cd "$PROJ" && EXT_DIR=$WORK/ext "$BIN/cvm" exec -- "$PYTHON" "$WORK/ext.py") > "$OUT_DIR/ext.log" 2>&1; then
    out=$(tail -1 "$OUT_DIR/ext.log")
    echo "$out"
    [[ $out == *"header,library=[91900, 91900] add_one=[1.0, 2.0, 3.0, 4.0]"* && $out == *"/views/"* ]] &&
        ok "cpp_extension: $out" || bad "cpp_extension gave: $out"
else
    tail -30 "$OUT_DIR/ext.log"
    bad "cpp_extension build failed: $(tail -1 "$OUT_DIR/ext.log")"
fi

say "5. cvm doctor in a shell that is not activated"
(cd "$PROJ" && env PATH="$BIN:$CUDA_DIR/bin:/usr/bin:/bin" "$BIN/cvm" doctor --json > "$OUT_DIR/doctor.json" 2> /dev/null)
msg=$("$PYTHON" -c 'import json,sys; d=json.load(open(sys.argv[1])); print([f["message"] for f in d["findings"] if f["code"]=="cudnn-header-elsewhere"])' "$OUT_DIR/doctor.json")
echo "$msg"
[[ $msg == *"9.14"* ]] && ok "doctor names the cudnn.h a build here would see: $msg" || note "doctor's header finding: $msg"

say "summary"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUT_DIR/summary.txt"
