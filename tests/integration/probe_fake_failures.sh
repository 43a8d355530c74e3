#!/usr/bin/env bash
# cvm-probe names each failure and never crashes: wrong numbers, a missing symbol, a version
# mismatch, a sub-library from another folder, cuDNN and CUDA errors, no driver, no device,
# libraries not found, bad usage.
set -euo pipefail
source "$(dirname "$0")/lib_probe.sh"
probe_need_tools
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

probe_build_fakes "$TMP/good" 9
export LD_LIBRARY_PATH="$TMP/good"

# Wrong numbers: the convolution runs but one output is off by 0.5.
FAKE_CUDNN_WRONG=1 probe_run "$TMP/wrong.json" --json
probe_expect_rc 1 "wrong result" "$TMP/wrong.json"
probe_jq "$TMP/wrong.json" '.ok == false and all(.convolutions[]; .ran and (.matched | not))' \
    "wrong result: convolutions should run and mismatch"
probe_jq "$TMP/wrong.json" 'any(.problems[]; .kind == "wrong_result" and (.message | test("does not match the CPU reference")))' \
    "wrong result: not named"
probe_jq "$TMP/wrong.json" 'all(.convolutions[]; .relative_error > 0.001)' "wrong result: error size"
FAKE_CUDNN_WRONG=1 probe_run "$TMP/wrong.txt"
probe_expect_rc 1 "wrong result (text)" "$TMP/wrong.txt"
grep -q '^  WRONG ' "$TMP/wrong.txt" || probe_fail "wrong result: text shows no WRONG line"
grep -q '^result: FAILED' "$TMP/wrong.txt" || probe_fail "wrong result: text result line"

# Version mismatch: libcudnn.so.9 that says it is 8.9.7.
FAKE_CUDNN_VERSION=8907 probe_run "$TMP/mismatch.json" --json
probe_expect_rc 1 "version mismatch" "$TMP/mismatch.json"
probe_jq "$TMP/mismatch.json" '.cudnn_version.number == 8907' "version mismatch: version not reported"
probe_jq "$TMP/mismatch.json" 'any(.problems[]; .kind == "version_mismatch" and (.message | test("libcudnn.so.9")) and (.message | test("8.9.7")))' \
    "version mismatch: not named"

# cuDNN errors by name: cudnnCreate fails while the device is fine.
FAKE_CUDNN_FAIL=cudnnCreate:4000 probe_run "$TMP/create.json" --json
probe_expect_rc 1 "cudnnCreate failure" "$TMP/create.json"
probe_jq "$TMP/create.json" 'any(.problems[]; .kind == "cudnn_error" and (.message | test("cudnnCreate failed with CUDNN_STATUS_INTERNAL_ERROR \\(4000\\)")))' \
    "cudnnCreate failure: not named"
probe_jq "$TMP/create.json" '.device.name != null and .cudnn_version.number == 91900' \
    "cudnnCreate failure: device and version should still be reported"
FAKE_CUDNN_FAIL=cudnnConvolutionForward:3000 probe_run "$TMP/forward.json" --json
probe_expect_rc 1 "forward failure" "$TMP/forward.json"
probe_jq "$TMP/forward.json" 'all(.convolutions[]; (.ran | not) and (.error | test("cudnnConvolutionForward returned CUDNN_STATUS_NOT_SUPPORTED")))' \
    "forward failure: not named per shape"
probe_jq "$TMP/forward.json" 'any(.problems[]; .kind == "cudnn_error")' "forward failure: problem kind"

# Missing symbol: a front library without cudnnConvolutionForward.
probe_build_fakes "$TMP/nosym" 9 -DFAKE_OMIT_FORWARD
LD_LIBRARY_PATH="$TMP/nosym" probe_run "$TMP/nosym.json" --json
probe_expect_rc 1 "missing symbol" "$TMP/nosym.json"
probe_jq "$TMP/nosym.json" "any(.problems[]; .kind == \"missing_symbol\" and (.message | test(\"lacks cudnnConvolutionForward\")) and (.message | contains(\"$TMP/nosym/libcudnn.so.9\")))" \
    "missing symbol: not named"
probe_jq "$TMP/nosym.json" '.cudnn_version.number == 91900 and (.convolutions | length) == 0' \
    "missing symbol: the version should be reported and nothing run"

# A sub-library from elsewhere: another folder earlier on LD_LIBRARY_PATH holds only
# libcudnn_cnn.so.9, which the front library then loads from there.
mkdir -p "$TMP/stray"
cp "$TMP/good/libcudnn_cnn.so.9" "$TMP/stray/"
LD_LIBRARY_PATH="$TMP/stray:$TMP/good" probe_run "$TMP/mixed.json" --json
probe_expect_rc 1 "mixed sub-libraries" "$TMP/mixed.json"
probe_jq "$TMP/mixed.json" "[.libraries[].real_path] | index(\"$TMP/stray/libcudnn_cnn.so.9\") != null" \
    "mixed: the stray sub-library's path is not shown"
probe_jq "$TMP/mixed.json" ".cudnn.path == \"$TMP/good/libcudnn.so.9\"" "mixed: front library path"
probe_jq "$TMP/mixed.json" "(.cudnn_folders | sort) == ([\"$TMP/good\", \"$TMP/stray\"] | sort)" \
    "mixed: both folders"
probe_jq "$TMP/mixed.json" 'any(.problems[]; .kind == "mixed_cudnn_folders" and (.message | test("libcudnn_cnn.so.9")))' \
    "mixed: not flagged"
probe_jq "$TMP/mixed.json" 'all(.convolutions[]; .ran and .matched)' \
    "mixed: the convolutions themselves should pass"

# A stray sub-library of another release (9.14 beside the 9.19 front library): the probe reads
# its version symbol and names both files and versions.
mkdir -p "$TMP/stray914"
probe_compile "$TMP/stray914/libcudnn_cnn.so.9" libcudnn_cnn.so.9 fake_cudnn.c -DFAKE_MAJOR=9 \
    -DFAKE_CUDART_VERSION=13000 -DFAKE_WITH_CNN -DFAKE_VERSION_SYMBOL=cudnn_cnn_infer_version -DFAKE_VERSION_VALUE=0x090e00
LD_LIBRARY_PATH="$TMP/stray914:$TMP/good" probe_run "$TMP/sub.json" --json
probe_expect_rc 1 "a sub-library of another release" "$TMP/sub.json"
probe_jq "$TMP/sub.json" "any(.problems[]; .kind == \"sublibrary_mismatch\" and (.message | contains(\"$TMP/good/libcudnn.so.9 9.19.0 (cudnnGetVersion)\")) and (.message | contains(\"$TMP/stray914/libcudnn_cnn.so.9 9.14.0 (cudnn_cnn_infer_version)\")))" \
    "sub-library of another release: not named"
# The same file with the front library's release is no mismatch.
probe_compile "$TMP/stray914/libcudnn_cnn.so.9" libcudnn_cnn.so.9 fake_cudnn.c -DFAKE_MAJOR=9 \
    -DFAKE_CUDART_VERSION=13000 -DFAKE_WITH_CNN -DFAKE_VERSION_SYMBOL=cudnn_cnn_infer_version -DFAKE_VERSION_VALUE=0x091300
LD_LIBRARY_PATH="$TMP/stray914:$TMP/good" probe_run "$TMP/sub2.json" --json
probe_jq "$TMP/sub2.json" 'all(.problems[]; .kind != "sublibrary_mismatch")' "same release: flagged as a mismatch"

# Libraries from outside the selection's folders (cvm probe passes them).
ln -s "$TMP/good" "$TMP/good-link"
probe_run "$TMP/selected.json" --json --expect-cudnn-dir "$TMP/good-link" --expect-cudart-dir "$TMP/good"
probe_expect_rc 0 "selected folders (through a link)" "$TMP/selected.json"
probe_run "$TMP/other.json" --json --expect-cudnn-dir "$TMP/stray"
probe_expect_rc 1 "cuDNN outside the selection" "$TMP/other.json"
probe_jq "$TMP/other.json" "[.problems[] | select(.kind == \"not_selected\")] | length == 4" \
    "not selected: each cuDNN library loaded from outside should be named"
probe_jq "$TMP/other.json" "any(.problems[]; .message | startswith(\"$TMP/good/libcudnn.so.9 was loaded, but the selected cuDNN is in $TMP/stray\"))" \
    "not selected: message"

# No driver, no device, a driver too old: told apart from a broken cuDNN.
FAKE_CUDART_MODE=no_driver probe_run "$TMP/nodriver.json" --json
probe_expect_rc 1 "no driver" "$TMP/nodriver.json"
probe_jq "$TMP/nodriver.json" '[.problems[].kind] == ["no_driver"]' "no driver: kind"
probe_jq "$TMP/nodriver.json" '.problems[0].message | test("cudaErrorInsufficientDriver \\(35\\)") and test("cuDNN itself loaded")' \
    "no driver: message"
probe_jq "$TMP/nodriver.json" '.driver_version.number == 0 and .cudnn_version.number == 91900' \
    "no driver: versions"
FAKE_CUDART_MODE=no_device probe_run "$TMP/nodevice.json" --json
probe_expect_rc 1 "no device" "$TMP/nodevice.json"
probe_jq "$TMP/nodevice.json" '[.problems[].kind] == ["no_device"] and (.problems[0].message | test("cudaErrorNoDevice"))' \
    "no device: kind"
FAKE_CUDART_MODE=old_driver probe_run "$TMP/old.json" --json
probe_expect_rc 1 "old driver" "$TMP/old.json"
probe_jq "$TMP/old.json" 'any(.problems[]; .kind == "cuda_error" and (.message | test("driver supports CUDA 11.0 but the runtime is CUDA 13.0")))' \
    "old driver: not explained"
probe_run "$TMP/device.json" --json --device 3
probe_expect_rc 1 "absent device index" "$TMP/device.json"
probe_jq "$TMP/device.json" 'any(.problems[]; .kind == "no_device")' "absent device index: kind"

# Libraries not found: the names tried and the folders searched.
probe_run "$TMP/nocudnn.json" --json --cudnn-major 5
probe_expect_rc 1 "cuDNN not found" "$TMP/nocudnn.json"
probe_jq "$TMP/nocudnn.json" 'any(.problems[]; .kind == "library_not_found" and (.message | test("tried libcudnn.so.5")))' \
    "cuDNN not found: not named"
probe_jq "$TMP/nocudnn.json" ".searched_folders[0] == {\"path\": \"$TMP/good\", \"origin\": \"LD_LIBRARY_PATH\"}" \
    "cuDNN not found: LD_LIBRARY_PATH folder not listed first"
probe_jq "$TMP/nocudnn.json" 'any(.searched_folders[]; .path == "/etc/ld.so.cache") and any(.searched_folders[]; .origin == "system default")' \
    "cuDNN not found: cache and default folders not listed"
probe_jq "$TMP/nocudnn.json" '.device.name != null' "cuDNN not found: the device should still be reported"
probe_run "$TMP/nocudnn.txt" --cudnn-major 5
grep -q "  $TMP/good  (LD_LIBRARY_PATH)" "$TMP/nocudnn.txt" || probe_fail "text: folders searched"
probe_run "$TMP/nocudart.json" --json --cudart-major 5
probe_expect_rc 1 "CUDA runtime not found" "$TMP/nocudart.json"
probe_jq "$TMP/nocudart.json" 'any(.problems[]; .kind == "library_not_found" and (.message | test("The CUDA runtime could not be loaded \\(tried libcudart.so.5\\)")))' \
    "CUDA runtime not found: not named"
probe_jq "$TMP/nocudart.json" '.cudnn_version.number == 91900' "CUDA runtime not found: cuDNN still reported"

# A file with the right name that is not a library at all.
mkdir -p "$TMP/broken"
echo "not an ELF file" >"$TMP/broken/libcudnn.so.9"
LD_LIBRARY_PATH="$TMP/broken:$TMP/good" probe_run "$TMP/broken.json" --json --cudnn-major 9
# glibc stops at the first file of that name; the loader's reason names it.
probe_expect_rc 1 "broken file" "$TMP/broken.json"
probe_jq "$TMP/broken.json" "any(.problems[]; .kind == \"library_not_found\" and (.message | contains(\"$TMP/broken/libcudnn.so.9\")))" \
    "broken file: the loader's reason does not name it"

# Usage errors exit 2 and say what is wrong.
probe_run "$TMP/usage.txt" --frobnicate
probe_expect_rc 2 "usage error" "$TMP/usage.txt"
grep -q "unknown argument '--frobnicate'" "$TMP/usage.txt.err" || probe_fail "usage: message"
probe_run "$TMP/usage2.txt" --cudnn-major nine
probe_expect_rc 2 "bad number" "$TMP/usage2.txt"
echo "PASS"
