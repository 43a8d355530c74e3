#!/usr/bin/env bash
# Several archives streamed at once: when one of them cannot be extracted (its own download
# verified), the other downloads are stopped at once instead of running to their end, the
# refusal is what the user reads, and nothing is left behind. The server logs "DONE PATH" when
# a throttled body was sent whole: the slow archive's must never be.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
T=$TEST_TMP
CACHE=$CVM_ROOT/cache/downloads
R=$T/mirror/cuda/redist
ENTRIES=()
# First in the install's order, small and fast: an entry that leaves the folder.
top=cuda_cudart-linux-x86_64-12.4.127-archive
mkdir -p "$R/cuda_cudart/linux-x86_64"
$MK hostile "$R/cuda_cudart/linux-x86_64/$top.tar.xz" dotdot
ENTRIES+=(--entry "cuda_cudart=12.4.127=cuda_cudart/linux-x86_64/$top.tar.xz")
# Second, slow: 2 MB of noise at 100 kB/s would take about 20 s to arrive.
redist_component "$R" libcublas 12.4.5.8 --lib libcublas.so.12 --big 2
SLOW=/cuda/redist/libcublas/linux-x86_64/libcublas-linux-x86_64-12.4.5.8-archive.tar.xz
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${ENTRIES[@]}"
start_server "$T/mirror" "/cuda/redist/libcublas/*=slow:100000"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"

expect_rc 2 "$CVM" install cuda 12.4.1
assert_contains "$ERR" "refused"
assert_contains "$ERR" "$top.tar.xz"
grep -q "GET $SLOW" "$HTTP_LOG" || fail "the slow archive was never asked for: $(cat "$HTTP_LOG")"
# The server notices the closed connection at its next write (a tenth of a second at most).
for _ in $(seq 100); do
    grep -q "SENT $SLOW" "$HTTP_LOG" && break
    sleep 0.1
done
if grep -q "DONE $SLOW" "$HTTP_LOG"; then
    fail "the slow download ran to its end after the other archive was refused: $(cat "$HTTP_LOG")"
fi
grep -q "SENT $SLOW" "$HTTP_LOG" || fail "the slow download was not cut off: $(cat "$HTTP_LOG")"
assert_store cuda ""
if compgen -G "$CACHE/*.part" > /dev/null; then fail "a stopped download left its .part"; fi
[[ ! -e $CACHE/libcublas-linux-x86_64-12.4.5.8-archive.tar.xz ]] ||
    fail "the stopped download was kept in the cache"
echo PASS
