# Helpers for the install integration tests (sourced after lib.sh).
: "${CVM_SOURCE_DIR:?set CVM_SOURCE_DIR to the repository root}"
MK="python3 $CVM_SOURCE_DIR/tests/integration/make_archives.py"
export CVM_PROGRESS=plain
export CVM_REGISTRY_DIR="$CVM_SOURCE_DIR/registry"
command -v python3 > /dev/null || skip "python3 is not installed"

# The store holds exactly these entries of a kind (ids, sorted), and nothing staged.
assert_store() { # KIND "ID ID..."
    local got
    got=$(cd "$CVM_ROOT/$1" 2>/dev/null && ls | sort | tr '\n' ' ' | sed 's/ $//') || got=""
    assert_eq "$got" "$2" "store $1"
    local staged
    staged=$(ls -A "$CVM_ROOT/.staging" 2>/dev/null | grep '^install-' || true)
    assert_eq "$staged" "" "staging leftovers"
}

# redist_component DIR KEY VERSION ARGS...: a component archive of NVIDIA's redist layout in
# DIR/KEY/linux-x86_64/ (make_archives.py component ARGS), its manifest entry added to ENTRIES.
redist_component() {
    local dir=$1 key=$2 version=$3; shift 3
    local top="$key-linux-x86_64-$version-archive"
    mkdir -p "$dir/$key/linux-x86_64"
    $MK component "$dir/$key/linux-x86_64/$top.tar.xz" --folder "$top" "$@"
    ENTRIES+=(--entry "$key=$version=$key/linux-x86_64/$top.tar.xz")
}

# Starts tests/integration/http_server.py on DIR with RULES...; sets HTTP_PORT, HTTP_LOG.
start_server() {
    local dir=$1; shift
    local args=()
    for r in "$@"; do args+=(--rule "$r"); done
    HTTP_LOG="$TEST_TMP/http-$RANDOM.log"
    : > "$HTTP_LOG"
    exec {HTTP_FD}< <(python3 "$CVM_SOURCE_DIR/tests/integration/http_server.py" --root "$dir" \
        --timeout 300 --log "$HTTP_LOG" "${args[@]}" & echo "PID $!"; wait)
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

# flip_byte FILE OFFSET: damages one byte of FILE in place (same size, another checksum).
flip_byte() {
    python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xFF]))' "$1" "$2"
}
