#!/usr/bin/env bash
# The Windows zip's install.ps1, read as text (no PowerShell runs here): it passes the PowerShell
# text checks of pwsh_text.py (brackets, strings, no setx, no variable read that nothing sets,
# ASCII only), leaves the PATH edit to `cvm.exe __add-user-path` (the code install.cmd runs,
# tested under Wine by windows_package.sh) and stops when that fails, and refuses a zip that was
# not extracted whole with exit 2, as install.cmd does. The checks must catch broken text too.
source "$(dirname "$0")/lib.sh"
need_tools python3
ps1="$CVM_SOURCE_DIR/scripts/windows/install.ps1"
check="$CVM_SOURCE_DIR/tests/integration/pwsh_text.py"

python3 "$check" --variables "$ps1" || fail "install.ps1 does not pass the PowerShell text checks (above)"
text=$(cat "$ps1")
# Statements, without comments.
code=$(grep -v '^[[:space:]]*#' "$ps1")
grep -Eq '^& \$cvm __add-user-path \$bin \$shims( |$)' <<< "$code" || fail "install.ps1 must run cvm.exe __add-user-path \$bin \$shims"
grep -A1 -E '^& \$cvm __add-user-path' <<< "$code" | grep -q 'if (\$LASTEXITCODE -ne 0) { exit 1 }' ||
    fail "install.ps1 must stop when __add-user-path fails"
grep -q '^\$bin = Join-Path \$Destination .bin.$' <<< "$code" || fail "install.ps1: \$bin is not Destination\\bin"
grep -q "^\$shims = Join-Path \$store 'shims'$" <<< "$code" || fail "install.ps1: \$shims is not the store's shims"
# Its own registry writes would be a second, untested PATH edit.
if grep -Eiq 'Set-ItemProperty|New-ItemProperty|HKCU:|SetEnvironmentVariable' <<< "$code"; then
    fail "install.ps1 edits the registry itself; leave it to cvm __add-user-path"
fi
# A zip extracted without bin\cvm.exe: one line naming what to do, exit 2.
grep -A3 -F "Join-Path \$source 'bin\\cvm.exe'" <<< "$code" | grep -q 'extract the whole zip' ||
    fail "install.ps1 must say to extract the whole zip"
grep -A3 -F "Join-Path \$source 'bin\\cvm.exe'" <<< "$code" | grep -q 'exit 2' || fail "install.ps1 must exit 2 on a partial zip"

# The checks find what breaks PowerShell (each broken copy must be refused).
broken() { # NAME SED-EXPRESSION
    local copy="$TEST_TMP/$1.ps1"
    sed "$2" "$ps1" > "$copy"
    ! cmp -s "$copy" "$ps1" || fail "the broken copy $1 is the same as install.ps1"
    if python3 "$check" --variables "$copy" > "$TEST_TMP/$1.out"; then fail "pwsh_text.py passed the broken copy $1"; fi
    [[ -s $TEST_TMP/$1.out ]] || fail "pwsh_text.py said nothing about $1"
}
broken brace 's/^if (\$LASTEXITCODE -ne 0) { exit 1 }$/if ($LASTEXITCODE -ne 0) { exit 1/'
broken quote "s/'Programs\\\\cvm'/'Programs\\\\cvm/"
broken typo 's/^\$shims = Join-Path/$shimz = Join-Path/'
broken setx 's/^& \$cvm __add-user-path .*/setx PATH "$env:PATH;$bin"/'
broken subexpr 's/^Write-Output "cvm installed in \$bin;/Write-Output "cvm installed in $($bin;/'
broken ascii 's/^# install.ps1/# install.ps1 \xc3\xa9/'
echo "PASS: install.ps1 text"
