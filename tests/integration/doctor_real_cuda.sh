#!/usr/bin/env bash
# cvm doctor over the real CUDA 13.0 toolkit with cuDNN 9 of /usr/local/cuda-13.0: through cvm
# the libraries load from it, every cuDNN 9 sub-library beside libcudnn.so.9.
source "$(dirname "$0")/lib.sh"
real=/usr/local/cuda-13.0
[[ -f "$real/lib/libcudnn.so.9" || -f "$real/lib64/libcudnn.so.9" ]] || skip "$real with cuDNN 9 is absent"
command -v python3 >/dev/null || skip "python3 is needed to read the JSON"
export CVM_PYTHON="" CVM_PROC_DRIVER_VERSION="$TEST_TMP/none" CVM_NVIDIA_SMI="$TEST_TMP/none" CVM_LIBCUDA=""
export CVM_COMPILER_PATH=/usr/bin # CUDA 13.0 supports the machine's gcc 12
unset LD_LIBRARY_PATH || true

expect_rc 0 "$CVM" import "$real"
mkdir -p "$TEST_TMP/proj"
cd "$TEST_TMP/proj"
expect_rc 0 "$CVM" use 13.0+9
expect_rc 0 "$CVM" exec -- "$CVM" doctor --json
assert_eq "$(json_get 'd["healthy"]')" "True"
subs=$(json_get 'sorted(l["name"] for l in d["libraries"] if l["scenario"] == "current" and l["family"] == "cudnn" and not l["main"])')
assert_eq "$subs" "['libcudnn_adv.so.9', 'libcudnn_cnn.so.9', 'libcudnn_engines_precompiled.so.9', 'libcudnn_engines_runtime_compiled.so.9', 'libcudnn_graph.so.9', 'libcudnn_heuristic.so.9', 'libcudnn_ops.so.9']"
outside=$(json_get '[l["name"] for l in d["libraries"] if l["scenario"] == "current" and l["from_selection"] is not True]')
assert_eq "$outside" "[]"
cudnn=$(json_get '[l["real_path"] for l in d["libraries"] if l["scenario"] == "current" and l["name"] == "libcudnn.so.9"][0]')
assert_contains "$cudnn" "$real/"
expect_rc 0 "$CVM" exec -- "$CVM" doctor
assert_contains "$OUT" "7 sub-libraries"
echo "PASS"
