#!/usr/bin/env bash
# Windows, under Wine, with the cross-built cvm.exe: `cvm import` of a cuDNN folder whose name and
# files do not say its CUDA takes the major from the cuBLAS its DLLs import (real DLLs built by
# mingw-w64); a --cuda that contradicts them is refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
CVM_EXE="$WINDOWS_BIN/cvm.exe"
export CVM_ROOT="$WIN_C_WIN\\store"

D="$WIN_C/cudnn"
mkdir -p "$D/bin" "$D/include" "$D/lib/x64" "$TEST_TMP/stub"
printf '#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n' > "$D/include/cudnn_version.h"
: > "$D/include/cudnn.h"
: > "$D/lib/x64/cudnn.lib"
echo '__declspec(dllexport) int cublasLtCreate(void) { return 0; }' > "$TEST_TMP/stub/s.c"
win_cc -shared -o "$TEST_TMP/stub/cublasLt64_11.dll" "$TEST_TMP/stub/s.c"
printf '__declspec(dllimport) int cublasLtCreate(void);\n__declspec(dllexport) int f(void) { return cublasLtCreate(); }\n' > "$TEST_TMP/o.c"
win_cc -shared -o "$D/bin/cudnn_ops_infer64_8.dll" "$TEST_TMP/o.c" "$TEST_TMP/stub/cublasLt64_11.dll"
echo 'int g(void) { return 0; }' > "$TEST_TMP/m.c"
win_cc -shared -o "$D/bin/cudnn64_8.dll" "$TEST_TMP/m.c"
D_WIN=$(winpath "$D")

wexpect 2 "$CVM_EXE" import --cuda 12 "$D_WIN"
assert_contains "$ERR" "--cuda 12 contradicts the cuDNN in $D_WIN: cudnn_ops_infer64_8.dll names cublasLt64_11.dll (CUDA 11)"
wexpect 0 "$CVM_EXE" import "$D_WIN"
assert_contains "$ERR" "imported cudnn 8.9.7-cuda11 from $D_WIN"
echo "windows_import_cudnn_major: ok"
