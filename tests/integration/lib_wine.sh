# Wine for the tests (sourced after lib.sh, by lib_windows.sh and shell_cmd_wine.sh): the
# prefix, one wineserver per test, and wrun/wexpect, which tell Wine's own failures from the
# program's.
#
# The prefix: one per build folder ($CVM_BUILD_DIR/wineprefix, or CVM_TEST_WINEPREFIX), made
# once (wineboot, in a folder renamed into place when complete). The Wine tests take turns on it
# (RESOURCE_LOCK wineprefix in tests/CMakeLists.txt); nothing else uses it, so another build
# folder's run, or scripts/windows-wine.sh's prefix, never meets this one's server.
#
# The server: wine_start starts one that stays (wineserver -p600) and opens its session (the
# server's first program, which starts wineboot and Wine's services) before the test's first
# Wine program; the exit trap (wine_stop) ends it with everything it runs (wineserver -k, -w).
# Left alone a wineserver begins to exit when its last program does (Debian's wrapper passes
# -p0), and a wine starting in that moment fails: "wine client error:0: recvmsg: Connection
# reset by peer", exit 1, or killed with the server's other processes, with no output at all.
# -p600 puts that moment 600 s (ctest's TIMEOUT for a test) after the last program: never while
# a test runs, and a server left by a test killed before its trap still ends by itself (one
# that stayed for good would keep the test's pipe to ctest open, and ctest waiting, for good).
# A server per test, not one for the whole ctest run: Wine's services and anything a test left
# running end with that test, so no test meets another's leftovers.
#
# Costs, measured on a busy 2-core machine: making the prefix ~25 s (once per build folder,
# 700 MB); a copy of it per test ~10 s (cp -a; hard links are no way out: wineserver rewrites a
# registry file with several links in place); starting a test's server and opening its session
# 3.1-3.6 s at load 7 (the session's start was paid by the test's first program before), after
# which a program starts in 0.4-1.0 s, against 2.3-3.4 s on a server of its own.

: "${CVM_BUILD_DIR:=$CVM_BIN/..}"
# The machine's Wine settings do not reach the tests.
unset DISPLAY WAYLAND_DISPLAY WINEPATH WINESERVER WINELOADER WINEARCH WINEDEBUG WINEDLLOVERRIDES || true
WINE=""
for candidate in wine64 wine; do
    if command -v "$candidate" > /dev/null 2>&1; then WINE=$(command -v "$candidate"); break; fi
done
[[ -n $WINE ]] || windows_missing "wine is not installed (apt-get install wine wine64)"
WINESERVER=$(command -v wineserver 2> /dev/null) || WINESERVER=$(dirname "$WINE")/wineserver
[[ -x $WINESERVER ]] || windows_missing "wineserver is not installed (apt-get install wine wine64)"
command -v flock > /dev/null 2>&1 || windows_missing "flock is not installed (util-linux)"

# Wine's err channel only: a program Wine could not load or start exits with the low byte of an
# NTSTATUS (0xC0000135, no DLL, is exit 53) and says nothing else. wrun keeps these lines out of
# $ERR (in $WINE_ERRS) and shows them when the test fails.
export WINEDEBUG=-all,err+all
export WINEPREFIX="${CVM_TEST_WINEPREFIX:-$CVM_BUILD_DIR/wineprefix}"
export WINEDLLOVERRIDES="winemenubuilder.exe=d;mscoree=d;mshtml=d"
mkdir -p "$(dirname "$WINEPREFIX")"
WINEPREFIX=$(cd "$(dirname "$WINEPREFIX")" && pwd)/$(basename "$WINEPREFIX")
WINE_LOCK="$WINEPREFIX.lock"
WINE_OWNER="$WINEPREFIX.test-pid"
WINE_SERVER_PID="" WINE_STARTED=""

# wine_make_prefix: the prefix, made once under the lock; absent until complete.
wine_make_prefix() {
    (
        flock 9
        [[ -f $WINEPREFIX/system.reg ]] && exit 0
        local stage="$WINEPREFIX.new"
        rm -rf "$stage" "$WINEPREFIX"
        WINEPREFIX=$stage "$WINE" wineboot --init < /dev/null > /dev/null 2>&1 9>&- || true
        WINEPREFIX=$stage "$WINESERVER" -w 9>&- || true
        [[ -f $stage/system.reg && -d $stage/drive_c ]] || exit 1
        mv "$stage" "$WINEPREFIX"
    ) 9> "$WINE_LOCK" || windows_missing "wine could not make a prefix at $WINEPREFIX"
}

# wine_server_pid: the pid of the wineserver running for $WINEPREFIX (none: fails). A server
# works in its folder .../server-<device>-<inode of the prefix> (hexadecimal).
wine_server_pid() {
    local id p
    id=$(stat -c '%d %i' "$WINEPREFIX") || return 1
    id=$(printf 'server-%x-%x' $id)
    for p in /proc/[0-9]*; do
        [[ $(readlink "$p/exe" 2> /dev/null) == */wineserver* ]] || continue
        [[ $(readlink "$p/cwd" 2> /dev/null) == */"$id" ]] || continue
        echo "${p#/proc/}"
        return 0
    done
    return 1
}

# wine_start: the prefix, and a wineserver for this test that stays until wine_stop, with its
# session opened (wine_open_session). One left by a test killed before its exit trap is ended
# first. A server gone right after it started, or a session that did not open, is started again,
# twice at most, with a note: no program of the test has run yet, so nothing is lost.
wine_start() {
    wine_make_prefix
    WINE_STARTED=1
    local attempt
    for attempt in 1 2 3; do
        (
            flock 9
            local owner
            owner=$(cat "$WINE_OWNER" 2> /dev/null) || owner=
            if [[ -n $owner && $owner != "$$" ]] && kill -0 "$owner" 2> /dev/null; then
                fail "another test (pid $owner) is using the Wine prefix $WINEPREFIX: run the Wine tests one at a time (ctest does)"
            fi
            echo "$$" > "$WINE_OWNER"
            "$WINESERVER" -k > /dev/null 2>&1 9>&- || true
            "$WINESERVER" -w 9>&- || true
            # Returns once the server takes clients (0), or 2 when one runs already.
            "$WINESERVER" -p600 < /dev/null > /dev/null 2>&1 9>&- ||
                fail "wineserver -p600 could not start a server for $WINEPREFIX; wineservers: $(wine_servers)"
        ) 9> "$WINE_LOCK"
        wine_find_server "$attempt" && wine_open_session "$attempt" && return 0
    done
    fail "no working wineserver for $WINEPREFIX after 3 starts (notes above); wineservers: $(wine_servers)"
}

# wine_find_server ATTEMPT: sets WINE_SERVER_PID to the server just started, looked for a few
# times over 2 s before it counts as gone: stress run 7 (2026-12-02) found none three times
# while the listing a moment later showed one in the prefix's folder.
wine_find_server() {
    local look
    for look in 1 2 3 4 5 6 7 8 9 10; do
        if WINE_SERVER_PID=$(wine_server_pid); then
            [[ $look == 1 ]] || echo "note: the wineserver for $WINEPREFIX showed in /proc only at look $look" >&2
            return 0
        fi
        sleep 0.2
    done
    echo "note: the wineserver started for $WINEPREFIX is gone (attempt $1; looked for one working in .../$(printf 'server-%x-%x' $(stat -c '%d %i' "$WINEPREFIX"))); wineservers: $(wine_servers)" >&2
    return 1
}

# wine_open_session ATTEMPT: runs the server's first program here, before any of the test's.
# Wine's first program on a new server starts the session (wineboot --init, which starts
# services.exe, winedevice.exe, plugplay.exe and svchost.exe) and waits for it; those processes
# keep that program's stderr. Here that is a file, not the test's pipe to ctest, and a session
# that fails to open costs a restart, not a test program's result: stress run 3 (2026-12-02)
# had a test's first program, cvm.exe import, exit 1 with no output at all.
wine_open_session() {
    local log="$TEST_TMP/.wine-session" rc=0
    timeout -k 10 120 "$WINE" cmd.exe /c echo session-open < /dev/null > "$log" 2>&1 || rc=$?
    if [[ $rc == 0 ]] && grep -q '^session-open' "$log" && kill -0 "$WINE_SERVER_PID" 2> /dev/null; then
        return 0
    fi
    echo "note: the wineserver started for $WINEPREFIX did not open its session (attempt $1: cmd.exe /c echo exited $rc; output: $(tr -d '\r' < "$log" | tr '\n' ' ' | cut -c1-300)); wineservers: $(wine_servers)" >&2
    return 1
}

# wine_servers: the machine's wineservers, one "pid (state) in folder" each (for messages).
wine_servers() {
    local p
    for p in /proc/[0-9]*; do
        [[ $(readlink "$p/exe" 2> /dev/null) == */wineserver* ]] || continue
        printf '%s (%s) in %s; ' "${p#/proc/}" "$(awk '/^State:/ { print $2 }' "$p/status" 2> /dev/null)" \
            "$(readlink "$p/cwd" 2> /dev/null)"
    done
}

# wine_stop: ends the test's server and every program it still runs (exit traps call it).
# Only the test that owns the prefix ends its server: a test refused the prefix (another one
# holds it) must leave that one's server, and the program it runs, alone.
wine_stop() {
    [[ -n $WINE_STARTED ]] || return 0
    WINE_STARTED="" WINE_SERVER_PID=""
    [[ $(cat "$WINE_OWNER" 2> /dev/null) == "$$" ]] || return 0
    "$WINESERVER" -k > /dev/null 2>&1 || true
    "$WINESERVER" -w > /dev/null 2>&1 || true
    rm -f "$WINE_OWNER"
}

# wine_check WHAT STDERR: fails, naming Wine rather than the program, when Wine broke down
# while running WHAT: the test's wineserver is gone, or the client printed Wine's own error (a
# connection to the server refused or reset, a loader that could not start the program). A
# program's crash ("wine: Unhandled ...") stays the program's; notes about the prefix are no
# failure.
wine_check() {
    local what=$1 err=$2 line
    if [[ -n $WINE_SERVER_PID ]] && ! { kill -0 "$WINE_SERVER_PID" 2> /dev/null &&
        [[ $(readlink "/proc/$WINE_SERVER_PID/exe" 2> /dev/null) == */wineserver* ]]; }; then
        fail "Wine failed, not the program: the wineserver (pid $WINE_SERVER_PID) of $WINEPREFIX went away while running [$what]; stderr: $err"
    fi
    line=$(grep -E '^(wine client error:|wine: |wineserver: )' <<< "$err" |
        grep -m1 -v -E '^wine: (Unhandled|configuration in|created the configuration)') || return 0
    fail "Wine failed, not the program, running [$what]: $line"
}

# wrun PROGRAM.exe ARGS...: runs under Wine with stdout in $OUT, stderr in $ERR, exit code in $RC
# (the program's: Wine's own failures end the test here). CR characters are removed.
# A program still running after CVM_TEST_WINE_LIMIT seconds (default 300) fails the test as hung,
# naming it, before ctest's TIMEOUT would end the test with no output.
# Wine that cannot lay out a new process's memory (ntdll's virtual_alloc_first_teb: "failed to map
# the shared user data: c0000018", an address the kernel gave to something else) stops before the
# program's first instruction; that start is made once more, and said (stress run, 2026-12-06:
# windows_cmd's `cvm.exe script -o`, exit 1, at load 6).
wrun() {
    local limit=${CVM_TEST_WINE_LIMIT:-300} start=$SECONDS attempt
    for attempt in 1 2; do
        RC=0
        OUT=$(timeout --foreground -k 10 "$limit" "$WINE" "$@" 2> "$TEST_TMP/.stderr") || RC=$?
        [[ $RC != 0 && $attempt == 1 ]] &&
            grep -q 'virtual_alloc_first_teb.*failed to map the shared user data' "$TEST_TMP/.stderr" ||
            break
        echo "note: Wine could not start [$*] (failed to map the shared user data); started again" >&2
    done
    OUT=${OUT//$'\r'/}
    WINE_ERRS=$(tr -d '\r' < "$TEST_TMP/.stderr" | grep -E '^[0-9a-f]{4}:err:' | cut -c1-300 | tr '\n' ';') || true
    ERR=$(tr -d '\r' < "$TEST_TMP/.stderr" | grep -v -E '^[0-9a-f]{4}:err:') || true
    if [[ $RC == 124 || $RC == 137 ]] && ((SECONDS - start >= limit)); then
        hung "[$*] under Wine still ran after $limit s; stderr: $ERR; Wine's errors: $WINE_ERRS"
    fi
    wine_check "$*" "$ERR"
    # cvm.exe says why whenever it fails (but `exec` passes on its tool's exit code): a failure
    # with no word at all is Wine losing the program or its output (stress run 3, 2026-12-02:
    # cvm.exe import, exit 1, nothing printed).
    if [[ $RC != 0 && -z $OUT && -z $ERR && $(basename "$1") == cvm.exe && ${2:-} != exec ]]; then
        fail "Wine failed, not the program, running [$*]: exit $RC with no output at all (cvm always says why it fails); Wine's errors: ${WINE_ERRS:-none}; wineservers: $(wine_servers); Wine's processes: $(ps -eo pid=,stat=,etimes=,args= | grep -E '\.exe|wine' | grep -v grep | cut -c1-160 | tr '\n' ';')"
    fi
}
# wexpect CODE PROGRAM.exe ARGS...: wrun, and fail unless the exit code is CODE.
wexpect() {
    local want=$1
    shift
    wrun "$@"
    [[ $RC == "$want" ]] && return 0
    local wine_said=""
    [[ -z $WINE_ERRS ]] || wine_said="; Wine's errors: $WINE_ERRS"
    fail "expected exit $want from [$*] under wine, got $RC; stdout: $OUT; stderr: $ERR$wine_said"
}
