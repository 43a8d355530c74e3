#!/usr/bin/env bash
# Several archives streamed at once: when one of them cannot be extracted (its own download
# verified), the other downloads are stopped at once instead of running to their end, the
# refusal is what the user reads, and nothing is left behind. The server holds the other
# archive's body (HELD in its log) until a file the test never makes: cvm can only end by
# cancelling it, and the server logs "SENT PATH BYTES" when cvm hangs up.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
T=$TEST_TMP
CACHE=$CVM_ROOT/cache/downloads
R=$T/mirror/cuda/redist
ENTRIES=()
# First in the install's order, small: an entry that leaves the folder.
top=cuda_cudart-linux-x86_64-12.4.127-archive
mkdir -p "$R/cuda_cudart/linux-x86_64"
$MK hostile "$R/cuda_cudart/linux-x86_64/$top.tar.xz" dotdot
ENTRIES+=(--entry "cuda_cudart=12.4.127=cuda_cudart/linux-x86_64/$top.tar.xz")
# Second, held after 64 kB for good.
redist_component "$R" libcublas 12.4.5.8 --lib libcublas.so.12 --big 2
HELD=/cuda/redist/libcublas/linux-x86_64/libcublas-linux-x86_64-12.4.5.8-archive.tar.xz
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${ENTRIES[@]}"
start_server "$T/mirror" "/cuda/redist/cuda_cudart/*=hold:0:$T/go" "/cuda/redist/libcublas/*=hold:65536:$T/never"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"

# The refused archive arrives only once the held download is under way. A cvm that waited for
# that download would wait for good (no stall, rate or deadline limit here): timeout ends it
# then (exit 124).
CVM_STALL_TIMEOUT=3600 CVM_DOWNLOAD_MIN_RATE=0 CVM_DOWNLOAD_DEADLINE=0 timeout 300 "$CVM" install cuda 12.4.1 \
    > "$T/out" 2> "$T/err" &
pid=$!
held() { grep -q "^HELD $HELD" "$HTTP_LOG"; }
wait_running "$pid" 300 held
touch "$T/go"
finish "$pid" 330 "the install beside a held download"
rc=$RC
ERR=$(cat "$T/err")
assert_eq "$rc" 2 "exit code of the refused install (stderr: $ERR)"
assert_contains "$ERR" "refused"
assert_contains "$ERR" "$top.tar.xz"
grep -q "GET $HELD" "$HTTP_LOG" || fail "the held archive was never asked for: $(cat "$HTTP_LOG")"
# The server notices the hang-up within a twentieth of a second (a minute allowed).
wait_until 60 grep -q "SENT $HELD" "$HTTP_LOG" || fail "the held download was not cut off: $(cat "$HTTP_LOG")"
assert_store cuda ""
if compgen -G "$CACHE/*.part" > /dev/null; then fail "a stopped download left its .part"; fi
[[ ! -e $CACHE/libcublas-linux-x86_64-12.4.5.8-archive.tar.xz ]] ||
    fail "the stopped download was kept in the cache"
echo PASS
