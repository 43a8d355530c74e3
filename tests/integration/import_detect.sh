#!/usr/bin/env bash
# `cvm import --detect` on a staged machine (CVM_DETECT_ROOT): NVIDIA's apt cuDNN 9.14.0.64 for
# CUDA 13, a conda environment from ~/.conda/environments.txt, the wheels of a python; then the
# marks of gone and changed imports. Also `cvm import` of extracted legacy archives.
source "$(dirname "$0")/lib.sh"
unset CONDA_PREFIX VIRTUAL_ENV CUDA_PATH_V11_8 CUDA_PATH_V12_4 || true
export HOME="$TEST_TMP/home"
M="$TEST_TMP/machine"
export CVM_DETECT_ROOT="$M"

# NVIDIA's packages libcudnn9-cuda-13 and libcudnn9-dev-cuda-13, and a library of another kind.
make_apt_cudnn "$M" 9.14.0.64 13
echo zlib > "$M/usr/lib/x86_64-linux-gnu/libz.so.1"

# A conda environment with conda-forge's cudnn for CUDA 12.
envdir="$TEST_TMP/conda/envs/dl"
make_cudnn "$envdir" 9.1.0
mkdir -p "$envdir/conda-meta" "$HOME/.conda"
echo '{"name": "cudnn", "depends": ["cuda-version >=12,<13.0a0"]}' > "$envdir/conda-meta/cudnn-9.1.0.70-h3b5d6e6_0.json"
printf '%s\n' "$envdir" > "$HOME/.conda/environments.txt"

# A python whose site-packages has the nvidia-cudnn-cu13 wheel.
site="$TEST_TMP/py/lib/python3.12/site-packages"
make_cudnn "$site/nvidia/cudnn" 9.19.0
mkdir -p "$site/nvidia_cudnn_cu13-9.19.0.56.dist-info"
(cd "$site" && find nvidia/cudnn -type f -printf '%p,sha256=x,1\n') > "$site/nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD"
# ...and the CUDA 13.0.2 wheels (nvidia/cu13), the same release as NVIDIA's installer left in
# /usr/local/cuda-13.0: one is registered, the other named as the same release.
mkdir -p "$site/nvidia/cu13/bin" "$site/nvidia/cu13/include" "$site/nvidia/cu13/lib"
printf '#!/bin/sh\necho wheel nvcc\n' > "$site/nvidia/cu13/bin/nvcc"
chmod +x "$site/nvidia/cu13/bin/nvcc"
printf '#define CUDA_VERSION 13000\n' > "$site/nvidia/cu13/include/cuda.h"
: > "$site/nvidia/cu13/lib/libcudart.so.13"
mkdir -p "$site/nvidia_cuda_nvcc-13.0.88.dist-info" "$site/nvidia_cuda_runtime-13.0.96.dist-info"
make_toolkit "$M/usr/local/cuda-13.0" 13.0.2
printf '#!/bin/sh\necho %s\necho %s\n' "$site" "$site" > "$TEST_TMP/python3"
chmod +x "$TEST_TMP/python3"
export CVM_PYTHON="$TEST_TMP/python3"

expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "imported cudnn 9.14.0.64-cuda13 from $M/usr (NVIDIA's cuDNN packages)"
assert_contains "$ERR" "imported cudnn 9.1.0.70-cuda12 from $envdir (conda environment in ~/.conda/environments.txt)"
assert_contains "$ERR" "imported cudnn 9.19.0.56-cuda13 from $site/nvidia/cudnn (pip wheels of $TEST_TMP/python3)"
assert_contains "$ERR" "imported cuda 13.0.2 from $M/usr/local/cuda-13.0"
assert_contains "$ERR" "cuda 13.0.2 in $site/nvidia (pip wheels of $TEST_TMP/python3) is the same release as the one from $M/usr/local/cuda-13.0, which is kept"
expect_rc 0 "$CVM" list cudnn
assert_contains "$OUT" "9.14.0.64-cuda13       $M/usr  (imported)"
# The system cuDNN's assembled root: de-versioned headers, cuDNN's libraries only.
r="$CVM_ROOT/cudnn/9.14.0.64-cuda13/root"
[[ -f $r/include/cudnn.h && -f $r/include/cudnn_version.h && -f $r/include/cudnn_ops.h ]] || fail "headers missing in $r"
[[ -f $r/lib/libcudnn.so.9 && -f $r/lib/libcudnn_cnn.so.9.14.0 ]] || fail "libraries missing in $r"
[[ ! -e $r/lib/libz.so.1 ]] || fail "a non-cuDNN library is in $r"
# With a toolkit: CUDNN_PATH is that root, the merged view shows cuDNN, no system folder on
# LD_LIBRARY_PATH.
expect_rc 0 "$CVM" exec --version 13.0+9.14 -- sh -c 'echo "$CUDNN_PATH"; echo "$LD_LIBRARY_PATH"; test -f "$CUDA_PATH/include/cudnn_version.h" && test -e "$CUDA_PATH/lib64/libcudnn.so.9" && echo view-ok'
assert_contains "$OUT" "$r"
assert_contains "$OUT" "view-ok"
assert_not_contains "$OUT" "x86_64-linux-gnu"

# A second run registers nothing new.
expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "cudnn 9.14.0.64-cuda13 from $M/usr is already registered"
assert_contains "$ERR" "cudnn 9.1.0.70-cuda12 from $envdir is already registered"
assert_contains "$ERR" "cudnn 9.19.0.56-cuda13 from $site/nvidia/cudnn is already registered"
assert_not_contains "$ERR" "imported"

# A source removed: listed as gone, and --detect says what to run.
rm -rf "$envdir"
expect_rc 0 "$CVM" list cudnn
assert_contains "$OUT" "9.1.0.70-cuda12        $envdir  (imported, source gone)"
expect_rc 0 "$CVM" list --json cudnn
state=$(python3 -c 'import json,sys; print({e["id"]: e.get("source_state") for e in json.load(sys.stdin)["cudnn"]}["9.1.0.70-cuda12"])' <<<"$OUT")
assert_eq "$state" "gone"
expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "cudnn 9.1.0.70-cuda12: its folder $envdir is gone; run \`cvm uninstall 9.1.0.70-cuda12\`"
expect_rc 0 "$CVM" uninstall 9.1.0.70-cuda12

# A source changed under its entry (a package upgrade touches the library): marked, re-read.
touch -d '+1 hour' "$M/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0"
expect_rc 0 "$CVM" list cudnn
assert_contains "$OUT" "9.14.0.64-cuda13       $M/usr  (imported, changed: run cvm import --detect)"
expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "re-read cudnn 9.14.0.64-cuda13 from $M/usr (changed since it was imported): its files changed"
expect_rc 0 "$CVM" list cudnn
assert_contains "$OUT" "9.14.0.64-cuda13       $M/usr  (imported)"
assert_not_contains "$OUT" "changed"

# No python at all, a conda environment without CUDA, and one whose cuDNN cannot be told:
# one line each, and the run goes on.
mkdir -p "$TEST_TMP/conda/envs/plain"
make_cudnn "$TEST_TMP/conda/envs/odd" 9.2.0
printf '%s\n%s\n' "$TEST_TMP/conda/envs/plain" "$TEST_TMP/conda/envs/odd" >> "$HOME/.conda/environments.txt"
CVM_PYTHON=/nonexistent/python3 expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "nothing to import in $TEST_TMP/conda/envs/plain (conda environment in ~/.conda/environments.txt)"
assert_contains "$ERR" "skipped $TEST_TMP/conda/envs/odd (conda environment in ~/.conda/environments.txt): import: cannot tell which CUDA the cuDNN 9.2.0"
assert_contains "$ERR" "cudnn 9.14.0.64-cuda13 from $M/usr is already registered"
assert_not_contains "$ERR" "site-packages"
[[ $(grep -c odd <<<"$ERR") == 1 ]] || fail "more than one line about the odd environment: $ERR"

# Extracted legacy archives, from their parent folder and from cuda/, with no --cuda.
zip="$TEST_TMP/dl/cudnn-11.2-windows-x64-v8.1.0.77"
mkdir -p "$zip/cuda/bin" "$zip/cuda/include" "$zip/cuda/lib/x64"
printf '#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n' > "$zip/cuda/include/cudnn_version.h"
: > "$zip/cuda/include/cudnn.h"; : > "$zip/cuda/bin/cudnn64_8.dll"; : > "$zip/cuda/lib/x64/cudnn.lib"
tgz="$TEST_TMP/dl/cudnn-11.2-linux-x64-v8.1.0.77"
make_cudnn "$tgz/cuda" 8.1.0
mv "$tgz/cuda/lib" "$tgz/cuda/lib64"
n=0
for d in "$zip" "$zip/cuda" "$tgz" "$tgz/cuda"; do
    n=$((n + 1))
    CVM_ROOT="$TEST_TMP/legacy$n" expect_rc 0 "$CVM" import "$d"
    assert_contains "$ERR" "imported cudnn 8.1.0.77-cuda11.2 from ${d%/cuda}/cuda"
done
# A folder that lost the archive's name: the registry gives the build; 8.1.0.77 was built for
# CUDA 10.2 and 11.2, so --cuda is asked for.
mkdir -p "$TEST_TMP/dl/unnamed"
mv "$tgz/cuda" "$TEST_TMP/dl/unnamed/cuda"
CVM_ROOT="$TEST_TMP/legacy9" expect_rc 2 "$CVM" import "$TEST_TMP/dl/unnamed"
assert_contains "$ERR" "--cuda"
CVM_ROOT="$TEST_TMP/legacy9" expect_rc 0 "$CVM" import --cuda 11.2 "$TEST_TMP/dl/unnamed"
assert_contains "$ERR" "imported cudnn 8.1.0.77-cuda11.2"
echo "import_detect: ok"
