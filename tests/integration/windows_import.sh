#!/usr/bin/env bash
# Windows, under Wine, with the cross-built cvm.exe: `cvm import` of a toolkit in
# "...\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2" (spaces), `cvm exec` and `cvm which`
# through it, `cvm import --detect` (CUDA_PATH_V* variables and %ProgramFiles%), the default store
# %LOCALAPPDATA%\cvm, a path longer than MAX_PATH and a folder name with non-ASCII letters.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
CVM_EXE="$WINDOWS_BIN/cvm.exe"

PF="$WIN_C/Program Files"
TK="$PF/NVIDIA GPU Computing Toolkit/CUDA/v11.2"
make_win_toolkit "$TK" 11.2.2
TK_WIN=$(winpath "$TK")
export CVM_ROOT="$WIN_C_WIN\\store"

# --- import by the Windows spelling of a folder with spaces
wexpect 0 "$CVM_EXE" import "$TK_WIN"
assert_contains "$ERR" "imported cuda 11.2.2"
grep -qxF "path=$TK_WIN" "$WIN_C/store/cuda/11.2.2/entry" || fail "entry does not record $TK_WIN: $(cat "$WIN_C/store/cuda/11.2.2/entry")"
[[ -f $WIN_C/store/shims/nvcc.exe ]] || fail "import made no nvcc.exe shim: $(ls "$WIN_C/store/shims")"
wexpect 0 "$CVM_EXE" list --json
ids=$(jq -r '[.cuda[].id] | join(" ")' <<< "$OUT")
assert_eq "$ids" "11.2.2" "list --json after the import"
# A second import of the same folder is not an error and adds nothing.
wexpect 0 "$CVM_EXE" import "$TK_WIN"
assert_contains "$ERR" "already registered"

# --- which/exec: tool names as Windows spells them (any case, with or without .exe, PATHEXT)
export CVM_VERSION=11.2
for name in nvcc NVCC nvcc.exe Nvcc.EXE; do
    wexpect 0 "$CVM_EXE" which "$name"
    assert_ieq "$OUT" "$TK_WIN\\bin\\nvcc.exe" "cvm which $name"
done
FAKE_NVCC_EXIT=7 wexpect 7 "$CVM_EXE" exec -- NVCC -c "a b.cu" 'q"uote'
assert_ieq "$(value_of self "$OUT")" "$TK_WIN\\bin\\nvcc.exe" "exec ran the toolkit's nvcc.exe"
assert_eq "$(value_of args "$OUT")" '-c|a b.cu|q"uote' "arguments reach the tool unchanged"
# Without cuDNN, CUDA_PATH is the toolkit itself.
assert_eq "$(value_of CUDA_PATH "$OUT")" "$TK_WIN"
assert_eq "$(value_of CUDA_PATH_V11_2 "$OUT")" "$TK_WIN"
assert_eq "$(value_of CVM_ACTIVE "$OUT")" "11.2.2"
path=$(value_of PATH "$OUT")
assert_eq "${path%%;*}" "$TK_WIN\\bin" "the toolkit's bin is first on PATH"
unset CVM_VERSION

# --- import --detect: what NVIDIA's installer leaves. ProgramFiles comes from Wine's registry,
# so a batch file sets it (and ProgramW6432) to this test's folder; CUDA_PATH_V10_2 names a
# toolkit elsewhere (version.txt only, as up to 11.0); a folder that is no toolkit is skipped.
make_win_toolkit "$PF/NVIDIA GPU Computing Toolkit/CUDA/v12.4" 12.4.1
mkdir -p "$PF/NVIDIA GPU Computing Toolkit/CUDA/v99.9-empty"
OLD="$TEST_TMP/Custom Location/CUDA 10.2"
make_win_toolkit "$OLD" 10.2.89
rm "$OLD/version.json"
printf 'CUDA Version 10.2.89\n' > "$OLD/version.txt"
cat > "$TEST_TMP/detect.bat" << EOS
@echo off
set "ProgramFiles=$(winpath "$PF")"
set "ProgramW6432=$(winpath "$PF")"
set "CUDA_PATH_V10_2=$(winpath "$OLD")"
set "CUDA_PATH="
set "CVM_ROOT=$WIN_C_WIN\\detected"
"$(winpath "$CVM_EXE")" import --detect
exit /b %ERRORLEVEL%
EOS
wbatch "$TEST_TMP/detect.bat"
[[ $RC == 0 ]] || fail "import --detect failed ($RC): $ERR"
CVM_ROOT="$WIN_C_WIN\\detected" wexpect 0 "$CVM_EXE" list --json
ids=$(jq -r '[.cuda[].id] | join(" ")' <<< "$OUT")
assert_eq "$ids" "12.4.1 11.2.2 10.2.89" "toolkits found by import --detect"
assert_contains "$ERR$(cat "$WIN_C/detected/cuda/10.2.89/entry")" "$(winpath "$OLD")"

# --- the default store is %LOCALAPPDATA%\cvm
LAD="$WIN_C/Local AppData"
mkdir -p "$LAD"
cat > "$TEST_TMP/default.bat" << EOS
@echo off
set "LOCALAPPDATA=$(winpath "$LAD")"
set "CVM_ROOT="
"$(winpath "$CVM_EXE")" import "$TK_WIN"
if errorlevel 1 exit /b 1
"$(winpath "$CVM_EXE")" list
if errorlevel 1 exit /b 2
rem The shim finds the same default store.
set "CVM_VERSION=11.2"
"%LOCALAPPDATA%\cvm\shims\nvcc.exe" -c x.cu
exit /b %ERRORLEVEL%
EOS
wbatch "$TEST_TMP/default.bat"
[[ $RC == 0 ]] || fail "import into the default store failed ($RC): $ERR"
[[ -f $LAD/cvm/cuda/11.2.2/entry ]] || fail "no store in %LOCALAPPDATA%\\cvm: $(find "$LAD" | head)"
[[ -f $LAD/cvm/shims/nvcc.exe ]] || fail "no shims in %LOCALAPPDATA%\\cvm\\shims"
assert_contains "$OUT" "11.2.2"
assert_eq "$(value_of CVM_ACTIVE "$OUT")" "11.2.2" "the shim in %LOCALAPPDATA%\\cvm\\shims"
assert_ieq "$(value_of self "$OUT")" "$TK_WIN\\bin\\nvcc.exe" "the shim in the default store ran"

# --- a store under a user name with non-ASCII letters (C:\Users\Zoë 日本\AppData\Local\cvm):
# the programs' manifest makes UTF-8 their ANSI code page, so narrow file functions work too.
UNI_ROOT="$WIN_C_WIN\\Users\\Zoë 日本\\AppData\\Local\\cvm"
CVM_ROOT="$UNI_ROOT" wexpect 0 "$CVM_EXE" import "$TK_WIN"
CVM_ROOT="$UNI_ROOT" wexpect 0 "$CVM_EXE" list --json
assert_eq "$(jq -r '[.cuda[].id] | join(" ")' <<< "$OUT")" "11.2.2" "list in a store under a non-ASCII folder"
CVM_ROOT="$UNI_ROOT" CVM_VERSION=11.2 wexpect 0 "$(unixpath "$UNI_ROOT")/shims/nvcc.exe" -c x.cu
assert_eq "$(value_of CVM_ACTIVE "$OUT")" "11.2.2" "the shim of a store under a non-ASCII folder"

# --- a toolkit deeper than MAX_PATH (260), with non-ASCII letters on the way
long="$WIN_C/long"
while [[ ${#long} -lt 330 ]]; do long="$long/segment-$(printf '%02d' ${#long})-abcdefghij"; done
LONG_TK="$long/CUDA Ünïcødé/v11.3"
make_win_toolkit "$LONG_TK" 11.3.1
LONG_WIN=$(winpath "$LONG_TK")
[[ ${#LONG_WIN} -gt 260 ]] || fail "test setup: $LONG_WIN is not longer than MAX_PATH"
wexpect 0 "$CVM_EXE" import "$LONG_WIN"
assert_contains "$ERR" "imported cuda 11.3.1"
CVM_VERSION=11.3 wexpect 0 "$CVM_EXE" exec -- nvcc
# CreateProcess takes no program path beyond MAX_PATH: cvm starts it by its short (8.3) name.
self=$(value_of self "$OUT")
[[ ${self,,} == *'\bin\nvcc.exe' ]] || fail "exec of a toolkit deeper than MAX_PATH ran $self"
assert_eq "$(value_of CUDA_PATH "$OUT")" "$LONG_WIN"
CVM_VERSION=11.3 wexpect 0 "$WIN_C/store/shims/nvcc.exe" --version
assert_contains "$OUT" "release 11.3"

# --- a shared read-only store named in the user's config.toml (a Windows path in a TOML literal
# string), listed and used from another store; the brief list index is written and followed
SHARED_WIN="$WIN_C_WIN\\shared store"
CVM_ROOT="$SHARED_WIN" wexpect 0 "$CVM_EXE" import "$(winpath "$PF/NVIDIA GPU Computing Toolkit/CUDA/v12.4")"
mkdir -p "$WIN_C/Users/me/AppData/Roaming/cvm"
printf "# shared stores\nstore_path = ['%s']\n" "$SHARED_WIN" > "$WIN_C/Users/me/AppData/Roaming/cvm/config.toml"
export CVM_CONFIG="$WIN_C_WIN\\Users\\me\\AppData\\Roaming\\cvm\\config.toml"
MINE="$WIN_C_WIN\\mine"
CVM_ROOT="$MINE" wexpect 0 "$CVM_EXE" list cuda
assert_contains "$OUT" "12.4.1"
assert_contains "$OUT" "read-only store $SHARED_WIN"
touch -d '1 minute ago' "$WIN_C/shared store/cuda"
CVM_ROOT="$MINE" wexpect 0 "$CVM_EXE" list cuda
assert_contains "$OUT" "read-only store $SHARED_WIN"
compgen -G "$WIN_C/mine/cache/index/cuda-*.brief" >/dev/null || fail "no list index in $MINE\\cache\\index"
CVM_ROOT="$MINE" CVM_VERSION=12.4 wexpect 0 "$CVM_EXE" exec -- nvcc
assert_ieq "$(value_of CUDA_PATH "$OUT")" "$(winpath "$PF/NVIDIA GPU Computing Toolkit/CUDA/v12.4")"
printf "store_path = 'not a list'\n" > "$WIN_C/Users/me/AppData/Roaming/cvm/config.toml"
CVM_ROOT="$MINE" wexpect 2 "$CVM_EXE" list
assert_contains "$ERR" "config.toml:1"
unset CVM_CONFIG

echo "PASS: windows import"
