#!/usr/bin/env bash
# cmd activation scripts and `cvm env/deactivate --shell cmd` output run in wine's cmd.exe. The
# scenario lives in the hidden [wine] case of tests/unit/core/shell_test.cpp, which renders the
# batch files for Windows paths (Z:\...) and checks the variables cmd ends up with.
source "$(dirname "$0")/lib.sh"
command -v wine > /dev/null 2>&1 || command -v wine64 > /dev/null 2>&1 || windows_missing "wine is not installed"
tests=""
for candidate in "$CVM_BIN/core_tests" "${CVM_BUILD_DIR:-}/bin/core_tests" "${CVM_BUILD_DIR:-}/tests/core_tests"; do
    if [[ -x $candidate ]]; then tests=$candidate; break; fi
done
[[ -n $tests ]] || windows_missing "core_tests is not built"
export WINEDEBUG=-all
# A first wine start in a fresh prefix takes a while; a broken wine is a skip, not a failure.
timeout 300 wine cmd /c "echo ok" 2>/dev/null | grep -q ok || windows_missing "wine cannot run cmd.exe here"
"$tests" "[wine]" || fail "the cmd scripts did not behave under wine (see above)"
echo "PASS: cmd under wine"
