#!/usr/bin/env bash
# Issue 40, cuBLAS: which libcublas and libcublasLt the real PyTorch and JAX wheels load under cvm,
# predicted from files by `cvm doctor` and `cvm use`, then compared with the files the process maps
# (/proc/self/maps) under `cvm exec`. No GPU is needed: torch's import and JAX's plugin load cuBLAS
# without one. The selected toolkit is the real CUDA 13.0, whose lib64 holds cuBLAS 13.1.0.3, older
# than the wheels' (torch 2.15.0's nvidia-cublas 13.4.1.3, JAX 0.10.2's 13.10.0.20).
#  - PyTorch: torch/__init__.py loads libcublasLt and then libcublas from the wheel by full path, and
#    libtorch_cuda.so needs both through its DT_RPATH: its own, whole; still its own with that RPATH
#    made a RUNPATH (patchelf on a copy), since the preload alone is enough.
#  - JAX: its plugin loads libcublas by full path, whose DT_RPATH $ORIGIN (the 13.10 wheel) finds its
#    own libcublasLt: its own, whole. With that libcublas given DT_RUNPATH instead (as the 13.4 wheel
#    has it), LD_LIBRARY_PATH's libcublasLt comes first: the toolkit's older 13.1 lacks symbols the
#    13.10 libcublas binds to, so that load fails (seen here with ctypes), and the plugin ends with its
#    own whole; a libcublasLt as new on LD_LIBRARY_PATH (the unpatched wheel's, with a toolkit holding
#    no cuBLAS) gives a mixed cuBLAS, a warning before it runs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
cuda13_store
wheel_set_venv torch-2.15.0 "$TORCH"
torch_venv=$WHEEL_VENV torch_site=$WHEEL_SITE
wheel_set_venv jax-0.10.2 "${JAX[@]}"
jax_venv=$WHEEL_VENV jax_site=$WHEEL_SITE
tk=$cuda130/lib64

# cublas_code SPEC: the cuBLAS findings doctor gives for SPEC ("note:framework-own-cublas") in
# $CUBLAS_CODE, their messages in $CUBLAS_SAYS.
cublas_code() {
    local rc=0
    OUT=$(CVM_VERSION=$1 "$CVM" doctor --json 2> /dev/null) || rc=$? # 1: it found something
    CUBLAS_CODE=$(jq -r '[.findings[] | select(.code | test("cublas")) | "\(.severity):\(.code)"] | join(",")' <<< "$OUT")
    CUBLAS_SAYS=$(jq -r '.findings[] | select(.code | test("cublas")) | .message' <<< "$OUT")
}
# cublas_maps PYTHON SPEC IMPORT: under `cvm exec SPEC`, the cuBLAS files PYTHON maps after running
# IMPORT (their full paths, one line) in $MAPS.
cublas_maps() {
    expect_rc 0 "$CVM" exec "$2" -- "$1" -I -W ignore -c "$3"'
import os
print("maps", " ".join(sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcublas" in l})))'
    MAPS=$(sed -n 's/^maps //p' <<< "$OUT")
}
torch_import='import torch'
jax_import='
import jax
try:
    jax.devices()
except RuntimeError:
    pass'

# --- PyTorch: its own whole, by its preload (and its RPATH) ---
export CVM_PYTHON=$torch_venv/bin/python
own=$torch_site/nvidia/cu13/lib
cublas_code 13.0
assert_eq "$CUBLAS_CODE" "note:framework-own-cublas" "doctor with torch 2.15 and 13.0"
assert_contains "$CUBLAS_SAYS" "PyTorch 2.15.0+cu132 loads its own cuBLAS 13.4.1.3 whole ($own): its torch/__init__.py loads libcublasLt and then libcublas from the wheel by full path, and its libtorch_cuda.so names both and finds them through its RPATH"
assert_contains "$CUBLAS_SAYS" "the libcublas.so.13 in $tk (13.1.0.3) does not replace it"
use_says 13.0
assert_not_contains "$ERR" "cuBLAS" "cvm use 13.0 with torch 2.15"
cublas_maps "$CVM_PYTHON" 13.0 "$torch_import"
assert_eq "$MAPS" "$own/libcublas.so.13 $own/libcublasLt.so.13" "what torch maps under 13.0"
# The same with libtorch_cuda.so's RPATH made a RUNPATH: the preload alone keeps its own.
cp -al "$torch_venv" "$TEST_TMP/tv"
tsite=$(compgen -G "$TEST_TMP/tv/lib/python3*/site-packages")
tlib=$tsite/torch/lib/libtorch_cuda.so
cp --remove-destination "$tlib" "$tlib.copy" && mv "$tlib.copy" "$tlib"
patchelf --set-rpath "$(readelf -d "$tlib" | sed -n 's/.*Library rpath: \[\(.*\)\]/\1/p')" "$tlib"
readelf -d "$tlib" | grep -q RUNPATH || fail "patchelf made no RUNPATH in $tlib"
export CVM_PYTHON=$TEST_TMP/tv/bin/python
cublas_code 13.0
assert_eq "$CUBLAS_CODE" "note:framework-own-cublas" "doctor with torch's RUNPATH copy"
assert_contains "$CUBLAS_SAYS" "its torch/__init__.py loads libcublasLt and then libcublas from the wheel by full path, ahead of LD_LIBRARY_PATH"
cublas_maps "$CVM_PYTHON" 13.0 "$torch_import"
assert_eq "$MAPS" "$tsite/nvidia/cu13/lib/libcublas.so.13 $tsite/nvidia/cu13/lib/libcublasLt.so.13" "what torch's RUNPATH copy maps"
rm -rf "$TEST_TMP/tv"
echo "doctor_cublas_real: PyTorch keeps its own cuBLAS, as predicted"

# --- JAX: its own whole through its libcublas's RPATH ---
export CVM_PYTHON=$jax_venv/bin/python
own=$jax_site/nvidia/cu13/lib
readelf -d "$own/libcublas.so.13" | grep -q 'RPATH.*\$ORIGIN' || fail "the cuBLAS 13.10 wheel's libcublas.so.13 has no RPATH \$ORIGIN"
cublas_code 13.0
assert_eq "$CUBLAS_CODE" "note:framework-own-cublas" "doctor with JAX 0.10.2 and 13.0"
assert_contains "$CUBLAS_SAYS" "JAX 0.10.2 loads its own cuBLAS 13.10.0.20 whole ($own): its xla_cuda13/__init__.py loads libcublas from the wheel by full path, and its libcublas finds libcublasLt through its RPATH (\$ORIGIN)"
cublas_maps "$CVM_PYTHON" 13.0 "$jax_import"
assert_eq "$MAPS" "$own/libcublas.so.13 $own/libcublasLt.so.13" "what JAX maps under 13.0"

# --- JAX with its libcublas given DT_RUNPATH: LD_LIBRARY_PATH's libcublasLt comes first ---
cp -al "$jax_venv" "$TEST_TMP/jv"
jsite=$(compgen -G "$TEST_TMP/jv/lib/python3*/site-packages")
jlib=$jsite/nvidia/cu13/lib
cp --remove-destination "$jlib/libcublas.so.13" "$jlib/copy" && mv "$jlib/copy" "$jlib/libcublas.so.13"
patchelf --set-rpath '$ORIGIN' "$jlib/libcublas.so.13"
readelf -d "$jlib/libcublas.so.13" | grep -q 'RUNPATH.*\$ORIGIN' || fail "patchelf made no RUNPATH in $jlib"
export CVM_PYTHON=$TEST_TMP/jv/bin/python
# The toolkit's older libcublasLt: the first load fails, then its own whole.
cublas_code 13.0
assert_eq "$CUBLAS_CODE" "note:framework-own-cublas" "doctor with JAX's RUNPATH copy and 13.0"
assert_contains "$CUBLAS_SAYS" "loads its own cuBLAS 13.10.0.20 whole ($jlib) after a failed first try: its libcublas.so.13 (cuBLAS 13.10.0.20) fails to load against the older libcublasLt.so.13 in $tk (13.1.0.3)"
expect_rc 0 "$CVM" exec 13.0 -- "$CVM_PYTHON" -I -c "
import ctypes
try:
    ctypes.CDLL('$jlib/libcublas.so.13')
    print('loaded')
except OSError as e:
    print('failed', e)"
assert_contains "$OUT" "failed" "the wheel's libcublas with the toolkit's older libcublasLt first"
assert_contains "$OUT" "version libcublasLt.so.13"
cublas_maps "$CVM_PYTHON" 13.0 "$jax_import"
assert_eq "$MAPS" "$jlib/libcublas.so.13 $jlib/libcublasLt.so.13" "what JAX's RUNPATH copy maps under 13.0"
# A libcublasLt as new first (the wheel's own, on the shell's LD_LIBRARY_PATH) with a toolkit
# holding no cuBLAS (CUDA 13.5's runtime and compiler wheels): a mixed cuBLAS, predicted.
wheel_venv_cuda13
expect_rc 0 "$CVM" import "$WHEEL_SITE"
export LD_LIBRARY_PATH=$own
cublas_code 13.5
assert_eq "$CUBLAS_CODE" "warning:framework-cublas-mixed" "doctor with JAX's RUNPATH copy, 13.5 and the wheel's libcublasLt"
assert_contains "$CUBLAS_SAYS" "JAX 0.10.2 would load a mixed cuBLAS under cvm: its own libcublas.so.13 (cuBLAS 13.10.0.20, its xla_cuda13/__init__.py loads libcublas from the wheel by full path) with the libcublasLt.so.13 in $own (13.10.0.20)"
use_says 13.5
assert_contains "$ERR" "warning: JAX 0.10.2 in $CVM_PYTHON would load a mixed cuBLAS under cvm"
assert_contains "$ERR" "select a toolkit whose cuBLAS is 13.10.0.20 or later (\`cvm list --available 13\`)"
cublas_maps "$CVM_PYTHON" 13.5 "$jax_import"
assert_eq "$MAPS" "$own/libcublasLt.so.13 $jlib/libcublas.so.13" "what JAX's RUNPATH copy maps under 13.5"
unset LD_LIBRARY_PATH
echo "doctor_cublas_real: JAX's cuBLAS under each setting matched the prediction"
echo PASS
