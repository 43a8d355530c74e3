#!/usr/bin/env bash
# On the GPU machine: what `cvm import --detect` finds there (NVIDIA's toolkit in /usr/local/cuda,
# the system's cuDNN packages, the torch environment's nvidia-* wheels), and whether a selection
# made of those works: `cvm doctor`, `cvm probe`, and PyTorch's cpp_extension building and running
# a CUDA kernel with CUDA_HOME from cvm, once with NVIDIA's toolkit and once with the same files
# laid out as a conda environment (an assembled root).
#
#   scripts/detect-gpu.sh BIN_DIR      (BIN_DIR holds cvm, cvm-shim, cvm-probe of a Release build)
#
# Variables: PYTHON (default /opt/torch/.venv/bin/python), OUT (folder for the reports).
set -uo pipefail
BIN=$(cd "${1:?give the folder with cvm}" && pwd)
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python}
CUDA_DIR=${CUDA_DIR:-/usr/local/cuda-13.0}
OUT_DIR=${OUT:-$(mktemp -d)}
mkdir -p "$OUT_DIR"
export CVM_ROOT=$(mktemp -d)/cvm CVM_PYTHON=$PYTHON CVM_SHIM_BINARY=$BIN/cvm-shim
export PATH=$BIN:$PATH
say() { printf '\n== %s\n' "$*"; }

say "cvm import --detect"
cvm import --detect 2>&1 | tee "$OUT_DIR/detect.txt"
say "cvm list"
cvm list 2>&1
cvm list --json >"$OUT_DIR/list.json"
say "assembled roots"
for r in "$CVM_ROOT"/cuda/*/root "$CVM_ROOT"/cudnn/*/root; do
    [ -d "$r" ] && { echo "$r:"; ls "$r" "$r"/lib* 2>/dev/null | head -20; }
done
say "a second --detect (everything already registered)"
cvm import --detect 2>&1

status=0
for want in 9.14 9.19; do
    dir=$(mktemp -d)
    say "selection 13.0+$want in $dir"
    (cd "$dir" && cvm use "13.0+$want" && cvm current && cvm doctor; echo "doctor rc=$?"; cvm probe; echo "probe rc=$?") 2>&1 |
        tee "$OUT_DIR/select-$want.txt"
    grep -q "probe rc=0" "$OUT_DIR/select-$want.txt" || status=1
done

say "PyTorch cpp_extension with CUDA_HOME from cvm (13.0+9.19)"
dir=$(mktemp -d)
cd "$dir" && cvm use 13.0+9.19 >/dev/null
cat >ext.py <<'PY'
import os, torch
from torch.utils import cpp_extension
print("CUDA_HOME", cpp_extension.CUDA_HOME, "CUDNN_PATH", os.environ.get("CUDNN_PATH"))
cuda = r'''
__global__ void twice(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }
torch::Tensor run(torch::Tensor x) { twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel()); return x; }
'''
m = cpp_extension.load_inline("cvm_twice", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=cuda,
                              functions=["run"], build_directory=os.getcwd(), verbose=False)
x = torch.arange(4, dtype=torch.float32, device="cuda")
print("kernel result", m.run(x).tolist())
PY
TORCH_CUDA_ARCH_LIST=9.0 cvm exec -- "$PYTHON" ext.py 2>&1 | tail -5 | tee "$OUT_DIR/cpp_extension.txt"
grep -q "kernel result \[0.0, 2.0, 4.0, 6.0\]" "$OUT_DIR/cpp_extension.txt" || status=1
grep -q "CUDA_HOME $CVM_ROOT/views/" "$OUT_DIR/cpp_extension.txt" || status=1
say "a conda-style prefix (nvcc among the environment's programs, targets/x86_64-linux, conda-meta) built from $CUDA_DIR"
# The GPU machine has no conda; its CUDA is laid out again the way conda's cuda-nvcc and
# cuda-cudart packages lay it out, so the assembled root is what nvcc and cpp_extension use.
P=$(mktemp -d)/env
mkdir -p "$P/bin" "$P/targets" "$P/conda-meta"
for f in "$CUDA_DIR"/bin/*; do ln -s "$f" "$P/bin/$(basename "$f")"; done
rm -f "$P/bin/nvcc.profile" && cp "$CUDA_DIR/bin/nvcc.profile" "$P/bin/nvcc.profile"
ln -s "$PYTHON" "$P/bin/python3"
ln -s "$CUDA_DIR/targets/x86_64-linux" "$P/targets/x86_64-linux"
ln -s "$CUDA_DIR/nvvm" "$P/nvvm"
# Component versions as conda names its records: nvcc's own, and the runtime's file name.
nvcc_v=$("$CUDA_DIR/bin/nvcc" --version | sed -n 's/.*release [0-9.]*, V\([0-9.]*\).*/\1/p')
cudart_v=$(ls "$CUDA_DIR"/targets/x86_64-linux/lib/libcudart.so.*.*.* | sed -n 's/.*libcudart\.so\.//p' | head -1)
[ -n "$nvcc_v" ] && [ -n "$cudart_v" ] || { echo "cannot read nvcc's and cudart's versions in $CUDA_DIR"; exit 1; }
echo '{}' > "$P/conda-meta/cuda-nvcc-$nvcc_v-0.json"
echo '{}' > "$P/conda-meta/cuda-cudart-$cudart_v-0.json"
cvm uninstall 13.0.2 >/dev/null 2>&1
cvm import "$P" 2>&1 | tee "$OUT_DIR/conda-import.txt"
cvm list cuda 2>&1
dir=$(mktemp -d)
cd "$dir" && cvm use 13.0+9.19 >/dev/null && cp "$OLDPWD/ext.py" .
TORCH_CUDA_ARCH_LIST=9.0 cvm exec -- "$PYTHON" ext.py 2>&1 | tail -5 | tee "$OUT_DIR/cpp_extension_conda.txt"
grep -q "kernel result \[0.0, 2.0, 4.0, 6.0\]" "$OUT_DIR/cpp_extension_conda.txt" || status=1
cvm probe 2>&1 | tail -2

say "status $status"
exit $status
