#!/usr/bin/env bash
# Redirects are checked hop by hop with CVM_MIRROR's rule (plain http only to this machine), and
# a user name and password in CVM_MIRROR go to the mirror only: never to a host a redirect leads
# to, never into the entry, cvm.lock or a message.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
SERVERS=()
trap 'for p in "${SERVERS[@]}"; do kill "$p" 2>/dev/null || true; done; cleanup_test_tmp' EXIT
M="$TEST_TMP/mirror"
R="$M/cuda/redist"
mkdir -p "$R"
ENTRIES=()
redist_component "$R" cuda_nvcc 12.4.131 --tool bin/nvcc
redist_component "$R" cuda_cudart 12.4.127 --lib libcudart.so --cuda-h 12.4
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${ENTRIES[@]}"
# serve VAR DIR RULES...: starts a server, its port in VAR and its log in VAR_LOG.
serve() {
    local var=$1; shift
    start_server "$@"
    SERVERS+=("$HTTP_PID")
    printf -v "$var" '%s' "$HTTP_PORT"
    printf -v "${var}_LOG" '%s' "$HTTP_LOG"
    HTTP_PID=
}
export CVM_RETRIES=0 CVM_RETRY_DELAY_MS=50

# A loopback mirror redirecting to plain http on another host (127.0.0.2, which is no loopback
# name cvm knows): refused before anything is asked of that host.
HTTP_BIND=127.0.0.2 serve OTHER "$M"
unset HTTP_BIND
serve A "$M" "/cuda/*=redirect:http://127.0.0.2:$OTHER"
export CVM_MIRROR="http://127.0.0.1:$A"
expect_rc 1 "$CVM" install cuda 12.4.1
assert_contains "$ERR" "redirects to http://127.0.0.2:$OTHER/cuda/redist/redistrib_12.4.1.json, which is refused: plain http://"
assert_eq "$(cat "$OTHER_LOG")" "" "the other host was asked"
assert_store cuda ""
# ... or to a local file: never followed.
serve F "$M" "/cuda/*=redirect:file://$M"
export CVM_MIRROR="http://127.0.0.1:$F"
expect_rc 1 "$CVM" install cuda 12.4.1
assert_contains "$ERR" "a redirect to a local file is never followed"
assert_not_contains "$ERR" 'Protocol "file"'

# A mirror that needs a password and sends the archives to another server on this machine
# (allowed): the password goes to the mirror only.
serve FILES "$M"
serve AUTH "$M" "*=auth:me:hunter2" "/cuda/redist/cuda_*=redirect:http://localhost:$FILES"
export CVM_MIRROR="http://me:hunter2@127.0.0.1:$AUTH"
expect_rc 0 "$CVM" install cuda 12.4.1
assert_store cuda "12.4.1"
grep -q "^AUTH /cuda/redist/redistrib_12.4.1.json " "$AUTH_LOG" || fail "the mirror got no credentials: $(cat "$AUTH_LOG")"
grep -q "^GET /cuda/redist/cuda_nvcc" "$FILES_LOG" || fail "the redirect was not followed: $(cat "$FILES_LOG")"
assert_not_contains "$(cat "$FILES_LOG")" "AUTH" "the credentials went to the host a redirect led to"
assert_not_contains "$(cat "$CVM_ROOT/cuda/12.4.1/entry")" "hunter2" "the entry records the password"
assert_contains "$(cat "$CVM_ROOT/cuda/12.4.1/entry")" "http://127.0.0.1:$AUTH/cuda/redist/"
mkdir -p "$TEST_TMP/p" && cd "$TEST_TMP/p"
"$CVM" use 12.4.1 2>/dev/null || fail "use"
expect_rc 0 "$CVM" lock
assert_not_contains "$(cat cvm.lock)" "hunter2" "cvm.lock records the password"
# A failure names the mirror, never the password (text and --json).
expect_rc 1 "$CVM" install cuda 12.6.2
assert_contains "$ERR" "127.0.0.1:$AUTH"
assert_not_contains "$ERR" "hunter2" "an error shows the password"
expect_rc 1 "$CVM" install cuda 12.6.2 --json
assert_not_contains "$OUT$ERR" "hunter2" "a --json error shows the password"
# A URL given to install keeps its password out of the messages too.
expect_rc 1 "$CVM" install "http://me:hunter2@127.0.0.1:$AUTH/missing/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"
assert_not_contains "$ERR" "hunter2" "an install URL's password was shown"
