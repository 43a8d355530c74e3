#!/usr/bin/env bash
# GPU architectures in `cvm doctor`: a GPU older than the toolkit's first architecture is an
# error, one newer than its last a note (older PTX, JIT-compiled), one it builds for nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
T=$TEST_TMP
fake_driver 580.65.06
doctor_toolkit "$T/cuda-13.0" 13.0.2 13.0.96
doctor_toolkit "$T/cuda-11.2" 11.2.2 11.2.152
expect_rc 0 "$CVM" import "$T/cuda-13.0"
expect_rc 0 "$CVM" import "$T/cuda-11.2"
mkdir -p "$T/p13" "$T/p11"
(cd "$T/p13" && "$CVM" use 13.0 2>/dev/null) && (cd "$T/p11" && "$CVM" use 11.2 2>/dev/null)

fake_gpu "Tesla V100-SXM2-16GB" 7.0
cd "$T/p13"
OUT=$("$CVM" doctor --json) || true
assert_contains "$(finding_codes)" "error:gpu-arch-unsupported"
msg=$(finding_message gpu-arch-unsupported)
assert_contains "$msg" "CUDA 13.0 cannot build for sm_70 (Tesla V100-SXM2-16GB, compute capability 7.0): it starts at compute_75"

fake_gpu "NVIDIA H200" 9.0
OUT=$("$CVM" doctor --json) || true
assert_not_contains "$(finding_codes)" "gpu-arch"
cd "$T/p11"
OUT=$("$CVM" doctor --json) || true
assert_contains "$(finding_codes)" "note:gpu-arch-jit"
msg=$(finding_message gpu-arch-jit)
assert_contains "$msg" "CUDA 11.2 cannot build for sm_90 (NVIDIA H200, compute capability 9.0); its newest PTX, compute_86, will be JIT-compiled"

# A driver too old to answer the compute_cap query: nothing is said about architectures.
printf '#!/bin/sh\ncase "$1" in\n--query-gpu=name,compute_cap) echo "Field \\"compute_cap\\" is not a valid field to query."; exit 2 ;;\n*) echo "NVIDIA H200, 580.65.06" ;;\nesac\n' > "$CVM_NVIDIA_SMI"
OUT=$("$CVM" doctor --json) || true
assert_not_contains "$(finding_codes)" "gpu-arch"
echo "compat_gpu_arch: ok"
