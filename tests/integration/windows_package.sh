#!/usr/bin/env bash
# The Windows zip (scripts/package.sh) and its install.cmd under Wine's cmd: the programs are
# copied to the chosen folder, that folder's bin and cvm's shims folder are appended to the user's
# Path in HKCU\Environment (a Path longer than setx's 1024 characters stays whole, a second run
# adds nothing twice), and the installed cvm.exe runs. The user's Path is restored afterwards.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

dist="$TEST_TMP/dist"
"$CVM_SOURCE_DIR/scripts/package.sh" --windows-only --windows-bin "$WINDOWS_BIN" --out "$dist" >"$TEST_TMP/package.log" 2>&1 ||
    fail "scripts/package.sh failed: $(tail -5 "$TEST_TMP/package.log")"
version=$(sed -n 's/^project(cvm VERSION \([0-9.]*\).*/\1/p' "$CVM_SOURCE_DIR/CMakeLists.txt")
zipfile="$dist/cvm-${version}-windows-x64.zip"
[[ -f $zipfile ]] || fail "no $zipfile"
listing=$(unzip -l "$zipfile")
for f in bin/cvm.exe bin/cvm-shim.exe bin/cvm-probe.exe install.cmd install.ps1 share/cvm/registry/cuda.toml; do
    assert_contains "$listing" "cvm-${version}-windows-x64/$f" "the zip's files"
done
unzip -q "$zipfile" -d "$WIN_C"
unpacked="$WIN_C/cvm-${version}-windows-x64"
[[ $(head -c 200 "$unpacked/install.cmd") == *$'\r\n'* ]] || fail "install.cmd should have Windows line ends"
[[ $(head -c 200 "$unpacked/install.ps1") == *$'\r\n'* ]] || fail "install.ps1 should have Windows line ends"
# PowerShell cannot run here: the zip's install.ps1 passes the text checks (package_install_ps1.sh).
python3 "$CVM_SOURCE_DIR/tests/integration/pwsh_text.py" --variables "$unpacked/install.ps1" ||
    fail "the zip's install.ps1 does not pass the PowerShell text checks (above)"

# The user's Path before the test (restored at exit); this test's Path is long, as real ones are.
# user_path: the Path value in the registry (empty when there is none).
user_path() {
    wrun reg query 'HKCU\Environment' /v Path
    sed -n 's/^ *Path *REG_[A-Z_]* *//p' <<< "$OUT"
}
saved=$(user_path)
restore_path() {
    if [[ -n $saved ]]; then
        "$WINE" reg add 'HKCU\Environment' /v Path /t REG_EXPAND_SZ /d "$saved" /f >/dev/null 2>&1 || true
    else
        "$WINE" reg delete 'HKCU\Environment' /v Path /f >/dev/null 2>&1 || true
    fi
    cleanup_windows_test
}
trap restore_path EXIT
long="%USERPROFILE%\\bin"
for i in $(seq 1 60); do long+=";C:\\Tools\\folder-number-$i\\bin"; done
(( ${#long} > 1024 )) || fail "the test's Path should be longer than 1024 characters"
wexpect 0 reg add 'HKCU\Environment' /v Path /t REG_EXPAND_SZ /d "$long" /f

dest_win="$WIN_C_WIN\\prog"
store_win=$(winpath "$WIN_C/store")
export CVM_ROOT=$store_win
wrun cmd /c "$(winpath "$unpacked/install.cmd")" "$dest_win"
[[ $RC == 0 ]] || fail "install.cmd exited $RC: $OUT $ERR"
assert_contains "$OUT" "cvm installed in $dest_win\\bin"
[[ -f $WIN_C/prog/bin/cvm.exe && -f $WIN_C/prog/bin/cvm-shim.exe && -f $WIN_C/prog/share/cvm/registry/cuda.toml ]] ||
    fail "install.cmd did not copy the programs and the registry to $dest_win"

after=$(user_path)
assert_eq "$after" "$long;$dest_win\\bin;$store_win\\shims" "the user's Path after install.cmd"
wexpect 0 reg query 'HKCU\Environment' /v Path
assert_contains "$OUT" "REG_EXPAND_SZ" "Path stays REG_EXPAND_SZ"

# A project whose nvcc shim the installed cvm made (in the store's shims folder on PATH).
make_win_toolkit "$WIN_C/cuda-11.2" 11.2.2
wexpect 0 "$WIN_C/prog/bin/cvm.exe" import "$(winpath "$WIN_C/cuda-11.2")"
mkdir -p "$WIN_C/proj"
cd "$WIN_C/proj"
wexpect 0 "$WIN_C/prog/bin/cvm.exe" use 11.2
shim="$WIN_C/store/shims/nvcc.exe"
[[ -f $shim ]] || fail "no shim $shim after cvm use: $(ls "$WIN_C/store/shims" 2>&1)"
wexpect 0 "$shim" -c k.cu
assert_ieq "$(value_of self "$OUT")" "$(winpath "$WIN_C/cuda-11.2")\\bin\\nvcc.exe" "the shim before the upgrade"

# Again, from a newer zip (an upgrade in place: its cvm-shim.exe differs): nothing is added twice
# to Path, and the shim made before runs the project's nvcc still.
printf 'newer build' >> "$unpacked/bin/cvm-shim.exe"
wrun cmd /c "$(winpath "$unpacked/install.cmd")" "$dest_win"
[[ $RC == 0 ]] || fail "install.cmd (second run) exited $RC: $OUT $ERR"
assert_eq "$(user_path)" "$after" "a second install.cmd must not add the folders again"
cmp -s "$unpacked/bin/cvm-shim.exe" "$WIN_C/prog/bin/cvm-shim.exe" || fail "the upgrade did not replace cvm-shim.exe"
# The shims are hard links of the installed cvm-shim.exe (copy /y rewrites that file in place, so
# they follow it), or copies where no link can be made, which the upgrade's `cvm rehash` renews.
cmp -s "$shim" "$WIN_C/prog/bin/cvm-shim.exe" || fail "the nvcc shim is not the upgraded cvm-shim.exe"
wexpect 0 "$shim" -c k.cu
assert_ieq "$(value_of self "$OUT")" "$(winpath "$WIN_C/cuda-11.2")\\bin\\nvcc.exe" "the shim after the upgrade"
cd "$TEST_TMP"

# The installed cvm runs and finds its registry.
wexpect 0 "$WIN_C/prog/bin/cvm.exe" --version
assert_contains "$OUT" "$version"
wexpect 0 "$WIN_C/prog/bin/cvm.exe" list --available
assert_contains "$OUT" "11.2"

# A zip unpacked without its bin folder is refused with one line.
rm -rf "$unpacked/bin"
wrun cmd /c "$(winpath "$unpacked/install.cmd")" "$dest_win"
[[ $RC == 2 ]] || fail "install.cmd without bin\\cvm.exe should exit 2, got $RC"
assert_contains "$ERR$OUT" "extract the whole zip"
echo "windows_package: ok"
