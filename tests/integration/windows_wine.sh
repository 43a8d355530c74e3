#!/usr/bin/env bash
# The Wine helpers of the Windows tests (lib_wine.sh): the test's wineserver runs from wine_start
# to the exit trap, through programs that end and pauses between them (left alone, Debian's
# exits with its last program, and a program starting then fails with "wine client error");
# Wine's own failures end a test as Wine's, never as the program's exit code.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wine.sh"
trap 'wine_stop; cleanup_test_tmp' EXIT
wine_start
server=$WINE_SERVER_PID

# One server throughout: the same one after each program, and after a pause with none running.
# wine_start opened the session: Wine's session start (wineboot) wrote to its own log, nothing
# of it reached the test's first program (with Wine's err channel on, it says it could not run
# the winemenubuilder.exe the tests switch off).
for word in one two; do
    wexpect 0 cmd /c "echo $word"
    assert_eq "$OUT" "$word"
    assert_eq "$ERR$WINE_ERRS" "" "what Wine and [cmd /c echo $word] wrote to stderr"
    assert_eq "$(wine_server_pid)" "$server" "the wineserver after [cmd /c echo $word]"
done
sleep 1
wexpect 7 cmd /c "exit 7"
assert_eq "$(wine_server_pid)" "$server" "the wineserver after a pause"

# The server gone (killed here): the program still runs (wine starts another server), but the
# test fails naming Wine, not with the program's result.
rc=0
("$WINESERVER" -k; wexpect 0 cmd /c "echo three") 2> "$TEST_TMP/gone.err" || rc=$?
assert_eq "$rc" 1 "a test whose wineserver went away"
assert_contains "$(cat "$TEST_TMP/gone.err")" "FAIL: Wine failed, not the program: the wineserver (pid $server) of $WINEPREFIX went away while running [cmd /c echo three]"
"$WINESERVER" -w
wine_start # (ends the server wine started, starts the test's own again)
wexpect 0 cmd /c "echo four"

# A session that cannot open (here the program that opens it, cmd.exe, switched off) is tried
# with three servers, a note each, and then ends the test naming Wine, before any program of it ran.
rc=0
(WINEDLLOVERRIDES="$WINEDLLOVERRIDES;cmd.exe=d" && wine_start) 2> "$TEST_TMP/session.err" || rc=$?
assert_eq "$rc" 1 "a test whose Wine session could not open"
assert_contains "$(cat "$TEST_TMP/session.err")" "did not open its session (attempt 3: cmd.exe /c echo exited 53"
assert_contains "$(cat "$TEST_TMP/session.err")" "FAIL: no working wineserver for $WINEPREFIX after 3 starts"
wine_start
wexpect 0 cmd /c "echo five"

# A program Wine cannot load exits with the low byte of the loader's NTSTATUS (0xC0000135: 53)
# and prints nothing itself: the failure shows Wine's err lines, kept out of $ERR.
rc=0
(WINEDLLOVERRIDES="$WINEDLLOVERRIDES;shell32=d" && wexpect 0 cmd /c "echo six") 2> "$TEST_TMP/load.err" || rc=$?
assert_eq "$rc" 1 "a program Wine could not load"
assert_contains "$(cat "$TEST_TMP/load.err")" "got 53; stdout: ; stderr: ; Wine's errors: "
assert_contains "$(cat "$TEST_TMP/load.err")" ":err:module:import_dll Library shell32.dll"

# A second test given the prefix while this one holds it is refused, and its exit trap leaves
# this test's server alone (it once ended it, and the program this test was running then).
rc=0
bash -c 'source "$1/lib.sh"; source "$1/lib_wine.sh"; trap "wine_stop; cleanup_test_tmp" EXIT; wine_start' \
    second "$(dirname "$0")" 2> "$TEST_TMP/second.err" || rc=$?
assert_eq "$rc" 1 "a second test on the prefix"
assert_contains "$(cat "$TEST_TMP/second.err")" "another test (pid $$) is using the Wine prefix $WINEPREFIX"
assert_eq "$(wine_server_pid)" "$WINE_SERVER_PID" "the wineserver after a second test was refused the prefix"
wexpect 0 cmd /c "echo again"

# Wine's own error (a prefix of another user): named as Wine's, not as the program's exit 1.
if [[ $(id -u) == 0 ]]; then
    mkdir "$TEST_TMP/theirs"
    chown nobody "$TEST_TMP/theirs"
    rc=0
    (WINEPREFIX="$TEST_TMP/theirs" wexpect 0 cmd /c "echo seven") 2> "$TEST_TMP/theirs.err" || rc=$?
    assert_eq "$rc" 1 "a program Wine could not start"
    assert_contains "$(cat "$TEST_TMP/theirs.err")" "FAIL: Wine failed, not the program, running [cmd /c echo seven]: wine: "
    assert_contains "$(cat "$TEST_TMP/theirs.err")" "is not owned by you"
    assert_not_contains "$(cat "$TEST_TMP/theirs.err")" "expected exit 0"
else
    echo "note: not root; the case of another user's prefix is left out" >&2
fi
assert_eq "$(wine_server_pid)" "$WINE_SERVER_PID" "the wineserver at the end"
echo "PASS: the Wine helpers"
