#!/usr/bin/env bash
# Windows, under Wine: `cvm use --for` with the cross-built cvm.exe prefers the imported CUDA 11.2
# and installed cuDNN 8.1 for TensorFlow 2.10 (the last with a native Windows GPU build), and
# refuses 2.11 on the platform constraint.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

setup_cuda112_cudnn81
export CVM_PYTHON="" CVM_NVIDIA_SMI=""
PROJ="$WIN_C/tf"
mkdir -p "$PROJ" && cd "$PROJ"
wexpect 0 "$CVM_EXE" use --for tensorflow==2.10 --json
assert_eq "$(jq -r '.spec, .toolkit.installed, .cudnn.id, .cudnn.installed' <<< "$OUT" | tr '\n' ' ')" \
    "11.2.2+8.1.0.77 true 8.1.0.77-cuda11.2 true "
assert_eq "$(tr -d '\r' < "$PROJ/.cudaversion")" "11.2.2+8.1.0.77"
assert_contains "$ERR" "toolkit: CUDA 11.2.2, installed"
assert_contains "$ERR" "selected 11.2.2+8.1.0.77-cuda11.2"
wexpect 1 "$CVM_EXE" use --for tensorflow==2.11 --json
assert_eq "$(jq -r '.error.code, .constraint' <<< "$OUT" | tr '\n' ' ')" "nothing_fits platform "
assert_contains "$ERR" "tensorflow==2.11 has no native Windows GPU build"
echo "windows_use_for: ok"
