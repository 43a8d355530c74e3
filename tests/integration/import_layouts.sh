#!/usr/bin/env bash
# `cvm import` of toolkits in scattered layouts: Debian's nvidia-cuda-toolkit, a conda environment,
# pip wheels of CUDA 12 and 13 (built here), then the machine's real Debian CUDA 11.8 when present.
source "$(dirname "$0")/lib.sh"

# exe PATH [LINES...]: an executable script printing LINES.
exe() {
    local p=$1; shift
    mkdir -p "$(dirname "$p")"
    { echo '#!/bin/sh'; for l in "$@"; do echo "echo '$l'"; done; } > "$p"
    chmod +x "$p"
}
touchf() { for f; do mkdir -p "$(dirname "$f")"; : > "$f"; done; }

# --- Debian-style /usr under a temp folder ---
deb=$TEST_TMP/deb/usr
home=$deb/lib/nvidia-cuda-toolkit
exe "$home/bin/nvcc" "Cuda compilation tools, release 11.8, V11.8.89"
exe "$home/bin/gcc"; exe "$home/bin/g++"; exe "$home/bin/cicc"
exe "$deb/bin/nvcc"; exe "$deb/bin/ptxas"; exe "$deb/bin/cuobjdump"; exe "$deb/bin/ls"; exe "$deb/bin/python3"
printf '#define CUDA_VERSION 11080\n' > "$TEST_TMP/cuda.h"
mkdir -p "$deb/include/crt"; cp "$TEST_TMP/cuda.h" "$deb/include/cuda.h"
touchf "$deb/include/cuda_runtime.h" "$deb/include/stdlib.h" "$home/libdevice/libdevice.10.bc"
lib=$deb/lib/x86_64-linux-gnu
touchf "$lib/libcudart.so.11.8.89" "$lib/libcurl.so.4" "$lib/libcuda.so.1" "$lib/libcups.so.2"
mkdir -p "$deb/lib/cuda/include"

# --- conda environment ---
conda=$TEST_TMP/conda-env
touchf "$conda/conda-meta/cuda-nvcc-12.4.131-0.json" "$conda/conda-meta/cuda-cudart-12.4.127-0.json" \
    "$conda/conda-meta/python-3.12.3-0.json"
exe "$conda/bin/nvcc" "Cuda compilation tools, release 12.4, V12.4.131"; exe "$conda/bin/ptxas"
exe "$conda/bin/python3"; exe "$conda/bin/ls"
t=$conda/targets/x86_64-linux
mkdir -p "$t/include"; printf '#define CUDA_VERSION 12040\n' > "$t/include/cuda.h"
touchf "$t/include/cuda_runtime.h" "$t/lib/libcudart.so.12.4.127" "$conda/lib/libpython3.12.so" \
    "$conda/nvvm/libdevice/libdevice.10.bc"

# --- pip wheels, CUDA 12 (one folder per component) ---
site12=$TEST_TMP/venv12/lib/python3.12/site-packages
nv=$site12/nvidia
exe "$nv/cuda_nvcc/bin/nvcc" "Cuda compilation tools, release 12.6, V12.6.85"; exe "$nv/cuda_nvcc/bin/ptxas"
touchf "$nv/cuda_nvcc/nvvm/libdevice/libdevice.10.bc" "$nv/cuda_runtime/include/cuda_runtime.h" \
    "$nv/cuda_runtime/lib/libcudart.so.12" "$nv/cudnn/lib/libcudnn.so.9"
mkdir -p "$site12/nvidia_cuda_nvcc_cu12-12.6.85.dist-info" "$site12/nvidia_cuda_runtime_cu12-12.6.77.dist-info"
exe "$TEST_TMP/venv12/bin/python3"

# --- pip wheels, CUDA 13 (nvidia/cu13) ---
site13=$TEST_TMP/venv13/lib/python3.12/site-packages
cu13=$site13/nvidia/cu13
exe "$cu13/bin/nvcc" "Cuda compilation tools, release 13.0, V13.0.88"; exe "$cu13/bin/ptxas"
touchf "$cu13/include/cuda_runtime.h" "$cu13/lib/libcudart.so.13" "$cu13/nvvm/libdevice/libdevice.10.bc"
mkdir -p "$site13/nvidia_cuda_nvcc-13.0.88.dist-info" "$site13/nvidia_cuda_runtime-13.0.96.dist-info"

expect_rc 0 "$CVM" import "$deb"
assert_contains "$ERR" "imported cuda 11.8.0 from $home"
expect_rc 0 "$CVM" import "$deb/lib/cuda"
assert_contains "$ERR" "already registered"
expect_rc 0 "$CVM" import "$home"
assert_contains "$ERR" "already registered"
expect_rc 0 "$CVM" import "$conda"
assert_contains "$ERR" "imported cuda 12.4.1 from $conda"
expect_rc 0 "$CVM" import "$site12"
assert_contains "$ERR" "imported cuda 12.6.3 from $nv"
expect_rc 0 "$CVM" import "$site13/nvidia"
assert_contains "$ERR" "imported cuda 13.0.2 from $site13/nvidia"
expect_rc 0 "$CVM" list
for want in "11.8.0 .*$home" "12.4.1 .*$conda" "12.6.3 .*$nv" "13.0.2 .*$site13/nvidia"; do
    grep -Eq "$want" <<<"$ERR$OUT" || fail "cvm list lacks [$want]: $OUT"
done

for id in 11.8.0 12.4.1 12.6.3 13.0.2; do
    expect_rc 0 "$CVM" exec --version "$id" -- sh -c 'echo "$CUDA_HOME"; echo "${PATH%%:*}"; echo "${LD_LIBRARY_PATH%%:*}"'
    { read -r home_dir; read -r first_bin; read -r first_lib; } <<<"$OUT"
    assert_eq "$home_dir" "$CVM_ROOT/cuda/$id/root" "CUDA_HOME of $id"
    assert_eq "$first_bin" "$CVM_ROOT/cuda/$id/root/bin" "PATH of $id"
    assert_eq "$first_lib" "$CVM_ROOT/cuda/$id/root/lib64" "LD_LIBRARY_PATH of $id"
    [[ -x $home_dir/bin/nvcc ]] || fail "$id: no bin/nvcc"
    [[ -e $home_dir/include/cuda_runtime.h ]] || fail "$id: no include/cuda_runtime.h"
    [[ -e $home_dir/lib64/libcudart.so ]] || fail "$id: no lib64/libcudart.so"
    [[ -d $home_dir/nvvm/libdevice ]] || fail "$id: no nvvm/libdevice"
    for no in bin/gcc bin/g++ bin/ls bin/python3 lib64/libcurl.so.4 lib64/libcuda.so.1 lib64/libcudnn.so.9 \
        include/stdlib.h; do
        [[ ! -e $home_dir/$no ]] || fail "$id: $no is in the assembled root"
    done
    expect_rc 0 "$CVM" env --shell bash "$id"
    assert_not_contains "$OUT" "CUDA_HOME='/usr'"
done
# The assembled nvcc is the real one (Debian's /usr/bin/nvcc is a wrapper).
cd "$TEST_TMP" && expect_rc 0 "$CVM" use 11.8
expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$OUT" "V11.8.89"

expect_rc 0 "$CVM" rehash
shims=$(ls "$CVM_ROOT/shims")
for want in nvcc ptxas cuobjdump; do grep -qx "$want" <<<"$shims" || fail "no shim for $want: $shims"; done
for no in gcc g++ ls python3 cicc; do ! grep -qx -- "$no" <<<"$shims" || fail "a shim for $no: $shims"; done

# A toolkit nothing dates: one line naming the folder and what is missing; nothing registered.
bad=$TEST_TMP/undated
exe "$bad/bin/nvcc"; touchf "$bad/include/cuda.h"
expect_rc 0 "$CVM" list --json
before=$OUT
expect_rc 2 "$CVM" import "$bad"
assert_contains "$ERR" "$bad"
assert_contains "$ERR" "version.json"
assert_eq "$(wc -l <<<"$ERR")" "1" "one line"
expect_rc 0 "$CVM" list --json
assert_eq "$OUT" "$before" "the store changed"
echo "import_layouts: built layouts ok"

# --- the machine's real Debian CUDA 11.8 ---
need_debian_cuda
export CVM_ROOT=$TEST_TMP/real-root
expect_rc 0 "$CVM" import /usr
assert_contains "$ERR" "imported cuda 11.8.0 from /usr/lib/nvidia-cuda-toolkit"
expect_rc 0 "$CVM" import /usr/lib/cuda
assert_contains "$ERR" "already registered"
# Issue 39: the assembled root holds every header and library file dpkg's lists say the packages
# of the source package nvidia-cuda-toolkit put under /usr/include and /usr/lib/<multiarch>
# (cupti's include/Openmp/, lib64/stubs/libnvidia-ml.so, ...), each the same file; programs are
# those cvm picks (Debian's bin/gcc wrapper must never lead PATH).
python3 - "$CVM_ROOT/cuda/11.8.0/root" << 'EOF' || fail "the root of Debian's CUDA 11.8 lacks files its packages installed (above)"
import os, re, sys
root = sys.argv[1]
names = []
for st in open("/var/lib/dpkg/status").read().split("\n\n"):
    f = dict(re.findall(r"^([A-Za-z-]+): ?(.*)$", st, re.M))
    if f.get("Status", "").endswith(" installed") and f.get("Source", f.get("Package", "")).split(" ")[0] == "nvidia-cuda-toolkit":
        names.append((f["Package"], f.get("Architecture", "")))
missing, n = [], 0
for name, arch in names:
    lst = "/var/lib/dpkg/info/%s:%s.list" % (name, arch)
    if not os.path.exists(lst):
        lst = "/var/lib/dpkg/info/%s.list" % name
    for line in open(lst):
        f = line.strip()
        if not os.path.isfile(f):
            continue
        if f.startswith("/usr/include/"):
            rel = "include/" + f[len("/usr/include/"):]
        elif f.startswith("/usr/lib/x86_64-linux-gnu/"):
            rel = "lib64/" + f[len("/usr/lib/x86_64-linux-gnu/"):]
        else:
            continue
        n += 1
        p = os.path.join(root, rel)
        if not os.path.exists(p) or not os.path.samefile(p, f):
            missing.append(rel)
print("  %d files of %d packages, %d missing %s" % (n, len(names), len(missing), missing[:8]), file=sys.stderr)
sys.exit(1 if missing or n < 100 else 0)
EOF
[[ ! -e $CVM_ROOT/cuda/11.8.0/root/bin/gcc && ! -e $CVM_ROOT/cuda/11.8.0/root/bin/g++ ]] || fail "Debian's gcc wrapper is in the root's bin"
mkdir -p "$TEST_TMP/p11" && cd "$TEST_TMP/p11"
expect_rc 0 "$CVM" use 11.8
printf '#include <cuda_runtime.h>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1; }\n' > t.cu
command -v clang++-14 >/dev/null || skip "clang++-14 is absent (g++ 12 is too new for nvcc 11.8)"
expect_rc 0 "$CVM_ROOT/shims/nvcc" -ccbin clang++-14 -o t t.cu
[[ -x t ]] || fail "nvcc 11.8 made no program"
expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$OUT" "release 11.8"
if command -v cmake >/dev/null; then
    mkdir -p cm && cat > cm/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(t LANGUAGES CXX)
find_package(CUDAToolkit REQUIRED)
get_target_property(cudart CUDA::cudart IMPORTED_LOCATION)
message(STATUS "found CUDA ${CUDAToolkit_VERSION} in ${CUDAToolkit_BIN_DIR}, cudart ${cudart}")
EOF
    expect_rc 0 "$CVM" exec -- sh -c 'cmake -S cm -B cm/build -DCUDAToolkit_ROOT="$CUDA_HOME" 2>&1'
    assert_contains "$OUT" "found CUDA 11.8"
    # g++ 12 is too new for nvcc 11.8: cvm hands over the compiler it keeps through a toolkit view
    # whose nvcc is the shim (issue 21), so CUDA_HOME, and what CMake finds, is that view.
    assert_contains "$OUT" "in $CVM_ROOT/views/11.8.0/bin, cudart $CVM_ROOT/views/11.8.0/lib64/libcudart.so"
fi
# A Makefile's $CUDA_HOME/bin/nvcc, without -ccbin, compiles with the compiler cvm keeps.
expect_rc 0 "$CVM" exec -- sh -c '"$CUDA_HOME/bin/nvcc" -o t2 t.cu 2>&1'
[[ -x t2 ]] || fail "\$CUDA_HOME/bin/nvcc 11.8 made no program under cvm exec: $OUT"
real13=/usr/local/cuda-13.0
[[ -x $real13/bin/nvcc ]] || skip "$real13 is absent (CUDA 11.8 half passed)"
expect_rc 0 "$CVM" import "$real13"
mkdir -p "$TEST_TMP/p13" && cd "$TEST_TMP/p13"
expect_rc 0 "$CVM" use 13.0
printf 'int main() { return 0; }\n' > t.cu
expect_rc 0 "$CVM_ROOT/shims/nvcc" -o t t.cu
./t
expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$OUT" "release 13.0"
# And 11.8 still compiles in its own folder, side by side.
cd "$TEST_TMP/p11" && rm -f t
expect_rc 0 "$CVM_ROOT/shims/nvcc" -ccbin clang++-14 -o t t.cu
[[ -x t ]] || fail "nvcc 11.8 made no program beside 13.0"
echo "import_layouts: real Debian CUDA 11.8 and $real13 ok"
