#!/usr/bin/env bash
# One launch plan on Windows (activation/launch_plan.h, issue 42), under Wine: the rows of
# shim_launch_plan.sh with Windows names (a tool typed in any case, with or without .exe, found by
# cmd through PATHEXT), each driven through every caller in one cmd.exe: the shim cmd finds, `cvm
# which`, `cvm exec`, and the cmd activations (`cvm env --shell cmd`, `cvm script --shell cmd`),
# after which cmd runs the tool by the name typed. They run the same program or refuse with the
# same line.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

CVM_EXE="$WINDOWS_BIN/cvm.exe"
STORE="$WIN_C/store"
export CVM_ROOT="$WIN_C_WIN\\store"
TK11="$WIN_C/CUDA/v11.2" TK12="$WIN_C/CUDA/v12.4" LATER="$WIN_C/later"
make_win_toolkit "$TK11" 11.2.2
make_win_toolkit "$TK12" 12.4.1
# A tool only 12.4 has, and one only the machine has, on PATH after the shims.
build_fake_nvcc "$TK12/bin/ncu.exe" 12.4
mkdir -p "$LATER"
build_fake_nvcc "$LATER/sysonly.exe" 10.0
wexpect 0 "$CVM_EXE" import "$(winpath "$TK11")"
wexpect 0 "$CVM_EXE" import "$(winpath "$TK12")"
# Shims for the machine's tool and for a tool nothing has (copies of the shim under those names).
for n in sysonly nowhere; do cp "$STORE/shims/nvcc.exe" "$STORE/shims/$n.exe"; done
[[ -f $STORE/shims/ncu.exe ]] || fail "no shim for 12.4's ncu: $(ls "$STORE/shims")"

# The table: folder selection | tool as typed | run:TEXT (the program prints TEXT) or refuse:LINE.
cases=(
    "|NVCC|refuse:no CUDA version is selected here and nvcc is not on PATH outside cvm's shims"
    "system|Nowhere.Exe|refuse:nowhere is not installed outside cvm ('system' is selected by"
    "12.9|nvcc|refuse:CUDA 12.9 is not installed; run \`cvm install 12.9\`"
    "11.2|NVCC|run:release 11.2, V11.2"
    "11.2|nvcc.EXE|run:release 11.2, V11.2"
    "12.4|Nvcc.Exe|run:release 12.4, V12.4"
    "11.2|NCU|refuse:ncu is not part of CUDA 11.2.2 (selected by"
    "11.2|SYSONLY.exe|run:release 10.0, V10.0"
)
n=0
for row in "${cases[@]}"; do
    IFS='|' read -r spec tool want <<< "$row"
    dir=$WIN_C/case$((n += 1))
    mkdir -p "$dir"
    [[ -z $spec ]] || printf '%s\n' "$spec" > "$dir/.cudaversion"
    where="case $n ($spec, $tool)"
    # One cmd per row: each caller's output follows a ==NAME line, its exit code an rc= line.
    cat > "$dir/row.bat" << EOS
@echo off
cd /d "$(winpath "$dir")"
echo ==shim
$tool --version 2>&1
echo rc=%ERRORLEVEL%
echo ==which
"$(winpath "$CVM_EXE")" which $tool 2>&1
echo rc=%ERRORLEVEL%
echo ==exec
"$(winpath "$CVM_EXE")" exec -- $tool --version 2>&1
echo rc=%ERRORLEVEL%
echo ==env
"$(winpath "$CVM_EXE")" env --shell cmd > env.bat 2> act.err
call :activated env.bat
echo ==script
"$(winpath "$CVM_EXE")" script --shell cmd -o script.bat 2> act.err
call :activated script.bat
exit /b 0
rem activated FILE: runs the tool as typed after FILE activated the selection (or says why cvm
rem did not write FILE).
:activated
set "arc=%ERRORLEVEL%"
if not "%arc%"=="0" type act.err
if "%arc%"=="0" call %1
if "%arc%"=="0" $tool --version 2>&1
if "%arc%"=="0" set "arc=%ERRORLEVEL%"
echo rc=%arc%
exit /b 0
EOS
    WINEPATH="$CVM_ROOT\\shims;$(winpath "$LATER")" wrun cmd /c "$(winpath "$dir/row.bat")"
    [[ $RC == 0 ]] || fail "$where: cmd failed ($RC): $OUT / $ERR"
    row_out=$OUT
    # part NAME: what the caller printed; part_rc NAME: its exit code.
    part() { sed -n "/^==$1\$/,/^rc=/p" <<< "$row_out" | sed '1d;$d'; }
    part_rc() { sed -n "/^==$1\$/,/^rc=/p" <<< "$row_out" | sed -n '$s/^rc=//p'; }
    shim_out=$(part shim)
    for caller in shim which exec env script; do
        out=$(part "$caller") rc=$(part_rc "$caller")
        line=
        # What activates "the selection" asks for one when nothing is selected, and a script for
        # `system` would change nothing (as in shim_launch_plan.sh).
        [[ -n $spec || $caller != @(exec|env|script) ]] || line="no CUDA version is selected here; run \`cvm use SPEC\`"
        [[ $spec != system || $caller != script ]] || line="'system' changes nothing"
        if [[ -n $line ]]; then
            [[ $rc != 0 ]] || fail "$where: $caller went on: $out"
            assert_contains "$out" "$line" "$where: $caller"
            continue
        fi
        case $want in
            run:*)
                [[ $rc == 0 ]] || fail "$where: exit $rc from $caller: $out"
                if [[ $caller == which ]]; then
                    # which names the file: the same program the shim ran.
                    wexpect 0 "$(unixpath "$out")" --version
                    out=$OUT
                fi
                assert_contains "$out" "${want#run:}" "$where: the program $caller ran"
                ;;
            refuse:*)
                [[ $rc != 0 ]] || fail "$where: $caller went on: $out"
                assert_contains "$out" "${want#refuse:}" "$where: the line of $caller"
                [[ $caller != which ]] || assert_eq "$out" "$shim_out" "$where: which's line is the shim's"
                ;;
        esac
    done
done
echo "PASS: windows launch plan: ${#cases[@]} cases x 5 callers"
