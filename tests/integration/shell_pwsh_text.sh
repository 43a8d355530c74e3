#!/usr/bin/env bash
# The PowerShell code cvm prints (init with and without the hook, env, deactivate, shell,
# script, completions) passes the text checks of pwsh_text.py (no pwsh runs here): brackets and
# strings closed, ASCII only, no setx. A folder with quotes, a space, `$` and a backtick tests the
# quoting. What the code does is unit-tested in tests/unit/core/shell_test.cpp.
source "$(dirname "$0")/lib.sh"
need_tools python3
check="$CVM_SOURCE_DIR/tests/integration/pwsh_text.py"
dir="$TEST_TMP/it's \$x \`y \"z\""
make_toolkit "$dir/cuda-11.2" 11.2.2
"$CVM" import "$dir/cuda-11.2" 2> /dev/null || fail "import"
mkdir -p "$dir/w"
cd "$dir/w"
n=0
pwsh_ok() { # CMD...: what cvm prints passes the checks
    n=$((n + 1))
    "$@" > "$TEST_TMP/out.$n.ps1" 2> "$TEST_TMP/err" || fail "[$*] failed: $(cat "$TEST_TMP/err")"
    [[ -s $TEST_TMP/out.$n.ps1 ]] || fail "[$*] printed nothing"
    python3 "$check" "$TEST_TMP/out.$n.ps1" || fail "the PowerShell code of [$*] does not pass (above)"
}
pwsh_ok "$CVM" init pwsh
pwsh_ok "$CVM" init pwsh --no-hook
pwsh_ok "$CVM" env --shell pwsh 11.2
pwsh_ok "$CVM" deactivate --shell pwsh
pwsh_ok "$CVM" shell 11.2 --shell pwsh
pwsh_ok "$CVM" shell --unset --shell pwsh
pwsh_ok "$CVM" script 11.2 --shell pwsh -o -
pwsh_ok "$CVM" completions powershell
# The quoted folder is in the code (so the checks above read it).
grep -qF "it''s \$x \`y \"z\"" "$TEST_TMP/out.3.ps1" || fail "cvm env --shell pwsh does not name the folder as a '...' string"
echo "PASS: PowerShell text"
