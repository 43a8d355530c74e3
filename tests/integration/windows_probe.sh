#!/usr/bin/env bash
# Windows, under Wine: `cvm probe` starts cvm-probe.exe in the selection's environment; it loads
# cudnn64_8.dll with LoadLibrary (a fake from tests/probe_fakes/fake_cudnn.c built by mingw-w64, with
# the CPU convolution behind cuDNN's API) and cudart64_110.dll, runs the convolutions, and reports
# the version the DLL gives and the path it was loaded from (GetModuleFileName, and every CUDA
# module of the process through EnumProcessModules).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

setup_cuda112_cudnn81
[[ -f $WINDOWS_BIN/cvm-probe.exe ]] || fail "no cvm-probe.exe beside cvm.exe in $WINDOWS_BIN"
PROJ="$WIN_C/proj"
mkdir -p "$PROJ"
cd "$PROJ"
wexpect 0 "$CVM_EXE" use 11.2+8.1
# PATH leads with the merged view's bin: its hard links are what LoadLibrary finds.
VIEW_BIN_WIN="$CVM_ROOT\\views\\11.2.2+8.1.0.77-cuda11.2\\bin"
NEW_DLL_WIN="$VIEW_BIN_WIN\\cudnn64_8.dll"
CUDART_WIN="$VIEW_BIN_WIN\\cudart64_110.dll"
# The fake's cudnnGetVersion says what FAKE_CUDNN_VERSION says (8.1.0 here, like the real 8.1.0.77).
export FAKE_CUDNN_VERSION=8100

j() { jq -r "$1" <<< "$OUT"; }
wrun "$CVM_EXE" probe --json
[[ $RC == 0 ]] || fail "cvm probe failed ($RC): $OUT $ERR"
assert_eq "$(j .ok)" "true"
assert_eq "$(j .cudnn.name)" "cudnn64_8.dll" "the DLL name loaded"
assert_ieq "$(j .cudnn.path)" "$NEW_DLL_WIN" "the cuDNN DLL's path"
assert_eq "$(j .cudnn_version.number)" "8100" "cudnnGetVersion"
assert_eq "$(j .cudnn_version.text)" "8.1.0"
assert_eq "$(j .cudnn_version.cudart_text)" "11.2" "cudnnGetCudartVersion"
assert_ieq "$(j .cudart.path)" "$CUDART_WIN" "the CUDA runtime DLL's path"
modules=$(j '[.libraries[].path] | join("\n")')
assert_contains "${modules,,}" "${NEW_DLL_WIN,,}" "EnumProcessModules lists cudnn64_8.dll"
assert_contains "${modules,,}" "${CUDART_WIN,,}" "EnumProcessModules lists cudart64_110.dll"
[[ $(j '[.convolutions[] | select(.matched != true)] | length') == 0 ]] || fail "a convolution failed: $OUT"
[[ $(j '.convolutions | length') -ge 1 ]] || fail "no convolutions ran: $OUT"

# The text report says the same.
wexpect 0 "$CVM_EXE" probe
assert_contains "$OUT" "8.1.0 (8100)"
assert_contains "$OUT" "$NEW_DLL_WIN"

# A wrong result is a failure (the check is real).
FAKE_CUDNN_WRONG=1 wrun "$CVM_EXE" probe --json
assert_eq "$RC" 1 "cvm probe with a cuDNN that computes wrong"
assert_eq "$(j .ok)" "false"

# cvm runs nothing from a project folder (the contract: every program cvm runs for itself starts in
# the system folder): LoadLibrary would search the current folder before PATH, so an older
# cudnn64_8.dll a cloned project holds would run inside the probe. The probe loads the selection's.
build_cudnn_dll "$PROJ" cudnn64_8.dll 8.0.5.39
wrun "$CVM_EXE" probe --json
[[ $RC == 0 ]] || fail "cvm probe beside a project's cudnn64_8.dll failed ($RC): $OUT $ERR"
assert_ieq "$(j .cudnn.path)" "$NEW_DLL_WIN" "the probe does not load the project folder's DLL"
assert_eq "$(j .cudnn_version.text)" "8.1.0"

echo "PASS: windows probe"
