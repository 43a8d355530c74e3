#!/usr/bin/env bash
# Windows, under Wine: archives are extracted while they download, as on Linux. The extraction
# reads the .part while the download writes it, and the download renames it into the cache, or
# deletes it, while the extraction still holds it open (Windows allows that only to handles that
# share deletion). Seen here: files in the staging folder while the .part is there and the server
# has not sent the last byte; a dropped connection resumed; a download begun again from its first
# byte (the open .part deleted and made anew); a checksum mismatch after a whole streamed
# extraction, damaged bytes that stop the extraction early, and Ctrl-C in the middle: nothing
# kept, no .part and no staging folder left. shared_file_test.exe (tests/windows/) checks the
# handles themselves.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
source "$(dirname "$0")/lib_install.sh"
unset CVM_REGISTRY_DIR # a Unix path: the Windows build finds its own registry
trap 'stop_server; cleanup_windows_test' EXIT
CVM_EXE="$WINDOWS_BIN/cvm.exe"
T=$TEST_TMP
M=$T/mirror
D=$M/cudnn/redist
REL=cudnn/windows-x86_64/cudnn-windows-x86_64-9.1.0.70_cuda12-archive.zip
NAME=$(basename "$REL")
ID=9.1.0.70-cuda12
mkdir -p "$D/cudnn/windows-x86_64"
$MK cudnn-redist "$D/$REL" --version 9.1.0 --windows --no-links --big 3
# manifest (make_archives.py) writes Linux entries: the same artifact for Windows.
write_manifest() { # DIR
    $MK manifest "$1/redistrib_9.1.0.json" --product cudnn --base "$1" --entry "cudnn=9.1.0.70=$REL=12"
    sed -i 's/"linux-x86_64"/"windows-x86_64"/' "$1/redistrib_9.1.0.json"
}
write_manifest "$D"
export CVM_RETRY_DELAY_MS=50
STORES=0
fresh() { # a store of its own (no download cache) for the next case
    STORES=$((STORES + 1))
    export CVM_ROOT="$WIN_C_WIN\\store$STORES"
    STORE=$WIN_C/store$STORES
    CACHE=$STORE/cache/downloads
}
fresh

no_part() { # WHAT: neither the .part nor a deleted one that is still open remains
    if compgen -G "$CACHE/*.part*" > /dev/null; then
        ls -lA "$CACHE" >&2
        fail "$1 left a .part behind"
    fi
}
store_is() { CVM_ROOT=$STORE assert_store cudnn "$1"; }
installed_ok() { # WHAT
    store_is "$ID"
    no_part "$1"
    cmp -s "$CACHE/$NAME" "$D/$REL" || fail "$1: the cached archive is not the served one"
    [[ -f $STORE/cudnn/$ID/root/bin/cudnn64_9.dll ]] || fail "$1: no cudnn64_9.dll installed"
}

# --- the part file's handles: read while written, renamed and deleted while open ------------
FILE_TEST="$WINDOWS_BIN/../tests/shared_file_test.exe"
if [[ ! -f $FILE_TEST ]]; then # a build folder from before the test existed
    FILE_TEST="$T/shared_file_test.exe"
    x86_64-w64-mingw32-g++ -std=c++17 -static -I"$CVM_SOURCE_DIR/src" -o "$FILE_TEST" \
        "$WIN_FIXTURES_SRC/shared_file_test.cpp" "$CVM_SOURCE_DIR/src/platform/windows/shared_file.cpp" ||
        fail "mingw-w64 could not build shared_file_test.exe"
fi
mkdir -p "$WIN_C/files"
wrun "$FILE_TEST" "$(winpath "$WIN_C/files")"
[[ $RC == 0 ]] || fail "the part file's handles misbehave under Wine: $OUT $ERR"
assert_contains "$OUT" "0 failed"

# --- extracted while it arrives -------------------------------------------------------------
# The server holds the body after 1.5 MB of 3 until the test has seen a file in the staging
# folder (and the .part): extracted before the download ended, with no race against its end.
start_server "$M" "/cudnn/redist/cudnn/*=hold:1500000:$T/go"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
"$WINE" "$CVM_EXE" install cudnn 9.1.0 --cuda 12 > "$T/out" 2> "$T/err" &
pid=$!
staged() { compgen -G "$STORE/.staging/install-*/x/*/include/cudnn_version.h" > /dev/null; }
wait_running "$pid" 300 staged
staged || fail "nothing was extracted from the first 1500000 bytes: $(tr -d '\r' < "$T/err")"
[[ -f $CACHE/$NAME.part ]] || fail "no .part while the download was held"
touch "$T/go"
finish "$pid" 300 "the streamed cvm.exe install"
wine_check "cvm.exe install cudnn 9.1.0 --cuda 12 (streamed)" "$(tr -d '\r' < "$T/err")"
((RC == 0)) || fail "the streamed install failed ($RC): $(tr -d '\r' < "$T/err")"
installed_ok "a streamed install"
wexpect 0 "$CVM_EXE" verify "$ID"
stop_server

# --- a connection dropped mid-file: resumed with Range while the extraction reads on --------
fresh
start_server "$M" "/cudnn/redist/cudnn/*=die:1200000,times=1"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
wexpect 0 "$CVM_EXE" install cudnn 9.1.0 --cuda 12
grep -q "bytes=1200000-" "$HTTP_LOG" || fail "not resumed with Range: $(cat "$HTTP_LOG")"
installed_ok "a resumed download"
stop_server

# --- dropped, and the server cannot resume: the open .part is deleted and made anew ---------
fresh
start_server "$M" "/cudnn/redist/cudnn/*=die:1200000,times=1" "/cudnn/redist/cudnn/*=norange"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
wexpect 0 "$CVM_EXE" install cudnn 9.1.0 --cuda 12
[[ $(grep -c "GET /cudnn/redist/$REL" "$HTTP_LOG") -ge 2 ]] || fail "not fetched again: $(cat "$HTTP_LOG")"
installed_ok "a download begun again"
stop_server

# --- a checksum mismatch after a whole streamed extraction: the stage and the .part go -------
fresh
mkdir -p "$T/bad/cudnn/redist"
cp -r "$D/cudnn" "$T/bad/cudnn/redist/"
write_manifest "$T/bad/cudnn/redist"
sed -i 's/"sha256": "[0-9a-f]*"/"sha256": "'"$(printf '0%.0s' {1..64})"'"/' "$T/bad/cudnn/redist/redistrib_9.1.0.json"
start_server "$T/bad"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
wexpect 1 "$CVM_EXE" install cudnn 9.1.0 --cuda 12
assert_contains "$ERR" "checksum mismatch"
assert_contains "$ERR" "$NAME"
store_is ""
no_part "a checksum mismatch"
[[ ! -e $CACHE/$NAME ]] || fail "a mismatching archive was kept in the cache"
# Damaged bytes (same size): the extraction stops early, the download's verdict is reported.
write_manifest "$T/bad/cudnn/redist"
flip_byte "$T/bad/cudnn/redist/$REL" 200000
wexpect 1 "$CVM_EXE" install cudnn 9.1.0 --cuda 12
assert_contains "$ERR" "checksum mismatch"
store_is ""
no_part "damaged bytes"
[[ ! -e $CACHE/$NAME ]] || fail "a damaged archive was kept in the cache"
stop_server

# --- Ctrl-C in the middle of a streamed install: the .part and the stage go at once ----------
# Wine turns SIGINT into the console's Ctrl-C event for a program that has a terminal (script).
fresh
start_server "$M" "/cudnn/redist/cudnn/*=hold:1500000:$T/never"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
cmd=$(printf 'echo $$ > %q; exec %q %q install cudnn 9.1.0 --cuda 12' "$T/pid" "$WINE" "$CVM_EXE")
script -qfec "$cmd" /dev/null > "$T/out" 2>&1 < /dev/null &
pid=$!
extracting() { staged && [[ -f $CACHE/$NAME.part && -s $T/pid ]]; }
wait_running "$pid" 300 extracting
extracting || fail "the install to interrupt never began extracting: $(cat "$T/out")"
kill -INT "$(cat "$T/pid")"
finish "$pid" 120 "cvm.exe install after Ctrl-C (SIGINT to Wine)"
wine_check "cvm.exe install cudnn 9.1.0 --cuda 12 (interrupted)" "$(tr -d '\r' < "$T/out")"
store_is ""
no_part "an interrupted install"
[[ ! -e $CACHE/$NAME ]] || fail "an interrupted download was kept in the cache"
stop_server
echo ok
