# The tests' loopback HTTP server (tests/integration/http_server.py), started one way by every test
# that needs one (sourced after lib.sh): lib_install.sh and lib_teams.sh source it.
# Starts tests/integration/http_server.py on DIR with RULES...; sets HTTP_PORT, HTTP_LOG.
# HTTP_BIND, when set, is the address it listens on (default 127.0.0.1); HTTP_TIMEOUT, the
# seconds after which it stops by itself (default 300).
start_server() {
    local dir=$1; shift
    local args=(--bind "${HTTP_BIND:-127.0.0.1}")
    for r in "$@"; do args+=(--rule "$r"); done
    HTTP_LOG="$TEST_TMP/http-$RANDOM.log"
    : > "$HTTP_LOG"
    exec {HTTP_FD}< <(python3 "$CVM_SOURCE_DIR/tests/integration/http_server.py" --root "$dir" \
        --timeout "${HTTP_TIMEOUT:-300}" --log "$HTTP_LOG" "${args[@]}" & echo "PID $!"; wait)
    local line
    read -r line <&"$HTTP_FD"; HTTP_PID=${line#PID }
    read -r HTTP_PORT <&"$HTTP_FD"
    [[ -n $HTTP_PORT ]] || fail "the test HTTP server did not start"
}
# stop_server: stops the server started last and waits until it is gone (its port closed).
stop_server() {
    if [[ -n ${HTTP_PID:-} ]]; then
        kill "$HTTP_PID" 2> /dev/null || true
        wait_until 60 server_gone "$HTTP_PID" || true
    fi
    HTTP_PID=
}
server_gone() { ! kill -0 "$1" 2> /dev/null; }
