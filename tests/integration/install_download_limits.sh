#!/usr/bin/env bash
# Download limits through the real cvm: an endless body stops right after the manifest's size
# (or CVM_DOWNLOAD_MAX_SIZE), a dripping server is stopped by the minimum rate set in
# config.toml, SIGTERM leaves no .part, and an unreachable mirror fails after one retry with
# the offline hint. Every failure leaves no .part in the download cache.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
source "$(dirname "$0")/lib_teams.sh"
trap 'stop_server; [[ -n ${CVM_PID:-} ]] && kill "$CVM_PID" 2>/dev/null; cleanup_test_tmp' EXIT
T=$TEST_TMP
make_mirror "$T/mirror"
DNN_REL=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
DNN=$T/mirror/cudnn/redist/$DNN_REL
DNN_SIZE=$(stat -c %s "$DNN")
DNN_SHA=$(sha256sum "$DNN" | cut -d' ' -f1)
CACHE=$CVM_ROOT/cache/downloads
export CVM_RETRY_DELAY_MS=50

no_part() { # WHAT
    if compgen -G "$CACHE/*.part" >/dev/null; then ls -l "$CACHE" >&2; fail "$1 left a .part"; fi
}
sent() { # PATH: what the server says it sent on the connection cvm hung up
    wait_until 60 grep -q "^SENT $1 " "$HTTP_LOG" || true
    grep "^SENT $1 " "$HTTP_LOG" | tail -1 | cut -d' ' -f3
}

# --- an endless body: stopped as soon as it outgrows the manifest's size, never retried ----
start_server "$T/mirror" "/cudnn/redist/cudnn/*=endless" "/files/*=endless"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
expect_rc 1 "$CVM" install cudnn 9.1.0 --cuda 12
assert_contains "$ERR" "more than the $DNN_SIZE bytes the manifest gives"
assert_contains "$ERR" "$DNN_REL"
no_part "an endless body"
n=$(sent "/cudnn/redist/$DNN_REL")
[[ -n $n ]] && ((n < DNN_SIZE + 64 * 1024 * 1024)) || fail "the server sent $n bytes before cvm stopped"
assert_eq "$(grep -c "^GET /cudnn/redist/$DNN_REL" "$HTTP_LOG")" 1 "requests of an oversized body"

# A URL with only a checksum: nothing says the size, CVM_DOWNLOAD_MAX_SIZE does.
# (The server sends the archive, then zeros without end.)
mkdir -p "$T/mirror/files"
cp "$DNN" "$T/mirror/files/big.tar.xz"
CVM_DOWNLOAD_MAX_SIZE=1M expect_rc 1 "$CVM" install "$CVM_MIRROR/files/big.tar.xz" --sha256 "$DNN_SHA"
assert_contains "$ERR" "more than 1048576 bytes"
assert_contains "$ERR" "CVM_DOWNLOAD_MAX_SIZE"
no_part "an endless body of unknown size"
n=$(sent /files/big.tar.xz)
((n < 65 * 1024 * 1024)) || fail "the server sent $n bytes before cvm stopped"
CVM_DOWNLOAD_MAX_SIZE=lots expect_rc 2 "$CVM" install "$CVM_MIRROR/files/big.tar.xz" --sha256 "$DNN_SHA"
assert_contains "$ERR" 'CVM_DOWNLOAD_MAX_SIZE="lots"'
# A URL without a checksum whose body is endless zeros (an empty tar to the extractor): refused
# as soon as the archive ends holding nothing, not downloaded to the size limit, not kept.
CVM_DOWNLOAD_MAX_SIZE=2G expect_rc 2 "$CVM" install "$CVM_MIRROR/files/zeros.tar"
assert_contains "$ERR" "zeros.tar is not an archive cvm reads"
n=$(sent /files/zeros.tar)
((n < 256 * 1024 * 1024)) || fail "the server sent $n bytes of zeros before cvm stopped"
[[ ! -e $CACHE/zeros.tar && ! -e $CACHE/zeros.tar.part ]] || fail "the zeros were kept in the download cache"
stop_server

# --- a drip of 4 bytes/s: below the minimum rate that config.toml sets ---------------------
mkdir -p "$(dirname "$CVM_CONFIG")"
printf '[download]\nmin_rate = "1k"\nrate_window = 1\nretries = 0\n' >"$CVM_CONFIG"
start_server "$T/mirror" "/cudnn/redist/cudnn/*=slow:4"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
expect_rc 1 "$CVM" install cudnn 9.1.0 --cuda 12
assert_contains "$ERR" "too slow"
assert_contains "$ERR" "below the minimum 1024 bytes/s"
no_part "a dripping server"
[[ ! -e $CVM_ROOT/cudnn/9.1.0.70-cuda12 ]] || fail "a dripped cuDNN was installed"
printf '[download]\nmin_rate = "fast"\n' >"$CVM_CONFIG"
expect_rc 2 "$CVM" install cudnn 9.1.0 --cuda 12
assert_contains "$ERR" "$CVM_CONFIG:2"
rm "$CVM_CONFIG"

# --- SIGTERM in the middle of the download: the .part goes with cvm ------------------------
"$CVM" install cudnn 9.1.0 --cuda 12 2>"$T/term.err" &
CVM_PID=$!
has_part() { compgen -G "$CACHE/*.part" >/dev/null; }
wait_running "$CVM_PID" 300 has_part
compgen -G "$CACHE/*.part" >/dev/null || fail "no .part appeared: $(cat "$T/term.err")"
kill -TERM "$CVM_PID"
finish "$CVM_PID" 120 "cvm install after SIGTERM"
CVM_PID=
assert_eq "$RC" 143 "exit status after SIGTERM"
no_part "SIGTERM"
stop_server

# --- nothing listens: one retry, then the offline hint -----------------------------------
# (port 9, discard: a privileged port nothing here binds, so no other test's server takes it)
closed=9
export CVM_MIRROR="http://127.0.0.1:$closed"
expect_rc 1 "$CVM" install cuda 12.4.1
assert_contains "$ERR" "127.0.0.1:$closed"
assert_contains "$ERR" "CVM_MIRROR"
assert_contains "$ERR" "\`CVM_MIRROR=file://DIR cvm install cuda 12.4.1\`"
assert_contains "$ERR" "after 2 attempts"
assert_eq "$(grep -c retrying <<<"$ERR")" 1 "retries of a refused connection"
no_part "a refused connection"
echo "install_download_limits: ok"
