#!/usr/bin/env bash
# `cvm probe` end to end with the fakes: import a toolkit and a cuDNN, select them, and probe in
# the selection's environment. The selection's folders come first and a stray cuDNN folder on
# LD_LIBRARY_PATH is dropped, so the probe loads exactly the selected build; a stray sub-library
# that plain cvm-probe picks up is thereby shown to be cvm's to remove.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
source "$HERE/lib_probe.sh"
probe_need_tools
[ -x "$CVM" ] || skip "no cvm at $CVM"
"$CVM" probe --help >/dev/null 2>&1 || skip "this cvm has no probe command"
T=$TEST_TMP

# A CUDA 13.0.2 toolkit whose lib64 holds the fake runtime, and a cuDNN 9.19.0 for CUDA 13.
make_toolkit "$T/cuda-13.0" 13.0.2
probe_build_fakes "$T/fakes" 9
cp "$T/fakes/libcudart.so.13" "$T/cuda-13.0/lib64/libcudart.so.13"
make_cudnn "$T/cudnn-linux-x86_64-9.19.0.56_cuda13-archive" 9.19.0
CUDNN_LIB="$T/cudnn-linux-x86_64-9.19.0.56_cuda13-archive/lib"
cp "$T/fakes"/libcudnn*.so.9 "$CUDNN_LIB/"
expect_rc 0 "$CVM" import "$T/cuda-13.0"
expect_rc 0 "$CVM" import "$T/cudnn-linux-x86_64-9.19.0.56_cuda13-archive"
mkdir -p "$T/project"
cd "$T/project"
expect_rc 0 "$CVM" use 13+9

# A stray cuDNN folder (only libcudnn_cnn.so.9) first on the inherited LD_LIBRARY_PATH.
mkdir -p "$T/stray"
cp "$T/fakes/libcudnn_cnn.so.9" "$T/stray/"
export LD_LIBRARY_PATH="$T/stray"

expect_rc 0 "$CVM" probe --json
printf '%s\n' "$OUT" >"$T/probe.json"
probe_jq "$T/probe.json" '.ok and .problems == []' "cvm probe: not ok"
probe_jq "$T/probe.json" ".cudnn.path == \"$CUDNN_LIB/libcudnn.so.9\"" "cvm probe: cuDNN path"
probe_jq "$T/probe.json" ".cudart.path == \"$T/cuda-13.0/lib64/libcudart.so.13\"" "cvm probe: runtime path"
probe_jq "$T/probe.json" "[.libraries[].real_path] | index(\"$CUDNN_LIB/libcudnn_cnn.so.9\") != null" \
    "cvm probe: the selected sub-library"
probe_jq "$T/probe.json" "[.cudnn_folders[]] == [\"$CUDNN_LIB\"]" "cvm probe: one cuDNN folder"

# The human report goes to stdout, its exit code is cvm's.
expect_rc 0 "$CVM" probe --benchmark
assert_contains "$OUT" "result: OK"
assert_contains "$OUT" "benchmark n8 c64 56x56 k64 3x3 pad1 stride1 (fastest first):"

# A SPEC argument overrides the selection; a bad one is a usage error.
expect_rc 0 "$CVM" probe 13.0+9.19 --json
expect_rc 2 "$CVM" probe '13;rm'
# An unknown selection fails with what to run.
expect_rc 1 "$CVM" probe 12.4
# Problems found by the helper come back as exit code 1.
FAKE_CUDNN_WRONG=1 expect_rc 1 "$CVM" probe --json
printf '%s\n' "$OUT" >"$T/wrong.json"
probe_jq "$T/wrong.json" 'any(.problems[]; .kind == "wrong_result")' "cvm probe: wrong result"

# The selected folder holding another cuDNN than cvm recorded (its library says 9.14.0, the
# entry 9.19.0.56) is a problem too, though the path is right.
FAKE_CUDNN_VERSION=91400 expect_rc 1 "$CVM" probe --json
printf '%s\n' "$OUT" >"$T/other.json"
probe_jq "$T/other.json" 'any(.problems[]; .kind == "not_selected" and (.message | contains("reports cuDNN 9.14.0, but the selection is cuDNN 9.19.0")))' \
    "cvm probe: a cuDNN of another version in the selected folder"

# NVIDIA's system cuDNN packages (9.14.0.64 for CUDA 13): imported as a root of links to the
# multiarch folder, the probe loads the libraries through those links, which counts as selected.
LIBS_FROM="$T/fakes" make_apt_cudnn "$T/machine" 9.14.0.64 13
expect_rc 0 "$CVM" import "$T/machine/usr"
mkdir -p "$T/system-project"
(
    cd "$T/system-project"
    expect_rc 0 "$CVM" use 13+9.14
    FAKE_CUDNN_VERSION=91400 expect_rc 0 "$CVM" probe --json
    printf '%s\n' "$OUT" >"$T/system.json"
)
probe_jq "$T/system.json" '.ok and .problems == []' "cvm probe of a system cuDNN through its root of links: not ok"
probe_jq "$T/system.json" "[.libraries[].real_path] | index(\"$T/machine/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0\") != null" \
    "cvm probe of a system cuDNN: the packaged file"

# An NCCL in the selection: probed by default (one communicator over the fake's two GPUs), from
# the merged view, its version the selection's; a toolkit with NCCL and no cuDNN probes NCCL only.
# The machine's own libnccl.so.2 (this one's CUDA 13.0 has the wheel's in ld.so.cache) loses to it.
probe_build_nccl "$T/nccl-lib" 2.28.9 22809 13.0
mkdir -p "$T/nccl_2.28.9-1+cuda13.0_x86_64/lib" "$T/nccl_2.28.9-1+cuda13.0_x86_64/include"
cp -P "$T/nccl-lib"/libnccl.so* "$T/nccl_2.28.9-1+cuda13.0_x86_64/lib/"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 9\n' > "$T/nccl_2.28.9-1+cuda13.0_x86_64/include/nccl.h"
expect_rc 0 "$CVM" import "$T/nccl_2.28.9-1+cuda13.0_x86_64"
mkdir -p "$T/nccl-project"
(
    cd "$T/nccl-project"
    expect_rc 0 "$CVM" use 13+9.19+nccl2.28
    FAKE_CUDART_DEVICES=9.0,9.0 expect_rc 0 "$CVM" probe --json
    printf '%s\n' "$OUT" >"$T/nccl.json"
    expect_rc 0 "$CVM" use 13+nccl2.28
    expect_rc 0 "$CVM" probe --json
    printf '%s\n' "$OUT" >"$T/nccl-only.json"
    # Selected without NCCL, --nccl asks for it anyway (whichever the machine gives).
    expect_rc 0 "$CVM" use 13+9.19
    LD_LIBRARY_PATH="$T/nccl-lib" expect_rc 0 "$CVM" probe --nccl --json
    printf '%s\n' "$OUT" >"$T/nccl-asked.json"
)
probe_jq "$T/nccl.json" '.ok and .problems == [] and .nccl.ranks == 2 and (.convolutions | length) > 0' \
    "cvm probe with NCCL selected: not ok"
probe_jq "$T/nccl.json" ".nccl.library.path == \"$T/nccl_2.28.9-1+cuda13.0_x86_64/lib/libnccl.so.2.28.9\"" \
    "cvm probe: NCCL from the selection"
probe_jq "$T/nccl-only.json" '.ok and .cudnn_skipped and .convolutions == [] and .nccl.version.text == "2.28.9"' \
    "cvm probe with NCCL and no cuDNN selected: NCCL only"
probe_jq "$T/nccl-asked.json" '.ok and .nccl.version.text == "2.28.9" and (.convolutions | length) > 0' "cvm probe --nccl"

# Without cvm's environment, the same stray folder wins and the mixture shows.
LD_LIBRARY_PATH="$T/stray:$CUDNN_LIB:$T/cuda-13.0/lib64" probe_run "$T/plain.json" --json
probe_expect_rc 1 "plain cvm-probe with a stray sub-library" "$T/plain.json"
probe_jq "$T/plain.json" 'any(.problems[]; .kind == "mixed_cudnn_folders")' "plain: no mixture"

# The helper must be next to cvm.
mkdir -p "$T/lonely"
cp "$CVM" "$T/lonely/cvm"
for lib in $(ldd "$CVM" 2>/dev/null | awk '/=> \// && /toml/ {print $3}'); do cp "$lib" "$T/lonely/"; done
LD_LIBRARY_PATH="$T/lonely" expect_rc 1 "$T/lonely/cvm" probe
assert_contains "$ERR" "cvm-probe"
echo PASS
