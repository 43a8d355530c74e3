#!/usr/bin/env bash
# The core commands end to end: import, use, current, list, which, exec, shims, uninstall.
source "$(dirname "$0")/lib.sh"

make_toolkit "$TEST_TMP/cuda-11.2" 11.2.2
make_toolkit "$TEST_TMP/cuda-12.4" 12.4.1
make_cudnn "$TEST_TMP/cudnn-linux-x86_64-8.1.0.77_cuda11-archive" 8.1.0
make_cudnn "$TEST_TMP/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" 9.1.0
mv "$TEST_TMP/cudnn-linux-x86_64-8.1.0.77_cuda11-archive" "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77"

expect_rc 0 "$CVM" import "$TEST_TMP/cuda-11.2"
assert_contains "$ERR" "imported cuda 11.2.2"
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.4"
expect_rc 0 "$CVM" import "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77"
assert_contains "$ERR" "8.1.0.77-cuda11.2"
expect_rc 0 "$CVM" import "$TEST_TMP/cudnn-linux-x86_64-9.1.0.70_cuda12-archive"
assert_contains "$ERR" "9.1.0.70-cuda12"
# Importing the same folder again is harmless; a folder that is neither is refused with 2.
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-11.2"
assert_contains "$ERR" "already registered"
mkdir -p "$TEST_TMP/empty"
expect_rc 2 "$CVM" import "$TEST_TMP/empty"
assert_contains "$ERR" "neither a CUDA toolkit"
expect_rc 2 "$CVM" import "$TEST_TMP/missing"

# A toolkit installed from NVIDIA's Debian packages: no version.json; nvcc says V13.0.88 (13.0.1
# and 13.0.2 both ship it) and the runtime's file name says 13.0.96, which only 13.0.2 ships.
pkg=$TEST_TMP/pkg/cuda-13.0
mkdir -p "$pkg/bin" "$pkg/include" "$pkg/lib64"
printf '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88"\n' >"$pkg/bin/nvcc"
chmod +x "$pkg/bin/nvcc"
echo '#define CUDA_VERSION 13000' >"$pkg/include/cuda.h"
: >"$pkg/lib64/libcudart.so.13.0.96"
ln -s libcudart.so.13.0.96 "$pkg/lib64/libcudart.so.13"
expect_rc 0 "$CVM" import "$pkg"
assert_contains "$ERR" "imported cuda 13.0.2"
expect_rc 0 "$CVM" uninstall 13.0.2
# Without the runtime's file name nvcc alone cannot tell 13.0.1 from 13.0.2: the newest release
# is taken (never nvcc's own build number), and the entry's note says what else it could be.
rm "$pkg/lib64/libcudart.so.13" "$pkg/lib64/libcudart.so.13.0.96"
expect_rc 0 "$CVM" import "$pkg"
assert_contains "$ERR" "imported cuda 13.0.2"
grep -q "^note=.*13.0.1, 13.0.2" "$CVM_ROOT/cuda/13.0.2/entry" || fail "the entry does not say the release is ambiguous"
expect_rc 0 "$CVM" uninstall 13.0.2

expect_rc 0 "$CVM" list --json
ids=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(e["id"] for k in ("cuda","cudnn") for e in d[k]))' <<<"$OUT")
assert_eq "$ids" "12.4.1 11.2.2 9.1.0.70-cuda12 8.1.0.77-cuda11.2"

# The human list, read from the store's index once its folders have been still a while (backdated
# here): it is written on the first listing and followed at once by an import and an uninstall.
list_ids() { "$CVM" list 2>/dev/null | awk '$1 == "*" { print $2; next } NF > 1 { print $1 }' | tr '\n' ' '; }
touch -d '1 minute ago' "$CVM_ROOT/cuda" "$CVM_ROOT/cudnn"
assert_eq "$(list_ids)" "12.4.1 11.2.2 9.1.0.70-cuda12 8.1.0.77-cuda11.2 " "human list"
ls "$CVM_ROOT/cache/index/"cuda-*.brief >/dev/null 2>&1 || fail "cvm list wrote no index in $CVM_ROOT/cache/index"
make_toolkit "$TEST_TMP/cuda-12.10" 12.10.0
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.10"
assert_eq "$(list_ids)" "12.10.0 12.4.1 11.2.2 9.1.0.70-cuda12 8.1.0.77-cuda11.2 " "list after an import"
expect_rc 0 "$CVM" uninstall 12.10.0
assert_eq "$(list_ids)" "12.4.1 11.2.2 9.1.0.70-cuda12 8.1.0.77-cuda11.2 " "list after an uninstall"

# Nothing selected yet: current says "system" (what the shims run then), a shim with no nvcc on
# PATH beside it exits 127 with what to run.
mkdir -p "$TEST_TMP/nonvcc"
expect_rc 0 env PATH="$CVM_ROOT/shims:$TEST_TMP/nonvcc" "$CVM" current
assert_eq "$OUT" "system (nothing is selected; the shims run the programs on PATH outside cvm: no nvcc there)"
[[ -L "$CVM_ROOT/shims/nvcc" && -L "$CVM_ROOT/shims/ptxas" ]] || fail "import did not make shims"
proj="$TEST_TMP/proj"
deep="$proj/a/b/c/d/e/f"
mkdir -p "$deep"
cd "$deep"
# (PATH without the machine's own nvcc, which the shim would fall through to.)
expect_rc 127 env PATH="$CVM_ROOT/shims:$TEST_TMP/nonvcc" "$CVM_ROOT/shims/nvcc" --version
assert_contains "$ERR" "cvm use"

# A project selection six levels up, partial versions.
cd "$proj"
expect_rc 0 "$CVM" use 11.2+8
assert_eq "$(cat "$proj/.cudaversion")" "11.2+8"
cd "$deep"
expect_rc 0 "$CVM" current
assert_contains "$OUT" "11.2.2+8.1.0.77-cuda11.2 (set by $proj/.cudaversion:1)"
expect_rc 0 "$CVM_ROOT/shims/nvcc" -c x.cu
assert_contains "$OUT" "fake nvcc 11.2.2"
assert_contains "$OUT" "self=$TEST_TMP/cuda-11.2/bin/nvcc"
assert_contains "$OUT" "CUDA_PATH=$CVM_ROOT/views/11.2.2+8.1.0.77-cuda11.2"
assert_contains "$OUT" "CVM_ACTIVE=11.2.2+8.1.0.77-cuda11.2"
assert_contains "$OUT" "args=-c x.cu"
assert_contains "$OUT" "LD_LIBRARY_PATH=$CVM_ROOT/views/11.2.2+8.1.0.77-cuda11.2/lib64"
# The merged view shows cuDNN inside the toolkit; neither install changed.
[[ -e "$CVM_ROOT/views/11.2.2+8.1.0.77-cuda11.2/include/cudnn_version.h" ]] || fail "view lacks cudnn header"
[[ -e "$CVM_ROOT/views/11.2.2+8.1.0.77-cuda11.2/lib64/libcudnn.so.8" ]] || fail "view lacks libcudnn"
[[ ! -e "$TEST_TMP/cuda-11.2/include/cudnn_version.h" ]] || fail "the toolkit was modified"
# The tool's exit code passes through.
FAKE_NVCC_EXIT=3 expect_rc 3 "$CVM_ROOT/shims/nvcc"

# CVM_VERSION beats the file; the global default applies outside projects.
CVM_VERSION=12 expect_rc 0 "$CVM_ROOT/shims/nvcc"
assert_contains "$OUT" "fake nvcc 12.4.1"
assert_contains "$OUT" "CUDA_PATH=$TEST_TMP/cuda-12.4"
expect_rc 0 "$CVM" use --global 12.4+9
cd "$TEST_TMP"
expect_rc 0 "$CVM" current --json
assert_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["origin"], d["active"], d["cudnn"]["id"])' <<<"$OUT")" "global 12.4.1+9.1.0.70-cuda12 9.1.0.70-cuda12"
expect_rc 0 "$CVM" which nvcc
assert_eq "$OUT" "$TEST_TMP/cuda-12.4/bin/nvcc"

# A tool the selection lacks: 127 and what to run.
ln -s "$(readlink "$CVM_ROOT/shims/nvcc")" "$CVM_ROOT/shims/nsys"
expect_rc 127 env PATH="$CVM_ROOT/shims:$TEST_TMP/nonvcc" "$CVM_ROOT/shims/nsys"
assert_contains "$ERR" "nsys is not part of CUDA 12.4.1"
rm "$CVM_ROOT/shims/nsys"

# A selection that names nothing installed: 127 from the shim, 1 from exec.
CVM_VERSION=10.2 expect_rc 127 "$CVM_ROOT/shims/nvcc"
assert_contains "$ERR" "cvm install 10.2"
CVM_VERSION=10.2 expect_rc 1 "$CVM" exec -- true

# exec runs anything in the environment and returns its code.
expect_rc 0 "$CVM" exec -- sh -c 'echo "$CUDA_PATH|$CUDNN_PATH|$CVM_ACTIVE"'
assert_eq "$OUT" "$CVM_ROOT/views/12.4.1+9.1.0.70-cuda12|$TEST_TMP/cudnn-linux-x86_64-9.1.0.70_cuda12-archive|12.4.1+9.1.0.70-cuda12"
expect_rc 5 "$CVM" exec --version 11.2 -- sh -c 'echo "$CUDA_PATH"; exit 5'
assert_eq "$OUT" "$TEST_TMP/cuda-11.2"
# Arguments reach the command unchanged (no stray `--`).
expect_rc 0 "$CVM" exec -- printf '%s|' a "b c" -- d
assert_eq "$OUT" "a|b c|--|d|"
# Another toolkit's bin on PATH is dropped; system folders stay.
PATH="$TEST_TMP/cuda-11.2/bin:$PATH" expect_rc 0 "$CVM" exec -- sh -c 'echo "$PATH"'
assert_not_contains "$OUT" "$TEST_TMP/cuda-11.2/bin"
assert_contains "$OUT" "/usr/bin"

# 'system' runs what the machine has, never a shim.
mkdir -p "$TEST_TMP/sysbin"
printf '#!/bin/sh\necho system-nvcc\n' > "$TEST_TMP/sysbin/nvcc"
chmod +x "$TEST_TMP/sysbin/nvcc"
PATH="$CVM_ROOT/shims:$TEST_TMP/sysbin:$PATH" CVM_VERSION=system expect_rc 0 "$CVM_ROOT/shims/nvcc"
assert_eq "$OUT" "system-nvcc"
CVM_VERSION=system expect_rc 127 env PATH="$CVM_ROOT/shims:$TEST_TMP/nonvcc" "$CVM_ROOT/shims/nvcc"

# uninstall forgets an import (the folder stays) and drops its views and shims. The project
# selects it and there is no terminal to ask on: refused without --yes.
expect_rc 2 "$CVM" uninstall 8.1.0.77-cuda11.2
assert_contains "$ERR" "cvm uninstall --yes 8.1.0.77-cuda11.2"
expect_rc 0 "$CVM" uninstall --yes 8.1.0.77-cuda11.2
assert_contains "$ERR" "forgot cudnn 8.1.0.77-cuda11.2"
[[ -d "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77/lib" ]] || fail "uninstall removed an imported folder"
[[ ! -e "$CVM_ROOT/views/11.2.2+8.1.0.77-cuda11.2" ]] || fail "view left behind"
expect_rc 1 "$CVM" uninstall 8.1.0.77-cuda11.2
expect_rc 2 "$CVM" uninstall ../../etc
expect_rc 0 "$CVM" uninstall -y 11.2.2 12.4.1
[[ ! -e "$CVM_ROOT/shims/nvcc" ]] || fail "rehash left a stale shim"
expect_rc 2 "$CVM" use "11.2;rm"

# --detect registers what installers left: CUDA_PATH_Vx_y variables and the default folders.
CUDA_PATH_V11_2="$TEST_TMP/cuda-11.2" expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "imported cuda 11.2.2 from $TEST_TMP/cuda-11.2"
expect_rc 2 "$CVM" import --detect "$TEST_TMP/cuda-11.2"
expect_rc 2 "$CVM" frobnicate
echo "core_cli: ok"
