#!/usr/bin/env bash
# `cvm use --for FRAMEWORK --install`: installs the toolkit the choice names from a mirror (a real
# HTTP server on 127.0.0.1 with NVIDIA-shaped manifests), then writes it; a failed install writes
# nothing; a second run finds it installed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
T=$TEST_TMP

R="$T/mirror/cuda/redist"
entries=()
for c in "cuda_nvcc 12.4.131 --tool bin/nvcc" "cuda_cudart 12.4.127 --lib libcudart.so --cuda-h 12.4"; do
    read -r key version args <<<"$c"
    top="$key-linux-x86_64-$version-archive"
    mkdir -p "$R/$key/linux-x86_64"
    # shellcheck disable=SC2086
    $MK component "$R/$key/linux-x86_64/$top.tar.xz" --folder "$top" $args
    entries+=(--entry "$key=$version=$key/linux-x86_64/$top.tar.xz")
done
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${entries[@]}"
start_server "$T/mirror"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=1
# A machine without driver, GPU or compiler: those checks are skipped.
export CVM_PROC_DRIVER_VERSION="$T/none" CVM_NVIDIA_SMI="$T/none" CVM_LIBCUDA="" CVM_COMPILER_PATH="$T/none"

mkdir -p "$T/p" && cd "$T/p"
expect_rc 0 "$CVM" use --for torch==2.5.1+cu124 --install --json
assert_eq "$(json_get '(d["spec"], d["toolkit"], d["cudnn"], [e["id"] for e in d["installed"]])')" \
    "('12.4.1', {'installed': True, 'version': '12.4.1'}, None, ['12.4.1'])"
assert_eq "$(cat .cudaversion)" "12.4.1"
assert_store cuda "12.4.1"
assert_contains "$ERR" "selected 12.4.1 in $T/p/.cudaversion"
# Installed now: chosen as such, nothing fetched.
expect_rc 0 "$CVM" use --for torch==2.5 --install
assert_contains "$ERR" "toolkit: CUDA 12.4.1, installed"
assert_eq "$(cat .cudaversion)" "12.4.1"
# A failed install writes nothing: the mirror has no CUDA 12.2 or cuDNN 8.9.
expect_rc 1 "$CVM" use --for tensorflow==2.15 --install --json
assert_eq "$(json_get 'd["error"]["code"]')" "network"
assert_eq "$(cat .cudaversion)" "12.4.1" ".cudaversion after a failed use --for --install"
assert_store cuda "12.4.1"
echo "compat_use_for_install: ok"
