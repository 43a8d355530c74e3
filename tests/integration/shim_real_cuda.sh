#!/usr/bin/env bash
# The shims against real installs: CUDA 13.0 in /usr/local/cuda-13.0 through the shim where it is
# selected, and Debian's packaged CUDA 11.8 (/usr/bin/nvcc) through fall-through where nothing is.
source "$(dirname "$0")/lib.sh"
real=/usr/local/cuda-13.0
[[ -x $real/bin/nvcc ]] || skip "$real is absent"
need_debian_cuda
expect_rc 0 "$CVM" import "$real"
S=$CVM_ROOT/shims
[[ -L $S/nvcc && -L $S/ptxas ]] || fail "no shims for $real"
for n in gcc g++ cc c++ ld; do [[ ! -e $S/$n ]] || fail "a shim for the host program $n"; done
export PATH="$S:/usr/bin:/bin"
mkdir -p "$TEST_TMP/p13" "$TEST_TMP/none"
cd "$TEST_TMP/p13"
expect_rc 0 "$CVM" use 13.0
expect_rc 0 nvcc --version
assert_contains "$OUT" "release 13.0"
cd "$TEST_TMP/none"
expect_rc 0 nvcc --version
assert_contains "$OUT" "release 11.8"
# Debian's ptxas too, and its exit code when it has nothing to do.
want_rc=0; /usr/bin/ptxas >/dev/null 2>&1 || want_rc=$?
expect_rc "$want_rc" ptxas
echo "shim_real_cuda: ok"
