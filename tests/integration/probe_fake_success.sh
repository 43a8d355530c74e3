#!/usr/bin/env bash
# cvm-probe against fake cuDNN 9, 8 and 7 builds and a fake CUDA runtime: the library search,
# the sub-libraries' paths, the versions, the convolutions and the benchmark.
set -euo pipefail
source "$(dirname "$0")/lib_probe.sh"
probe_need_tools
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

probe_build_fakes "$TMP/cudnn9" 9
export LD_LIBRARY_PATH="$TMP/cudnn9"
probe_run "$TMP/out.json" --json
probe_expect_rc 0 "cuDNN 9 fake" "$TMP/out.json"
probe_jq "$TMP/out.json" '.ok == true' "cuDNN 9: report not ok"
probe_jq "$TMP/out.json" '.cudnn_version.number == 91900 and .cudnn_version.text == "9.19.0"' \
    "cuDNN 9: version"
probe_jq "$TMP/out.json" '.cudnn_version.cudart_text == "13.0" and .runtime_version.number == 13000' \
    "cuDNN 9: CUDA versions"
probe_jq "$TMP/out.json" ".cudnn.path == \"$TMP/cudnn9/libcudnn.so.9\"" "cuDNN 9: front path"
probe_jq "$TMP/out.json" ".cudart.path == \"$TMP/cudnn9/libcudart.so.13\"" "cuDNN 9: runtime path"
probe_jq "$TMP/out.json" '.device.name == "Fake GPU (CPU convolution)" and
    .device.compute_capability == "9.0" and .device.count == 1 and .driver_version.number == 13000' \
    "cuDNN 9: device"
probe_jq "$TMP/out.json" '.devices == [{"index": 0, "name": "Fake GPU (CPU convolution)", "compute_capability": "9.0"}]' \
    "cuDNN 9: the devices"
# A machine mixing GPUs: every one's compute capability, the probed one (0) computes.
FAKE_CUDART_DEVICES=9.0,8.6 probe_run "$TMP/two.json" --json
probe_jq "$TMP/two.json" '.ok == true and .device.count == 2 and .device.compute_capability == "9.0" and
    [.devices[].compute_capability] == ["9.0", "8.6"] and .devices[1].name == "Fake GPU 1"' \
    "two devices: their compute capabilities"
FAKE_CUDART_DEVICES=9.0,8.6 probe_run "$TMP/two.txt"
cat "$TMP/two.txt" "$TMP/two.txt.err" | grep -q "^devices 0: Fake GPU (CPU convolution) (9.0), 1: Fake GPU 1 (8.6)$" ||
    { echo "FAIL: two devices: the text report lacks them" >&2; cat "$TMP/two.txt" >&2; exit 1; }
for lib in libcudnn.so.9 libcudnn_graph.so.9 libcudnn_ops.so.9 libcudnn_cnn.so.9 libcudart.so.13; do
    probe_jq "$TMP/out.json" "[.libraries[].real_path] | index(\"$TMP/cudnn9/$lib\") != null" \
        "cuDNN 9: $lib (loaded on demand) missing from the libraries"
done
probe_jq "$TMP/out.json" '[.libraries[].real_path | select(test("libcudnn_adv"))] | length == 0' \
    "cuDNN 9: a sub-library the probe never needs was reported loaded"
probe_jq "$TMP/out.json" ".cudnn_folders == [\"$TMP/cudnn9\"]" "cuDNN 9: one folder"
probe_jq "$TMP/out.json" '(.convolutions | length) >= 3 and all(.convolutions[]; .ran and .matched)' \
    "cuDNN 9: convolutions"
probe_jq "$TMP/out.json" 'any(.convolutions[]; .stride[0] == 2) and
    any(.convolutions[]; .pad[0] > 0) and all(.convolutions[]; .algorithm == "IMPLICIT_GEMM") and
    .algorithm_choice == "fixed"' \
    "cuDNN 9: shapes and the fixed algorithm"

# Without --benchmark no algorithm search runs (cuDNN's heuristics cost more than the
# convolutions); with it, the checks run the heuristic's first choice (the fake's is GEMM).
rm -f "$TMP/trace"
FAKE_CUDNN_TRACE="$TMP/trace" probe_run "$TMP/fixed.json" --json
probe_expect_rc 0 "no search" "$TMP/fixed.json"
[ ! -s "$TMP/trace" ] || { cat "$TMP/trace" >&2; probe_fail "the probe searched for an algorithm without --benchmark"; }
FAKE_CUDNN_TRACE="$TMP/trace" probe_run "$TMP/search.json" --json --benchmark
probe_expect_rc 0 "search" "$TMP/search.json"
grep -qx cudnnGetConvolutionForwardAlgorithm_v7 "$TMP/trace" || probe_fail "--benchmark: no heuristic asked"
grep -qx cudnnFindConvolutionForwardAlgorithm "$TMP/trace" || probe_fail "--benchmark: no Find"
probe_jq "$TMP/search.json" 'all(.convolutions[]; .algorithm == "GEMM" and .ran and .matched) and
    .algorithm_choice == "heuristic"' "--benchmark: the checks run the heuristic's choice"
# The fixed algorithm (the implicit GEMM, 0) refused, as on a GPU or shape without its kernel:
# the implicit precomputed GEMM instead, still checked against the CPU.
FAKE_CUDNN_REFUSE_ALGO=0 probe_run "$TMP/fallback.json" --json
probe_expect_rc 0 "fallback" "$TMP/fallback.json"
probe_jq "$TMP/fallback.json" 'all(.convolutions[]; .algorithm == "IMPLICIT_PRECOMP_GEMM" and .ran and .matched and .checked > 0)' \
    "fallback: the implicit precomputed GEMM when the implicit one is refused"
# Both refused: one problem naming the refusal, no crash.
FAKE_CUDNN_REFUSE_ALGO=0 FAKE_CUDNN_FAIL=cudnnConvolutionForward:3000 probe_run "$TMP/none.json" --json
probe_expect_rc 1 "no algorithm" "$TMP/none.json"
probe_jq "$TMP/none.json" '.problems[0].kind == "cudnn_error" and (.problems[0].message | test("CUDNN_STATUS_NOT_SUPPORTED"))' \
    "no algorithm: the refusal is named"
# The probe asks for one hardware work queue (CUDA_DEVICE_MAX_CONNECTIONS=1) before the driver
# starts: its context is made and torn down faster. A value the user set is kept.
rm -f "$TMP/env.log"
FAKE_CUDART_ENV_LOG="$TMP/env.log" probe_run "$TMP/connections.json" --json
FAKE_CUDART_ENV_LOG="$TMP/env.log" CUDA_DEVICE_MAX_CONNECTIONS=4 probe_run "$TMP/connections4.json" --json
[ "$(tr '\n' ' ' <"$TMP/env.log")" = "1 4 " ] ||
    probe_fail "CUDA_DEVICE_MAX_CONNECTIONS when the driver started: want '1 4 ', got '$(tr '\n' ' ' <"$TMP/env.log")'"
# CUDA_MODULE_LOADING=EAGER makes every CUDA program start seconds slower: said, not fatal.
CUDA_MODULE_LOADING=EAGER probe_run "$TMP/eager.json" --json
probe_expect_rc 0 "eager" "$TMP/eager.json"
probe_jq "$TMP/eager.json" '.warnings | any(test("CUDA_MODULE_LOADING=EAGER is set"))' "eager: no warning"
probe_jq "$TMP/out.json" '.warnings == []' "a warning without CUDA_MODULE_LOADING"
probe_jq "$TMP/out.json" 'all(.convolutions[]; .math == "FMA") and .problems == []' \
    "cuDNN 9: FMA math, no problems"

# The benchmark lists every algorithm, fastest first, and checks each one that runs.
probe_run "$TMP/bench.json" --json --benchmark
probe_expect_rc 0 "benchmark" "$TMP/bench.json"
probe_jq "$TMP/bench.json" '(.benchmark | length) == (.convolutions | length) + 1' "benchmark shapes"
probe_jq "$TMP/bench.json" 'all(.benchmark[]; (.algorithms | length) == 8)' "benchmark algorithms"
probe_jq "$TMP/bench.json" 'all(.benchmark[]; [.algorithms[] | select(.status == "CUDNN_STATUS_SUCCESS") | .time_ms] as $t | $t == ($t | sort))' \
    "benchmark: not fastest first"
probe_jq "$TMP/bench.json" 'all(.benchmark[:-1][].algorithms[] | select(.status == "CUDNN_STATUS_SUCCESS"); .verified and .matched)' \
    "benchmark: an algorithm was not verified"
probe_jq "$TMP/bench.json" '.benchmark[-1].algorithms[0] | .verified and .matched and .checked == 8192' \
    "benchmark: the fastest algorithm on the large shape was not verified"
probe_jq "$TMP/bench.json" '[.benchmark[-1].algorithms[] | select(.verified)] | length == 1' \
    "benchmark: only the fastest algorithm on the large shape is verified"
probe_jq "$TMP/bench.json" 'any(.benchmark[].algorithms[]; .status == "CUDNN_STATUS_NOT_SUPPORTED (3000)")' \
    "benchmark: a refused algorithm is named"

# The human report.
probe_run "$TMP/out.txt"
probe_expect_rc 0 "text report" "$TMP/out.txt"
grep -q '^cuDNN   9.19.0 (91900), built for CUDA 13.0' "$TMP/out.txt" || probe_fail "text: version line"
grep -q '^result: OK' "$TMP/out.txt" || probe_fail "text: result line"
grep -q "$TMP/cudnn9/libcudnn_cnn.so.9" "$TMP/out.txt" || probe_fail "text: sub-library path"

# cuDNN 8: libcudnn.so.8 with the _infer/_train sub-libraries, built for CUDA 12.2.
probe_build_fakes "$TMP/cudnn8" 8
export LD_LIBRARY_PATH="$TMP/cudnn8"
probe_run "$TMP/out8.json" --json --cudnn-major 8
probe_expect_rc 0 "cuDNN 8 fake" "$TMP/out8.json"
probe_jq "$TMP/out8.json" '.cudnn.name == "libcudnn.so.8" and .cudnn_version.text == "8.9.7"' \
    "cuDNN 8: version"
probe_jq "$TMP/out8.json" ".cudart.path == \"$TMP/cudnn8/libcudart.so.12\"" \
    "cuDNN 8: the CUDA runtime it was built for comes first"
probe_jq "$TMP/out8.json" "[.libraries[].real_path] | index(\"$TMP/cudnn8/libcudnn_cnn_infer.so.8\") != null" \
    "cuDNN 8: sub-library"

# cuDNN 7: one library holding everything.
probe_build_fakes "$TMP/cudnn7" 7
export LD_LIBRARY_PATH="$TMP/cudnn7"
probe_run "$TMP/out7.json" --json --cudnn-major 7
probe_expect_rc 0 "cuDNN 7 fake" "$TMP/out7.json"
probe_jq "$TMP/out7.json" '.cudnn_version.text == "7.6.5" and .ok' "cuDNN 7: version"
probe_jq "$TMP/out7.json" 'all(.convolutions[]; .math == "DEFAULT")' "cuDNN 7 has no FMA math mode"
echo "PASS"
