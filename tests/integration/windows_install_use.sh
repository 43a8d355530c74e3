#!/usr/bin/env bash
# Windows, under Wine, with the cross-built cvm.exe and shim: `cvm install` of
# cudnn-11.2-windows-x64-v8.1.0.77.zip (the 31 files of NVIDIA's layout, DLLs with version
# resources), `cvm use 11.2+8.1`, and the nvcc.exe shim running the toolkit's (fake) nvcc.exe with
# CUDA_PATH on the merged view, CUDA_PATH_V11_2, cuDNN's bin on PATH and its exit code passed back;
# cmd finding the shim by PATHEXT under any spelling of its name.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

setup_cuda112_cudnn81
files=$(unzip -Z1 "$ZIP" | grep -vc '/$')
assert_eq "$files" 31 "files in the test's zip (NVIDIA's has 31)"
assert_contains "$ERR" "installed cuDNN 8.1.0.77-cuda11.2"

# --- the store: the archive's content under cudnn\<id>\root, an entry saying what it is
CUDNN="$STORE/cudnn/8.1.0.77-cuda11.2"
[[ -f $CUDNN/entry ]] || fail "no entry for cuDNN 8.1.0.77-cuda11.2: $(find "$STORE" -maxdepth 3)"
grep -qx 'version=8.1.0.77' "$CUDNN/entry" || fail "entry: $(cat "$CUDNN/entry")"
assert_eq "$(find "$CUDNN/root/bin" -type f | wc -l)" 7 "DLLs installed"
assert_eq "$(find "$CUDNN/root/include" -type f | wc -l)" 9 "headers installed"
assert_eq "$(find "$CUDNN/root/lib/x64" -type f | wc -l)" 14 "import libraries installed"
cmp -s "$CUDNN/root/bin/cudnn64_8.dll" <(unzip -p "$ZIP" cuda/bin/cudnn64_8.dll) || fail "cudnn64_8.dll differs from the archive's"
wexpect 0 "$CVM_EXE" list --json
assert_eq "$(jq -r '[.cudnn[].id] | join(" ")' <<< "$OUT")" "8.1.0.77-cuda11.2" "cuDNN builds listed"
# The same archive again: nothing to do, not an error.
wrun "$CVM_EXE" install "$(winpath "$ZIP")"
[[ $RC == 0 ]] || fail "a second install of the same zip failed ($RC): $ERR"

# --- cvm use in a project folder
PROJ="$WIN_C/My Project"
mkdir -p "$PROJ/src/deep"
cd "$PROJ"
wexpect 0 "$CVM_EXE" use 11.2+8.1
assert_eq "$(tr -d '\r' < .cudaversion)" "11.2+8.1" ".cudaversion written by cvm use"
# use --install installs in this process (no cvm-install on Windows): here nothing is missing;
# then a cuDNN whose download fails (a mirror that refuses connections) writes nothing.
wexpect 0 "$CVM_EXE" use 11.2+8.1 --install --json
assert_eq "$(jq -c '[.spec, .active, .installed]' <<< "$OUT")" '["11.2+8.1","11.2.2+8.1.0.77-cuda11.2",[]]'
CVM_MIRROR=http://127.0.0.1:9 CVM_RETRY_DELAY_MS=1 wexpect 1 "$CVM_EXE" use 11.2+8.1.1 --install --json
assert_eq "$(jq -r .error.code <<< "$OUT")" "network" "use --install of cuDNN 8.1.1 from a dead mirror"
assert_eq "$(tr -d '\r' < .cudaversion)" "11.2+8.1" ".cudaversion after a refused use --install"
wexpect 0 "$CVM_EXE" current
assert_contains "$OUT" "11.2.2+8.1.0.77-cuda11.2"
cd "$PROJ/src/deep"
wexpect 0 "$CVM_EXE" which nvcc
assert_ieq "$OUT" "$TK_WIN\\bin\\nvcc.exe" "cvm which nvcc in a subfolder of the project"
# Windows names: any spelling of the tool, with or without .exe, is the same plan (launch_plan).
for name in NVCC.EXE Nvcc nvcc.exe; do
    wexpect 0 "$CVM_EXE" which "$name"
    assert_ieq "$OUT" "$TK_WIN\\bin\\nvcc.exe" "cvm which $name"
done

# --- the shim: $CVM_ROOT\shims\nvcc.exe, started from the project's subfolder
SHIM="$STORE/shims/nvcc.exe"
[[ -f $SHIM ]] || fail "no shim $SHIM: $(ls "$STORE/shims")"
FAKE_NVCC_EXIT=0 wexpect 0 "$SHIM" -c "kernel one.cu" -o 'out dir\k.obj'
# The toolkit's nvcc.exe as the view's (its hard link there), so that it takes the view's folders.
assert_ieq "$(value_of self "$OUT")" "$CVM_ROOT\\views\\11.2.2+8.1.0.77-cuda11.2\\bin\\nvcc.exe" "the shim ran the toolkit's nvcc.exe from the view"
assert_eq "$(value_of args "$OUT")" '-c|kernel one.cu|-o|out dir\k.obj' "arguments through the shim"
VIEW_WIN="$CVM_ROOT\\views\\11.2.2+8.1.0.77-cuda11.2"
assert_eq "$(value_of CUDA_PATH "$OUT")" "$VIEW_WIN" "CUDA_PATH is the merged view"
assert_eq "$(value_of CUDA_PATH_V11_2 "$OUT")" "$VIEW_WIN" "CUDA_PATH_V11_2"
assert_eq "$(value_of CUDA_HOME "$OUT")" "$VIEW_WIN" "CUDA_HOME"
assert_eq "$(value_of CUDNN_PATH "$OUT")" "$CVM_ROOT\\cudnn\\8.1.0.77-cuda11.2\\root" "CUDNN_PATH"
assert_eq "$(value_of CVM_ACTIVE "$OUT")" "11.2.2+8.1.0.77-cuda11.2" "CVM_ACTIVE"
path=$(value_of PATH "$OUT")
IFS=';' read -r -a entries <<< "$path"
assert_ieq "${entries[0]}" "$VIEW_WIN\\bin" "PATH entry 1: the merged view's bin (the toolkit's programs and cuDNN's DLLs)"
assert_eq "$(value_of CUDACXX "$OUT")" "$VIEW_WIN\\bin\\nvcc.exe" "CUDACXX"
assert_contains "${path,,}" 'c:\windows\system32' "the system folders stay on PATH"

# The merged view shows cuDNN inside the toolkit's tree, through links (same file, not a copy):
# hard links for files; folders only the toolkit has are junctions (Windows) or, where the volume
# has no reparse points (Wine 8), folders of hard links.
VIEW=$(unixpath "$VIEW_WIN")
same_file() { [[ -f $1 && -f $2 && $(stat -c %d:%i "$1") == $(stat -c %d:%i "$2") ]]; }
same_file "$VIEW/include/cudnn.h" "$CUDNN/root/include/cudnn.h" || fail "view: include\\cudnn.h is not cuDNN's"
same_file "$VIEW/bin/cudnn64_8.dll" "$CUDNN/root/bin/cudnn64_8.dll" || fail "view: bin\\cudnn64_8.dll is not cuDNN's"
same_file "$VIEW/lib/x64/cudnn.lib" "$CUDNN/root/lib/x64/cudnn.lib" || fail "view: lib\\x64\\cudnn.lib is not cuDNN's"
same_file "$VIEW/include/cuda.h" "$TK/include/cuda.h" || fail "view: include\\cuda.h is not the toolkit's"
same_file "$VIEW/bin/nvcc.exe" "$TK/bin/nvcc.exe" || fail "view: bin\\nvcc.exe is not the toolkit's"
same_file "$VIEW/nvvm/bin/cicc.txt" "$TK/nvvm/bin/cicc.txt" || fail "view: nvvm (a toolkit-only folder) is not linked"
# Neither install was modified.
[[ ! -e $TK/include/cudnn.h && ! -e $TK/bin/cudnn64_8.dll ]] || fail "the toolkit folder was modified"

# Exit codes come back unchanged.
for code in 1 42 255; do
    FAKE_NVCC_EXIT=$code wexpect "$code" "$SHIM" -c x.cu
done

# --- cmd finds the shim through PATH and PATHEXT, under any spelling
cat > "$TEST_TMP/names.bat" << EOS
@echo off
cd /d "$(winpath "$PROJ\\src")"
set "PATH=$CVM_ROOT\\shims;%PATH%"
set "FAKE_NVCC_EXIT=3"
NVCC --version
if errorlevel 1 exit /b 10
nvcc.EXE -c a.cu > nul
if not errorlevel 3 exit /b 11
Nvcc.Exe -c a.cu > nul
if not errorlevel 3 exit /b 12
rem A crash or Ctrl-C ends a program with an NTSTATUS (0xC000013A): all 32 bits come back.
set "FAKE_NVCC_EXIT=-1073741510"
nvcc -c a.cu > nul
if not "%ERRORLEVEL%"=="-1073741510" exit /b 13
set "FAKE_NVCC_EXIT=3"
nvcc -c a.cu
EOS
wbatch "$TEST_TMP/names.bat"
assert_eq "$RC" 3 "the exit code of nvcc through cmd (stdout: $OUT; stderr: $ERR)"
assert_contains "$OUT" "release 11.2, V11.2"
assert_eq "$(value_of CVM_ACTIVE "$OUT")" "11.2.2+8.1.0.77-cuda11.2" "nvcc through cmd and PATHEXT"

# --- outside the project nothing is selected: 127 and what to run
mkdir -p "$WIN_C/elsewhere"
cd "$WIN_C/elsewhere"
wexpect 127 "$SHIM" --version
assert_contains "$ERR" "cvm use"

echo "PASS: windows install, use and the nvcc.exe shim"
