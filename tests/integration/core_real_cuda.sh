#!/usr/bin/env bash
# The real CUDA 13.0 toolkit with cuDNN 9.19 copied in (assembled from NVIDIA's wheels).
source "$(dirname "$0")/lib.sh"
real=/usr/local/cuda-13.0
[[ -x $real/bin/nvcc ]] || skip "$real is absent"
expect_rc 0 "$CVM" import "$real"
assert_contains "$ERR" "imported cuda 13.0."
assert_contains "$ERR" "imported cudnn 9.19.0.56-cuda13"
cd "$TEST_TMP"
expect_rc 0 "$CVM" use 13+9.19
expect_rc 0 "$CVM" current --json
active=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["active"])' <<<"$OUT")
[[ $active == 13.0.*+9.19.0.56-cuda13 ]] || fail "active is $active"
expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$OUT" "release 13.0"
# cuDNN lives inside the toolkit, so CUDA_PATH is the toolkit itself.
expect_rc 0 "$CVM" exec -- sh -c 'echo "$CUDA_PATH"; test -f "$CUDA_PATH/include/cudnn_version.h"'
assert_eq "$OUT" "$real"
# nvcc really compiles through the shim (host code only: no GPU here).
printf 'int main(){return 0;}\n' > t.cu
expect_rc 0 "$CVM_ROOT/shims/nvcc" -o t t.cu
./t
echo "core_real_cuda: ok ($active)"
