#!/usr/bin/env bash
# Windows, under Wine: `cvm script 11.2+8.1 --shell cmd` writes activate_cuda112.bat; wine's cmd.exe
# runs it (`call activate_cuda112.bat`, then `call activate_cuda112.bat deactivate`) and the
# variables are checked: set on activation (the nvcc.exe found on PATH is the toolkit's, and it
# sees them), restored exactly on deactivation (a variable that was unset is unset again). The
# store's folder name holds ^, &, !, ', parentheses and spaces. Not here, because wine's cmd (8.0)
# differs from Windows' there: '%' in a path (wine expands %...% again inside expanded values) and
# non-ASCII letters (wine reads a batch file in the OEM code page whatever chcp says); the
# script's handling of both is checked by tests/unit/core/shell_test.cpp.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

setup_cuda112_cudnn81
# A second store in a hostile folder: the script must quote every path it writes.
HOSTILE_NAME="Store a^b&c!d (x) 'q'"
export CVM_ROOT="$WIN_C_WIN\\$HOSTILE_NAME"
HSTORE="$WIN_C/$HOSTILE_NAME"
wexpect 0 "$CVM_EXE" import "$TK_WIN"
wexpect 0 "$CVM_EXE" install "$(winpath "$ZIP")"
VIEW_WIN="$CVM_ROOT\\views\\11.2.2+8.1.0.77-cuda11.2"
CUDNN_WIN="$CVM_ROOT\\cudnn\\8.1.0.77-cuda11.2\\root"

# An older toolkit on PATH before activation: activation takes its bin off PATH.
OLD="$WIN_C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v10.0"
make_win_toolkit "$OLD" 10.0.130
OLD_WIN=$(winpath "$OLD")

OUTDIR="$WIN_C/scripts dir"
mkdir -p "$OUTDIR"
cd "$OUTDIR"
wexpect 0 "$CVM_EXE" script 11.2+8.1 --shell cmd
[[ -f activate_cuda112.bat ]] || fail "cvm script --shell cmd wrote no activate_cuda112.bat: $(ls)"
assert_contains "$ERR" "activate_cuda112.bat"
# -o names another file
wexpect 0 "$CVM_EXE" script 11.2+8.1 --shell cmd -o "other name.bat"
[[ -f "other name.bat" ]] || fail "cvm script -o wrote nothing"
rm -rf "$STORE" # only the hostile store is used from here on (the script needs no cvm at all)

BAT=$(winpath "$OUTDIR/activate_cuda112.bat")
cat > "$TEST_TMP/run.bat" << EOS
@echo off
chcp 65001 > nul
set "CUDA_PATH=$OLD_WIN"
set "CUDA_PATH_V11_2="
set "CUDNN_PATH="
set "CVM_ACTIVE="
set "KEEP_ME=untouched"
set "PATH=$OLD_WIN\\bin;%PATH%"
set "SAVED_PATH=%PATH%"
echo ==before
set CUDA_PATH
set PATH
call "$BAT"
if errorlevel 1 exit /b 20
chcp 65001 > nul
echo ==active
set CUDA_PATH
set CUDA_HOME
set CUDNN_PATH
set CVM_ACTIVE
set CUDACXX
set PATH
set KEEP_ME
echo ==nvcc
set "FAKE_NVCC_EXIT=0"
nvcc -c "my kernel.cu"
if errorlevel 1 exit /b 21
echo ==second
rem Activating again (another project, the same window) keeps one copy of each folder.
call "$BAT"
chcp 65001 > nul
set PATH
call "$BAT" deactivate
chcp 65001 > nul
echo ==after
set CUDA_PATH
set CUDA_HOME 2> nul || echo CUDA_HOME unset
set CUDNN_PATH 2> nul || echo CUDNN_PATH unset
set CVM_ACTIVE 2> nul || echo CVM_ACTIVE unset
set KEEP_ME
if "%PATH%"=="%SAVED_PATH%" (echo PATH restored) else (echo PATH differs)
set _CVM 2> nul || echo no helper variables left
exit /b 0
EOS
wbatch "$TEST_TMP/run.bat"
[[ $RC == 0 ]] || fail "the batch run failed ($RC); stdout: $OUT; stderr: $ERR"
BATCH_OUT=$OUT BATCH_ERR=$ERR
trap 'rc=$?; [[ $rc == 0 ]] || printf "batch stdout:\n%s\nbatch stderr:\n%s\n" "$BATCH_OUT" "$BATCH_ERR" >&2; cleanup_windows_test; exit $rc' EXIT
section() { awk -v s="==$1" '$0 == s { on = 1; next } /^==/ { on = 0 } on' <<< "$OUT"; }
before=$(section before)
active=$(section active)
nvcc_out=$(section nvcc)
second=$(section second)
after=$(section after)

assert_eq "$(value_of CUDA_PATH "$active")" "$VIEW_WIN" "CUDA_PATH after activation"
assert_eq "$(value_of CUDA_PATH_V11_2 "$active")" "$VIEW_WIN" "CUDA_PATH_V11_2 after activation"
assert_eq "$(value_of CUDA_HOME "$active")" "$VIEW_WIN" "CUDA_HOME after activation"
assert_eq "$(value_of CUDNN_PATH "$active")" "$CUDNN_WIN" "CUDNN_PATH after activation"
assert_eq "$(value_of CVM_ACTIVE "$active")" "11.2.2+8.1.0.77-cuda11.2" "CVM_ACTIVE after activation"
assert_eq "$(value_of KEEP_ME "$active")" "untouched"
path=$(value_of Path "$active")
[[ -n $path ]] || path=$(value_of PATH "$active")
IFS=';' read -r -a entries <<< "$path"
# The merged view's bin leads: the toolkit's programs and cuDNN's DLLs side by side, and nvcc
# started from there takes the view's include and library folders.
assert_ieq "${entries[0]}" "$VIEW_WIN\\bin" "PATH entry 1 after activation"
assert_not_contains "${path,,}" "${TK_WIN,,}\\bin" "the toolkit's own bin (the view's holds its programs)"
assert_eq "$(value_of CUDACXX "$active")" "$VIEW_WIN\\bin\\nvcc.exe" "CUDACXX after activation"
assert_not_contains "${path,,}" "${OLD_WIN,,}\\bin" "the older toolkit's bin left PATH"
assert_contains "${path,,}" 'c:\windows\system32' "system folders stay on PATH"

# nvcc from PATH is the selected toolkit's and sees the same variables.
assert_ieq "$(value_of self "$nvcc_out")" "$VIEW_WIN\\bin\\nvcc.exe" "nvcc found on PATH after activation"
assert_eq "$(value_of CUDA_PATH "$nvcc_out")" "$VIEW_WIN" "CUDA_PATH seen by nvcc"
assert_eq "$(value_of args "$nvcc_out")" "-c|my kernel.cu"

second_path=$(value_of Path "$second")
[[ -n $second_path ]] || second_path=$(value_of PATH "$second")
assert_eq "$second_path" "$path" "PATH after activating twice"

# Deactivation restores the values from before, and unsets what was unset.
assert_eq "$(value_of CUDA_PATH "$after")" "$OLD_WIN" "CUDA_PATH restored"
assert_not_contains "$after" "CUDA_PATH_V11_2=" "CUDA_PATH_V11_2 unset again"
assert_contains "$after" "CUDA_HOME unset"
assert_contains "$after" "CUDNN_PATH unset"
assert_contains "$after" "CVM_ACTIVE unset"
assert_eq "$(value_of KEEP_ME "$after")" "untouched"
assert_contains "$after" "PATH restored"
assert_contains "$after" "no helper variables left" "(cmd: set _CVM)"
[[ -n $before ]] || fail "no output before activation: $OUT"

echo "PASS: activate_cuda112.bat in wine's cmd"
