#!/usr/bin/env bash
# Issue 35, finding 1: `cvm verify` on an untouched store calls every view intact, whatever its
# shape: a toolkit alone, with a cuDNN, with an NCCL, with both (the NCCL part of a view's name is
# never read as part of the cuDNN id); `cvm verify ID` of each part checks its views.
source "$(dirname "$0")/lib.sh"
need_tools cc

make_toolkit "$TEST_TMP/cuda-12.4" 12.4.1
make_cudnn "$TEST_TMP/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" 9.1.0
python3 "$CVM_SOURCE_DIR/tests/integration/make_archives.py" nccl "$TEST_TMP/nccl.txz" \
    --version 2.21.5 --cuda 12.4
tar -xJf "$TEST_TMP/nccl.txz" -C "$TEST_TMP"
for d in cuda-12.4 cudnn-linux-x86_64-9.1.0.70_cuda12-archive nccl_2.21.5-1+cuda12.4_x86_64; do
    expect_rc 0 "$CVM" import "$TEST_TMP/$d"
done
CUDNN=9.1.0.70-cuda12
NCCL=2.21.5-cuda12.4

# Every shape of selection, each through the environment that makes its view.
for spec in 12.4 12.4+9.1 12.4+nccl2.21.5 12.4+9.1+nccl2.21.5; do
    expect_rc 0 "$CVM" env "$spec" --shell bash
done
for view in "12.4.1+$CUDNN" "12.4.1+nccl$NCCL" "12.4.1+$CUDNN+nccl$NCCL"; do
    [[ -d $CVM_ROOT/views/$view ]] || fail "no view $view: $(ls "$CVM_ROOT/views")"
done

expect_rc 0 "$CVM" verify
for view in "12.4.1+$CUDNN" "12.4.1+nccl$NCCL" "12.4.1+$CUDNN+nccl$NCCL"; do
    assert_contains "$OUT" "view $view: intact"
done
assert_not_contains "$OUT$ERR" "DAMAGED"
assert_not_contains "$OUT$ERR" "a view nothing uses"

# Each part's own verify names the views that use it, and only those.
expect_rc 0 "$CVM" verify "$NCCL"
assert_contains "$OUT" "view 12.4.1+nccl$NCCL: intact"
assert_contains "$OUT" "view 12.4.1+$CUDNN+nccl$NCCL: intact"
assert_not_contains "$OUT" "view 12.4.1+$CUDNN: "
expect_rc 0 "$CVM" verify "$CUDNN"
assert_contains "$OUT" "view 12.4.1+$CUDNN: intact"
assert_contains "$OUT" "view 12.4.1+$CUDNN+nccl$NCCL: intact"
assert_not_contains "$OUT" "view 12.4.1+nccl$NCCL: "
expect_rc 0 "$CVM" verify 12.4.1
assert_not_contains "$OUT$ERR" "DAMAGED"

# A view whose NCCL was removed is named for what is missing, the NCCL, and uninstalling the NCCL
# drops its views (never the cuDNN-only one).
expect_rc 0 "$CVM" uninstall "$NCCL"
[[ ! -e $CVM_ROOT/views/12.4.1+nccl$NCCL ]] || fail "the NCCL's view outlived it"
[[ ! -e $CVM_ROOT/views/12.4.1+$CUDNN+nccl$NCCL ]] || fail "the NCCL's view with cuDNN outlived it"
[[ -d $CVM_ROOT/views/12.4.1+$CUDNN ]] || fail "the cuDNN's own view went with the NCCL"
expect_rc 0 "$CVM" verify
assert_contains "$OUT" "view 12.4.1+$CUDNN: intact"

# An NCCL removed behind cvm's back: its views are named for the NCCL, never for the cuDNN.
expect_rc 0 "$CVM" import "$TEST_TMP/nccl_2.21.5-1+cuda12.4_x86_64"
expect_rc 0 "$CVM" env 12.4+9.1+nccl2.21.5 --shell bash
rm -rf "${CVM_ROOT:?}/nccl/$NCCL"
expect_rc 1 "$CVM" verify
assert_contains "$OUT$ERR" "its NCCL $NCCL is not installed"
assert_not_contains "$OUT$ERR" "cuDNN build"
