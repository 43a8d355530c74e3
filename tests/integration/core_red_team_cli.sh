#!/usr/bin/env bash
# Issue 33 ("Export, scripts and compilers never act for another user"): its command-line
# findings, each driving the real cvm, each section headed by its finding's number.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
READER=
stop_reader() {
    if [[ -n $READER ]]; then kill "$READER" 2>/dev/null || true; fi
    cleanup_test_tmp
}
trap stop_reader EXIT
make_toolkit "$T/cuda-12.4" 12.4.1
"$CVM" import "$T/cuda-12.4" 2>/dev/null || fail "import"
mkdir -p "$T/p"
cd "$T/p"

# --- Finding 4: `cvm script -o` writes to a device, a FIFO or a /proc link, never replaces it.
# A character device (/dev/null's numbers, made here: the machine's own is left alone), and a
# link to it.
mknod "$T/null" c 1 3 || skip "cannot make a device node here"
expect_rc 0 "$CVM" script 12.4 --shell bash -o "$T/null"
[[ -c $T/null ]] || fail "cvm script -o replaced a device with $(stat -c %F "$T/null")"
ln -s "$T/null" to-null
expect_rc 0 "$CVM" script 12.4 --shell bash -o to-null
[[ -L to-null && -c $T/null ]] || fail "cvm script -o replaced a link to a device"
expect_rc 0 "$CVM" __man "$T/null"
[[ -c $T/null ]] || fail "cvm __man replaced a device"

# A FIFO: what a reader gets is the script, and the FIFO stays.
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/from-fifo" &
READER=$!
expect_rc 0 timeout 60 "$CVM" script 12.4 --shell bash -o "$T/fifo"
reader_done() { ! kill -0 "$READER" 2>/dev/null; }
wait_until 30 reader_done || fail "the FIFO's reader got no end of file: cvm did not write to it"
READER=
[[ -p $T/fifo ]] || fail "cvm script -o replaced a FIFO with $(stat -c %F "$T/fifo")"
assert_contains "$(cat "$T/from-fifo")" "CUDA_PATH"
# With nobody reading it: one line at once, no wait, the FIFO left as it is.
expect_rc 1 timeout 60 "$CVM" script 12.4 --shell bash -o "$T/fifo"
assert_contains "$ERR" "nothing reads that FIFO"
[[ -p $T/fifo ]] || fail "cvm script -o replaced an unread FIFO"

# A socket is refused (usage), and stays.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock"
expect_rc 2 "$CVM" script 12.4 --shell bash -o "$T/sock"
assert_contains "$ERR" "cannot write $T/sock: it is a socket"
[[ -S $T/sock ]] || fail "cvm script -o replaced a socket"

# A /proc/self/fd link: written through, to what the descriptor is.
expect_rc 0 "$CVM" script 12.4 --shell bash -o /dev/fd/3 3> "$T/fd3.sh"
assert_contains "$(cat "$T/fd3.sh")" "CUDA_PATH"

# `-o -` and `-o /dev/stdout`: the script on standard output (last: the old code replaced
# /dev/stdout itself, which is put back before failing).
expect_rc 0 "$CVM" script 12.4 --shell bash -o -
assert_contains "$OUT" "CUDA_PATH"
expect_rc 0 "$CVM" script 12.4 --shell bash -o /dev/stdout
if [[ ! -L /dev/stdout ]]; then
    rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout
    fail "cvm script -o /dev/stdout replaced /dev/stdout (put back)"
fi
assert_contains "$OUT" "CUDA_PATH"
expect_rc 0 "$CVM" __man -
assert_contains "$OUT" ".TH"

echo "PASS: issue 33's command-line findings"
