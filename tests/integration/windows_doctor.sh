#!/usr/bin/env bash
# Windows, under Wine: `cvm doctor` with the Windows DLL search order and PE version resources. An
# older cudnn64_8.dll (version resource 8.0.5.39) in a folder early on PATH shadows the selected
# 8.1.0.77: doctor names both files and versions and the fix; with the fix applied (`cvm exec --`,
# or the activate_cuda112.bat of `cvm script`) the selected DLL is the one found and the finding is
# gone. NVIDIA's installer's PATH (the toolkit's bin and libnvvp) counts as one toolkit.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

setup_cuda112_cudnn81
PROJ="$WIN_C/proj"
mkdir -p "$PROJ"
cd "$PROJ"
wexpect 0 "$CVM_EXE" use 11.2+8.1
OLD="$WIN_C/Old cuDNN/bin"
mkdir -p "$OLD"
build_cudnn_dll "$OLD" cudnn64_8.dll 8.0.5.39
OLD_DLL_WIN="$(winpath "$OLD")\\cudnn64_8.dll"
# Through cvm it loads from the merged view's bin (a hard link of the selected build's DLL).
NEW_DLL_WIN="$CVM_ROOT\\views\\11.2.2+8.1.0.77-cuda11.2\\bin\\cudnn64_8.dll"

# jq helpers over $OUT
findings() { jq -r '[.findings[] | .severity + ":" + .code] | join(" ")' <<< "$OUT"; }
cudnn_lib() { jq -r --arg s "$1" --arg f "$2" '.libraries[] | select(.name == "cudnn64_8.dll" and .scenario == $s) | .[$f] // ""' <<< "$OUT"; }

# --- the older DLL first on PATH (Wine puts WINEPATH before the Windows PATH)
WINEPATH="$(winpath "$OLD")" wrun "$CVM_EXE" doctor --json
assert_eq "$RC" 1 "doctor's exit code with a problem (stderr: $ERR)"
jq -e . > /dev/null <<< "$OUT" || fail "doctor --json printed no JSON: $OUT"
assert_contains "$(findings)" "warning:library-not-selected"
msg=$(jq -r '[.findings[] | select(.code == "library-not-selected") | .message] | join("\n")' <<< "$OUT")
assert_contains "$msg" "$OLD_DLL_WIN (8.0.5.39)" "the finding names the older DLL and its version"
assert_contains "$msg" "$NEW_DLL_WIN" "the finding names the selected DLL"
fix=$(jq -r '[.findings[] | select(.code == "library-not-selected") | .fix] | first' <<< "$OUT")
assert_contains "$fix" "cvm exec --" "the fix"
assert_eq "$(cudnn_lib current path)" "$OLD_DLL_WIN" "the DLL a program started now loads"
assert_eq "$(cudnn_lib current version)" "8.0.5.39" "its version, from the PE version resource"
assert_eq "$(cudnn_lib current origin)" "PATH entry 1"
assert_ieq "$(cudnn_lib selected path)" "$NEW_DLL_WIN" "the DLL a program started through cvm loads"
assert_eq "$(cudnn_lib selected version)" "8.1.0.77" "the selected DLL's version"
# The Windows search order: System32, the 16-bit system folder, the Windows folder, the current
# folder, then PATH.
order=$(jq -r '[.libraries[] | select(.name == "cudnn64_8.dll" and .scenario == "current") | .candidates[].mechanism] | unique_by(.) | length' <<< "$OUT")
mechanisms=$(jq -r '[.libraries[] | select(.name == "cudnn64_8.dll" and .scenario == "current") | .candidates[].mechanism] | join(",")' <<< "$OUT")
assert_contains "$mechanisms" "System32,16-bit system folder,Windows folder,current folder,PATH" "search order"
[[ $order -ge 5 ]] || fail "search order: $mechanisms"
# The text report says the same.
WINEPATH="$(winpath "$OLD")" wrun "$CVM_EXE" doctor
assert_eq "$RC" 1 "doctor (text)"
assert_contains "$OUT" "$OLD_DLL_WIN  8.0.5.39"
assert_contains "$OUT" "fix: "

# --- fix 1: start the program through cvm exec
WINEPATH="$(winpath "$OLD")" wrun "$CVM_EXE" exec -- "$(winpath "$CVM_EXE")" doctor --json
assert_not_contains "$(findings)" "library-not-selected" "through cvm exec"
assert_not_contains "$(findings)" "several-cuda-on-path" "the selected toolkit and cuDNN on PATH are one selection"
assert_ieq "$(cudnn_lib current path)" "$NEW_DLL_WIN" "through cvm exec, a program loads the selected DLL"
assert_eq "$RC" 0 "doctor through cvm exec finds nothing wrong: $(findings)"

# --- fix 2: activate in cmd with the script of `cvm script`
wexpect 0 "$CVM_EXE" script 11.2+8.1 --shell cmd
cat > "$TEST_TMP/fixed.bat" << EOS
@echo off
call "$(winpath "$PROJ")\\activate_cuda112.bat"
"$(winpath "$CVM_EXE")" doctor --json
EOS
WINEPATH="$(winpath "$OLD")" wbatch "$TEST_TMP/fixed.bat"
assert_not_contains "$(findings)" "library-not-selected" "after activate_cuda112.bat"
assert_ieq "$(cudnn_lib current path)" "$NEW_DLL_WIN" "after activate_cuda112.bat, a program loads the selected DLL"
assert_eq "$RC" 0 "doctor after activate_cuda112.bat: $(findings)"

# --- NVIDIA's installer's PATH: bin and libnvvp of one toolkit are one toolkit
WINEPATH="$TK_WIN\\bin;$TK_WIN\\libnvvp" wrun "$CVM_EXE" doctor --json
assert_not_contains "$(findings)" "several-cuda-on-path" "bin and libnvvp of one toolkit"
# ... while a second toolkit is a second one.
make_win_toolkit "$WIN_C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v10.0" 10.0.130
WINEPATH="$(winpath "$WIN_C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v10.0")\\bin;$TK_WIN\\bin" wrun "$CVM_EXE" doctor --json
assert_contains "$(findings)" "warning:several-cuda-on-path" "two toolkits on PATH"

echo "PASS: windows doctor"
