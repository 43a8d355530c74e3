#!/usr/bin/env bash
# cmd activation scripts and `cvm env/deactivate --shell cmd` output run in wine's cmd.exe. The
# scenario lives in the hidden [wine] case of tests/unit/core/shell_test.cpp, which renders the
# batch files for Windows paths (Z:\...) and checks the variables cmd ends up with. Wine runs
# in the build folder's prefix with a wineserver for this test (lib_wine.sh).
source "$(dirname "$0")/lib.sh"
tests=""
for candidate in "$CVM_BIN/core_tests" "${CVM_BUILD_DIR:-}/bin/core_tests" "${CVM_BUILD_DIR:-}/tests/core_tests"; do
    if [[ -x $candidate ]]; then tests=$candidate; break; fi
done
[[ -n $tests ]] || windows_missing "core_tests is not built"
source "$(dirname "$0")/lib_wine.sh"
trap 'wine_stop; cleanup_test_tmp' EXIT
wine_start
wrun cmd /c "echo ok"
[[ $OUT == ok ]] || windows_missing "wine cannot run cmd.exe here: $ERR"
rc=0
"$tests" "[wine]" > "$TEST_TMP/out" 2>&1 || rc=$?
cat "$TEST_TMP/out"
wine_check "core_tests [wine]" "$(cat "$TEST_TMP/out")"
[[ $rc == 0 ]] || fail "the cmd scripts did not behave under wine (see above)"
echo "PASS: cmd under wine"
