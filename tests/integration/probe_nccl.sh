#!/usr/bin/env bash
# cvm-probe --nccl against a fake libnccl.so.2 (NCCL's banner and ncclGetVersion, the all-reduce
# done on the CPU) and the fake CUDA runtime with one, two or three "GPUs": the exact check, the
# sizes and bandwidths, the topology NCCL's log names, the version read from the library, and
# every failure as one problem.
set -euo pipefail
source "$(dirname "$0")/lib_probe.sh"
probe_need_tools
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

probe_build_fakes "$TMP/cudnn9" 9
probe_build_nccl "$TMP/nccl" 2.28.9 22809 13.0
export LD_LIBRARY_PATH="$TMP/cudnn9:$TMP/nccl"
SMALL=(--nccl-min-bytes 4096 --nccl-max-bytes 65536)

# Two GPUs: every size from 4 KiB to 64 KiB, every rank's result compared with the exact sums.
# NCCL's streams must overlap: the probe leaves CUDA_DEVICE_MAX_CONNECTIONS alone with --nccl.
FAKE_CUDART_ENV_LOG="$TMP/env.log" FAKE_CUDART_DEVICES=9.0,9.0 probe_run "$TMP/two.json" --json --nccl "${SMALL[@]}"
[ "$(sort -u "$TMP/env.log")" = unset ] || probe_fail "--nccl: CUDA_DEVICE_MAX_CONNECTIONS was set ($(sort -u "$TMP/env.log"))"
probe_expect_rc 0 "two GPUs" "$TMP/two.json"
probe_jq "$TMP/two.json" '.ok and .nccl.ranks == 2 and .nccl.one_gpu == false and .nccl.note == null' "two GPUs: ranks"
probe_jq "$TMP/two.json" '[.nccl.all_reduce[].bytes] == [4096, 8192, 16384, 32768, 65536]' "two GPUs: sizes"
probe_jq "$TMP/two.json" 'all(.nccl.all_reduce[]; .matched and .mismatched == 0 and .checked == 2 * .bytes / 4)' \
    "two GPUs: every rank's every float checked"
probe_jq "$TMP/two.json" 'all(.nccl.all_reduce[]; .algbw_gbs > 0 and (.busbw_gbs - .algbw_gbs | fabs) <= 1e-5 * .algbw_gbs)' \
    "two GPUs: busbw = algbw * 2(n-1)/n = algbw"
probe_jq "$TMP/two.json" '.nccl.version == {"code": 22809, "text": "2.28.9"} and
    .nccl.banner == "NCCL version 2.28.9+cuda13.0" and .nccl.built_for_cuda == "13.0"' "two GPUs: version"
probe_jq "$TMP/two.json" ".nccl.library.path == \"$TMP/nccl/libnccl.so.2.28.9\" and .nccl.library.name == \"libnccl.so.2\"" \
    "two GPUs: the library loaded by its standard name"
probe_jq "$TMP/two.json" '.nccl.peer_access == [[null, true], [true, null]] and
    [.nccl.devices[].bus_id] == ["0000:18:00.0", "0000:19:00.0"]' "two GPUs: peer access and bus ids"
probe_jq "$TMP/two.json" '.nccl.links == [{"from": 0, "to": 1, "transport": "P2P/CUMEM/read", "channels": 2},
    {"from": 1, "to": 0, "transport": "P2P/CUMEM/read", "channels": 2}]' "two GPUs: NCCL's links from its log"
probe_jq "$TMP/two.json" "[.libraries[].real_path] | index(\"$TMP/nccl/libnccl.so.2.28.9\") != null" \
    "two GPUs: libnccl among the libraries"
probe_jq "$TMP/two.json" '(.convolutions | length) > 0 and .cudnn_skipped == false' "two GPUs: cuDNN still probed"

# Three GPUs without peer-to-peer: busbw = algbw * 4/3, NCCL over shared memory.
FAKE_CUDART_DEVICES=9.0,9.0,9.0 FAKE_CUDART_NO_PEER=1 NCCL_P2P_DISABLE=1 NCCL_HOME=/opt/nccl \
    probe_run "$TMP/three.json" --json --nccl --no-cudnn "${SMALL[@]}"
probe_expect_rc 0 "three GPUs" "$TMP/three.json"
probe_jq "$TMP/three.json" 'all(.nccl.all_reduce[]; (.busbw_gbs - .algbw_gbs * 4 / 3 | fabs) < 1e-4 * .busbw_gbs)' \
    "three GPUs: busbw = algbw * 4/3"
probe_jq "$TMP/three.json" '.cudnn_skipped and .convolutions == [] and .ok and
    all(.nccl.peer_access[][]; . != true) and all(.nccl.links[]; .transport == "SHM/direct/direct") and
    .nccl.environment == ["NCCL_P2P_DISABLE=1"]' "three GPUs: no peer access, SHM, the variable named"
probe_run "$TMP/three.txt" --nccl --no-cudnn "${SMALL[@]}"
FAKE_CUDART_DEVICES=9.0,9.0,9.0 probe_run "$TMP/three.txt" --nccl --no-cudnn "${SMALL[@]}"
grep -q '^link    0 -> 1 via P2P/CUMEM/read (2 channels)$' "$TMP/three.txt" || probe_fail "text: link line"
grep -q '^  64 KiB .* GB/s .* GB/s  exact$' "$TMP/three.txt" || probe_fail "text: the 64 KiB row"
grep -q "^result: OK, NCCL's all-reduce over 3 GPUs gave the exact sums$" "$TMP/three.txt" || probe_fail "text: result"

# One GPU: load, init and one checked all-reduce of the smallest size; no bandwidth.
probe_run "$TMP/one.json" --json --nccl
probe_expect_rc 0 "one GPU" "$TMP/one.json"
probe_jq "$TMP/one.json" '.nccl.one_gpu and (.nccl.note | test("no link is measured")) and
    (.nccl.all_reduce | length) == 1 and .nccl.all_reduce[0].bytes == 8388608 and
    .nccl.all_reduce[0].matched and .nccl.all_reduce[0].algbw_gbs == null and .nccl.all_reduce[0].busbw_gbs == null' \
    "one GPU: one checked all-reduce, no bandwidth"
probe_run "$TMP/one.txt" --nccl --no-cudnn
grep -q "^one GPU: its one-rank all-reduce moves nothing between GPUs, so no link is measured$" "$TMP/one.txt" ||
    probe_fail "one GPU: the text does not say that no link is measured"
# One GPU with --benchmark: every size timed, to set beside nccl-tests -g 1 (algbw = bytes/time,
# busbw 0 as nccl-tests has it for one rank). JSON carries six significant digits, so time and
# algbw are each rounded by up to 5e-6 of themselves: the check allows 1e-4.
probe_run "$TMP/one-bench.json" --json --nccl --no-cudnn --benchmark "${SMALL[@]}"
probe_expect_rc 0 "one GPU, --benchmark" "$TMP/one-bench.json"
probe_jq "$TMP/one-bench.json" '.nccl.one_gpu and ([.nccl.all_reduce[].bytes] == [4096, 8192, 16384, 32768, 65536]) and
    all(.nccl.all_reduce[]; .matched and .algbw_gbs > 0 and .busbw_gbs == 0 and
        ((.algbw_gbs - .bytes / .time_us / 1000) | fabs) < 1e-4 * .algbw_gbs)' \
    "one GPU, --benchmark: every size timed, algbw = bytes/time, busbw 0"

# A wrong sum, and a rank whose result is never written: wrong_result naming the rank.
FAKE_CUDART_DEVICES=9.0,9.0 FAKE_NCCL_WRONG=1 probe_run "$TMP/wrong.json" --json --nccl --no-cudnn "${SMALL[@]}"
probe_expect_rc 1 "wrong sum" "$TMP/wrong.json"
probe_jq "$TMP/wrong.json" '.ok == false and .problems[0].kind == "wrong_result" and
    (.problems[0].message | test("rank 1, element 512: .* instead of"))' "wrong sum: the problem"
FAKE_CUDART_DEVICES=9.0,9.0 FAKE_NCCL_SKIP_RANK=0 probe_run "$TMP/skip.json" --json --nccl --no-cudnn "${SMALL[@]}"
probe_expect_rc 1 "unwritten rank" "$TMP/skip.json"
probe_jq "$TMP/skip.json" 'any(.problems[]; .kind == "wrong_result" and (.message | test("rank 0, element 0: -?nan instead of -53")))' \
    "unwritten rank: its NaNs are wrong"

# ncclCommInitAll fails (what a 64 MB /dev/shm does): nccl_error with NCCL's own last error.
FAKE_CUDART_DEVICES=9.0,9.0 FAKE_NCCL_FAIL=ncclCommInitAll:2 probe_run "$TMP/init.json" --json --nccl "${SMALL[@]}"
probe_expect_rc 1 "init fails" "$TMP/init.json"
probe_jq "$TMP/init.json" '[.problems[].kind] == ["nccl_error"] and
    (.problems[0].message | test("ncclCommInitAll over 2 GPUs failed: ncclCommInitAll returned 2 \\(unhandled system error.*: fake: posix_fallocate failed"))' \
    "init fails: the problem"
FAKE_CUDART_DEVICES=9.0,9.0 FAKE_NCCL_FAIL=ncclAllReduce:4 probe_run "$TMP/ar.json" --json --nccl --no-cudnn "${SMALL[@]}"
probe_expect_rc 1 "all-reduce fails" "$TMP/ar.json"
probe_jq "$TMP/ar.json" '.problems[0].kind == "nccl_error" and (.problems[0].message | test("all-reduce of 4 KiB on rank 0: ncclAllReduce returned 4"))' \
    "all-reduce fails: the problem"
# Not enough GPU memory for the buffers.
FAKE_CUDART_DEVICES=9.0,9.0 FAKE_CUDART_MALLOC_LIMIT=32768 probe_run "$TMP/oom.json" --json --nccl --no-cudnn "${SMALL[@]}"
probe_expect_rc 1 "out of memory" "$TMP/oom.json"
probe_jq "$TMP/oom.json" '.problems[0].kind == "cuda_error" and (.problems[0].message | test("cudaMalloc \\(2 x 64 KiB\\) on GPU 0 returned cudaErrorMemoryAllocation"))' \
    "out of memory: the problem"

# NCCL's version from the library: the old encoding (2.8.4 -> 2804), a banner that contradicts
# ncclGetVersion, and a build for another CUDA major than the runtime.
probe_build_nccl "$TMP/nccl28" 2.8.4 2804 11.2
LD_LIBRARY_PATH="$TMP/cudnn9:$TMP/nccl28" probe_run "$TMP/old.json" --json --nccl --no-cudnn
probe_jq "$TMP/old.json" '.nccl.version == {"code": 2804, "text": "2.8.4"} and .nccl.built_for_cuda == "11.2"' \
    "2.8.4: the old version code"
probe_jq "$TMP/old.json" '.ok and (.warnings | any(test("was built for CUDA 11.2, the CUDA runtime loaded beside it is CUDA 13.0: install the NCCL build for CUDA 13 \\(`cvm install nccl 2.8.4 --cuda 13`\\)")))' \
    "2.8.4: another CUDA major is a warning"
probe_build_nccl "$TMP/liar" 2.28.9 22803 13.0
LD_LIBRARY_PATH="$TMP/cudnn9:$TMP/liar" probe_run "$TMP/liar.json" --json --nccl --no-cudnn
probe_expect_rc 1 "banner and ncclGetVersion disagree" "$TMP/liar.json"
probe_jq "$TMP/liar.json" 'any(.problems[]; .kind == "version_mismatch" and
    (.message | test("says \"NCCL version 2.28.9\\+cuda13.0\" but its ncclGetVersion returns 22803 \\(NCCL 2.28.3\\)")))' \
    "banner and ncclGetVersion disagree: the problem"

# The selection's NCCL is expected: loaded from elsewhere, or another version, is not_selected.
probe_run "$TMP/where.json" --json --nccl --no-cudnn --expect-nccl-dir "$TMP/nccl28"
probe_jq "$TMP/where.json" "any(.problems[]; .kind == \"not_selected\" and (.message | test(\"the selected NCCL is in $TMP/nccl28\")))" \
    "another folder: not_selected"
probe_run "$TMP/ver.json" --json --nccl --no-cudnn --expect-nccl-dir "$TMP/nccl" --expect-nccl-version 2.27
probe_jq "$TMP/ver.json" '[.problems[].kind] == ["not_selected"] and (.problems[0].message | test("reports NCCL 2.28.9, but the selection is NCCL 2.27"))' \
    "another version: not_selected"
probe_run "$TMP/right.json" --json --nccl --no-cudnn --expect-nccl-dir "$TMP/nccl" --expect-nccl-version 2.28
probe_expect_rc 0 "the selected NCCL" "$TMP/right.json"

# No NCCL at all: library_not_found naming it, the folders searched listed. A machine whose
# ld.so.cache has an NCCL (this one's CUDA 13.0 has the wheel's) runs the probe through the
# loader without its cache.
LOADER=$(ldd "$PROBE" | sed -n 's|^[[:space:]]*\(/[^ ]*ld-linux[^ ]*\) .*|\1|p' | head -n1)
# The whole listing first: with pipefail, grep -q leaving early can kill ldconfig (SIGPIPE) and
# make a match look like none.
if grep -q 'libnccl\.so\.2 ' <<<"$(ldconfig -p 2>/dev/null)"; then
    [ -x "$LOADER" ] || { echo "SKIP: the loader cache has an NCCL and no loader to bypass it" >&2; exit 77; }
    PROBE_SAVED=$PROBE
    PROBE="$TMP/probe-no-cache"
    printf '#!/bin/sh\nexec %s --inhibit-cache %s "$@"\n' "$LOADER" "$PROBE_SAVED" >"$PROBE"
    chmod +x "$PROBE"
fi
LD_LIBRARY_PATH="$TMP/cudnn9" probe_run "$TMP/none.json" --json --nccl
PROBE=${PROBE_SAVED:-$PROBE}
probe_expect_rc 1 "no NCCL" "$TMP/none.json"
probe_jq "$TMP/none.json" '.nccl.library.loaded == false and any(.problems[]; .kind == "library_not_found" and
    (.message | test("^NCCL could not be loaded \\(tried libnccl.so.2\\)"))) and (.searched_folders | length) > 0' \
    "no NCCL: the problem"

# The user's NCCL_DEBUG=INFO: NCCL's log goes to stderr, stdout stays one JSON document.
FAKE_CUDART_DEVICES=9.0,9.0 NCCL_DEBUG=INFO probe_run "$TMP/debug.json" --json --nccl --no-cudnn "${SMALL[@]}"
probe_expect_rc 0 "NCCL_DEBUG=INFO" "$TMP/debug.json"
jq -e . "$TMP/debug.json" >/dev/null || probe_fail "NCCL_DEBUG=INFO: stdout is not one JSON document"
grep -q "NCCL INFO Channel 00/0 : 0\[0\] -> 1\[1\] via P2P/CUMEM/read" "$TMP/debug.json.err" ||
    probe_fail "NCCL_DEBUG=INFO: NCCL's log is not on stderr"

# Usage.
probe_run "$TMP/usage.txt" --no-cudnn
probe_expect_rc 2 "--no-cudnn alone" "$TMP/usage.txt"
grep -q "no-cudnn leaves nothing to probe without --nccl" "$TMP/usage.txt.err" || probe_fail "--no-cudnn alone: the line"
probe_run "$TMP/usage.txt" --nccl --nccl-max-bytes 2
probe_expect_rc 2 "a size too small" "$TMP/usage.txt"
echo "PASS"
