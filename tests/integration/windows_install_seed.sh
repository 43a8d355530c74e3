#!/usr/bin/env bash
# Windows, under Wine, the seed's toolchain in one command: `cvm install 11.2+8.1.0.77` fetches
# NVIDIA's local installer cuda_11.2.2_461.33_win10.exe (built here: a mingw program followed by
# a 7-Zip archive of the installer's folders) from <mirror>/cuda/11.2.2/local_installers/,
# checks it against md5sum.txt, and the legacy cudnn-11.2-windows-x64-v8.1.0.77.zip from
# <mirror>/redist/cudnn/v8.1.0/; then `cvm script --shell cmd` writes activate_cuda112.bat and
# wine's cmd.exe runs it: CUDA_PATH, CUDNN_PATH and PATH name the installed toolkit and cuDNN.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
source "$(dirname "$0")/lib_install.sh"
command -v 7z > /dev/null 2>&1 || skip "7z is not installed (p7zip-full)"
unset CVM_REGISTRY_DIR # a Unix path: the Windows build finds its own registry
trap 'stop_server; cleanup_windows_test' EXIT
MI="python3 $CVM_SOURCE_DIR/tests/integration/make_installers.py"
CVM_EXE="$WINDOWS_BIN/cvm.exe"
M="$TEST_TMP/mirror"
EXE_NAME=cuda_11.2.2_461.33_win10.exe
mkdir -p "$M/cuda/11.2.2/local_installers" "$M/cuda/11.2.2/docs/sidebar" "$M/redist/cudnn/v8.1.0"
$MI stub "$TEST_TMP/stub.exe"
$MI windows "$M/cuda/11.2.2/local_installers/$EXE_NAME" --version 11.2.2 --stub "$TEST_TMP/stub.exe"
(cd "$M/cuda/11.2.2/local_installers" && md5sum "$EXE_NAME") > "$M/cuda/11.2.2/docs/sidebar/md5sum.txt"
make_cudnn_zip "$M/redist/cudnn/v8.1.0/cudnn-11.2-windows-x64-v8.1.0.77.zip" 8.1.0.77 11.2
start_server "$M"
export CVM_ROOT="$WIN_C_WIN\\store" CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=50
STORE="$WIN_C/store"

wexpect 0 "$CVM_EXE" install 11.2+8.1.0.77
assert_contains "$ERR" "MD5 checked against NVIDIA's md5sum.txt"
grep -q "GET /cuda/11.2.2/local_installers/$EXE_NAME" "$HTTP_LOG" || fail "the installer was not fetched: $(cat "$HTTP_LOG")"
grep -q "GET /redist/cudnn/v8.1.0/cudnn-11.2-windows-x64-v8.1.0.77.zip" "$HTTP_LOG" || fail "the cuDNN zip was not fetched"
[[ -f $STORE/cuda/11.2.2/root/bin/nvcc.exe ]] || fail "no nvcc.exe installed"
[[ -f $STORE/cudnn/8.1.0.77-cuda11.2/root/bin/cudnn64_8.dll ]] || fail "no cudnn64_8.dll installed"
wexpect 0 "$CVM_EXE" verify

OUTDIR="$WIN_C/project"
mkdir -p "$OUTDIR"
cd "$OUTDIR"
wexpect 0 "$CVM_EXE" script 11.2+8.1 --shell cmd
[[ -f activate_cuda112.bat ]] || fail "no activate_cuda112.bat written: $(ls)"
cat > "$TEST_TMP/run.bat" << EOS
@echo off
call "$(winpath "$OUTDIR/activate_cuda112.bat")"
if errorlevel 1 exit /b 20
set CUDA_PATH
set CUDNN_PATH
set PATH
if exist "%CUDA_PATH%\\bin\\nvcc.exe" (echo nvcc found) else (echo nvcc missing)
if exist "%CUDNN_PATH%\\bin\\cudnn64_8.dll" (echo cudnn found) else (echo cudnn missing)
exit /b 0
EOS
wbatch "$TEST_TMP/run.bat"
[[ $RC == 0 ]] || fail "the batch run failed ($RC): $OUT $ERR"
assert_contains "$OUT" "nvcc found"
assert_contains "$OUT" "cudnn found"
assert_contains "$(value_of CUDNN_PATH "$OUT")" "cudnn\\8.1.0.77-cuda11.2\\root"
path=$(value_of Path "$OUT")
[[ -n $path ]] || path=$(value_of PATH "$OUT")
IFS=';' read -r -a entries <<< "$path"
assert_ieq "${entries[0]}" "$CVM_ROOT\\views\\11.2.2+8.1.0.77-cuda11.2\\bin" "PATH entry 1 after activation: the merged view's bin"
echo ok
