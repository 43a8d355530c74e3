#!/usr/bin/env bash
# cvm-probe against the real cuDNN 9.19 of the development machines (/usr/local/cuda-13.0/lib):
# it loads, reports 91900, and without a driver fails cleanly, naming the missing driver rather
# than blaming cuDNN; with a driver library older than CUDA 13 (Debian's libcuda1) it names both
# versions. Where a driver and GPU exist it must pass instead. Skipped where absent.
set -euo pipefail
source "$(dirname "$0")/lib_probe.sh"
LIB=${CVM_TEST_CUDNN9_LIB:-/usr/local/cuda-13.0/lib}
[ -e "$LIB/libcudnn.so.9" ] && [ -e "$LIB/libcudart.so.13" ] || {
    echo "SKIP: no cuDNN 9 and CUDA 13 runtime in $LIB" >&2
    exit 77
}
command -v jq >/dev/null || { echo "SKIP: jq is not installed" >&2; exit 77; }
[ -x "$PROBE" ] || probe_fail "no cvm-probe at $PROBE"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
REAL_LIB=$(cd "$LIB" && pwd -P)

export LD_LIBRARY_PATH="$LIB"
probe_run "$TMP/real.json" --json --cudnn-major 9
probe_jq "$TMP/real.json" '.cudnn_version.number == 91900 and .cudnn_version.text == "9.19.0"' \
    "real cuDNN: version"
probe_jq "$TMP/real.json" ".cudnn.path == \"$REAL_LIB/libcudnn.so.9\" and .cudart.path == \"$REAL_LIB/libcudart.so.13\"" \
    "real cuDNN: paths"
probe_jq "$TMP/real.json" '.cudnn_version.cudart_number >= 13000 and .runtime_version.number >= 13000' \
    "real cuDNN: CUDA versions"
# cudnnGetVersion is answered by libcudnn_graph.so.9, loaded on demand from the same folder.
probe_jq "$TMP/real.json" "[.libraries[].real_path] | index(\"$REAL_LIB/libcudnn_graph.so.9\") != null" \
    "real cuDNN: the graph sub-library is not reported"
probe_jq "$TMP/real.json" "[.cudnn_folders[]] == [\"$REAL_LIB\"]" "real cuDNN: one folder"

if jq -e '.driver_version.number == 0' "$TMP/real.json" >/dev/null; then
    probe_expect_rc 1 "real cuDNN without a driver" "$TMP/real.json"
    probe_jq "$TMP/real.json" '[.problems[].kind] == ["no_driver"]' \
        "real cuDNN without a driver: the only problem must be the missing driver"
    probe_jq "$TMP/real.json" '.problems[0].message | test("cudaErrorInsufficientDriver")' \
        "real cuDNN without a driver: CUDA's error not named"
    probe_jq "$TMP/real.json" '(.convolutions | length) == 0 and .device.name == null' \
        "real cuDNN without a driver: nothing should have run"
    probe_run "$TMP/real.txt" --cudnn-major 9
    probe_expect_rc 1 "real cuDNN without a driver (text)" "$TMP/real.txt"
    grep -q '^problem \[no_driver\]: no NVIDIA driver' "$TMP/real.txt" || probe_fail "text: no_driver line"
elif jq -e '.driver_version.number < .runtime_version.number' "$TMP/real.json" >/dev/null; then
    # A driver's user-space library older than the runtime, as Debian's libcuda1 (CUDA 12.2) on a
    # build machine without a GPU: the probe must say so, not blame cuDNN or claim no driver.
    probe_expect_rc 1 "real cuDNN with an older driver" "$TMP/real.json"
    probe_jq "$TMP/real.json" '[.problems[].kind] == ["cuda_error"]' \
        "real cuDNN with an older driver: one CUDA problem expected"
    probe_jq "$TMP/real.json" '.problems[0].message | test("cudaErrorInsufficientDriver.*the driver supports CUDA [0-9.]+ but the runtime is CUDA 13")' \
        "real cuDNN with an older driver: the versions not named"
    probe_jq "$TMP/real.json" '(.convolutions | length) == 0' \
        "real cuDNN with an older driver: nothing should have run"
elif jq -e '.device.count == null or .device.count == 0' "$TMP/real.json" >/dev/null; then
    # A driver new enough but no GPU.
    probe_expect_rc 1 "real cuDNN without a GPU" "$TMP/real.json"
    probe_jq "$TMP/real.json" '[.problems[].kind] == ["no_device"]' "real cuDNN without a GPU: no_device expected"
else
    # A machine with a driver: the probe must run the convolutions on its GPU and match.
    probe_expect_rc 0 "real cuDNN with a driver" "$TMP/real.json"
    probe_jq "$TMP/real.json" '.ok and all(.convolutions[]; .ran and .matched)' \
        "real cuDNN with a driver: convolutions"
fi
echo "PASS"
