#!/usr/bin/env bash
# cvm-probe names a sub-library failure `sublibrary_mismatch` with every cuDNN file and its
# release (the main library's cudnnGetVersion, a sub-library's own cudnnGetVersion, its version
# symbol, a full version in its file name), including files of the main library's folder that
# were never loaded; and flags a cuDNN built for another CUDA major than the runtime beside it.
set -euo pipefail
source "$(dirname "$0")/lib_probe.sh"
probe_need_tools
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# 1. The status says a sub-library failed to load; the engines library beside the main one is of
# 9.14 by its real file name and was never loaded.
probe_build_fakes "$TMP/mix" 9
rm "$TMP/mix/libcudnn_engines_precompiled.so.9"
probe_compile "$TMP/mix/libcudnn_engines_precompiled.so.9.14.0" libcudnn_engines_precompiled.so.9 fake_cudnn.c -DFAKE_MAJOR=9
ln -s libcudnn_engines_precompiled.so.9.14.0 "$TMP/mix/libcudnn_engines_precompiled.so.9"
# And one that needs what only another release's graph library has: it cannot be loaded.
echo 'extern int cudnn_graph_914_only(void); int engines_914(void) { return cudnn_graph_914_only(); }' > "$TMP/e.c"
"${CC:-cc}" -shared -fPIC -o "$TMP/mix/libcudnn_engines_runtime_compiled.so.9" "$TMP/e.c" \
    -Wl,-soname,libcudnn_engines_runtime_compiled.so.9 || probe_fail "cannot build the engines library"
export LD_LIBRARY_PATH="$TMP/mix"
FAKE_CUDNN_FAIL=cudnnCreate:1008 probe_run "$TMP/create.json" --json
probe_expect_rc 1 "sub-library status" "$TMP/create.json"
probe_jq "$TMP/create.json" 'all(.problems[]; .kind != "cudnn_error")' "sub-library status: still called cudnn_error"
probe_jq "$TMP/create.json" '[.problems[] | select(.kind == "sublibrary_mismatch")] | length == 1' \
    "sub-library status: one sublibrary_mismatch"
msg=$(jq -r '.problems[] | select(.kind == "sublibrary_mismatch") | .message' "$TMP/create.json")
for want in "cudnnCreate failed with CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED (1008)" \
    "$TMP/mix/libcudnn.so.9 9.19.0 (cudnnGetVersion)" \
    "$TMP/mix/libcudnn_engines_precompiled.so.9.14.0 9.14.0 (file name)" \
    "$TMP/mix/libcudnn_heuristic.so.9 version unknown" \
    "$TMP/mix/libcudnn_engines_runtime_compiled.so.9 version unknown, fails to load: " \
    "undefined symbol: cudnn_graph_914_only" \
    "replace libcudnn_engines_precompiled.so.9.14.0, libcudnn_engines_runtime_compiled.so.9 with cuDNN 9.19.0's" \
    "cvm use CUDA+CUDNN"; do
    [[ $msg == *"$want"* ]] || probe_fail "sub-library status: '$want' missing from: $msg"
done
# The same status with one release everywhere still names the failure and the files.
rm "$TMP/mix/libcudnn_engines_precompiled.so.9" "$TMP/mix/libcudnn_engines_runtime_compiled.so.9"
for sub in engines_precompiled engines_runtime_compiled; do
    probe_compile "$TMP/mix/libcudnn_$sub.so.9" "libcudnn_$sub.so.9" fake_cudnn.c -DFAKE_MAJOR=9
done
FAKE_CUDNN_FAIL=cudnnCreate:1002 probe_run "$TMP/create2.json" --json
probe_jq "$TMP/create2.json" 'any(.problems[]; .kind == "sublibrary_mismatch" and (.message | test("SUBLIBRARY_VERSION_MISMATCH \\(1002\\)")) and (.message | test("reinstall the package or wheel")))' \
    "sub-library status, one release: not named"
# Any other cuDNN status stays a cudnn_error.
FAKE_CUDNN_FAIL=cudnnCreate:4000 probe_run "$TMP/create3.json" --json
probe_jq "$TMP/create3.json" 'any(.problems[]; .kind == "cudnn_error") and all(.problems[]; .kind != "sublibrary_mismatch")' \
    "internal error: taken for a sub-library failure"

# 2. A sub-library of 9.14 that lacks what the 9.19 front asks for: the front's call fails with
# 1008 during the convolution; the file is named with its version symbol, the graph library with
# its own cudnnGetVersion.
probe_build_fakes "$TMP/cnn" 9
probe_compile "$TMP/cnn/libcudnn_cnn.so.9" libcudnn_cnn.so.9 fake_cudnn.c -DFAKE_MAJOR=9 \
    -DFAKE_VERSION_SYMBOL=cudnn_cnn_infer_version -DFAKE_VERSION_VALUE=0x090e00
LD_LIBRARY_PATH="$TMP/cnn" probe_run "$TMP/cnn.json" --json
probe_expect_rc 1 "sub-library of another release" "$TMP/cnn.json"
probe_jq "$TMP/cnn.json" 'all(.problems[]; .kind != "cudnn_error")' "cnn: still called cudnn_error"
msg=$(jq -r '[.problems[] | select(.kind == "sublibrary_mismatch")][0].message' "$TMP/cnn.json")
for want in "returned CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED (1008)" \
    "$TMP/cnn/libcudnn_cnn.so.9 9.14.0 (cudnn_cnn_infer_version)" \
    "$TMP/cnn/libcudnn_graph.so.9 9.19.0 (its cudnnGetVersion)" \
    "replace libcudnn_cnn.so.9 with cuDNN 9.19.0's"; do
    [[ $msg == *"$want"* ]] || probe_fail "cnn: '$want' missing from: $msg"
done
[[ $(jq '[.problems[] | select(.message | test("cuDNN.s files:"))] | length' "$TMP/cnn.json") == 1 ]] \
    || probe_fail "cnn: the file list should be given once"

# 3. cuDNN built for CUDA 12 beside the CUDA 13 runtime: flagged.
probe_build_fakes "$TMP/cuda" 9
probe_compile "$TMP/cuda/libcudnn_graph.so.9" libcudnn_graph.so.9 fake_cudnn.c -DFAKE_MAJOR=9 \
    -DFAKE_CUDART_VERSION=12080 -DFAKE_WITH_GRAPH
LD_LIBRARY_PATH="$TMP/cuda" probe_run "$TMP/cuda.json" --json
probe_expect_rc 1 "CUDA major mismatch" "$TMP/cuda.json"
probe_jq "$TMP/cuda.json" 'any(.problems[]; .kind == "version_mismatch" and (.message | test("built for CUDA 12.8 but the CUDA runtime loaded beside it is CUDA 13.0")))' \
    "CUDA major mismatch: not flagged"
echo "probe_sublibrary: ok"
