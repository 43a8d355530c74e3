# Helpers for the install integration tests (sourced after lib.sh).
: "${CVM_SOURCE_DIR:?set CVM_SOURCE_DIR to the repository root}"
MK="python3 $CVM_SOURCE_DIR/tests/integration/make_archives.py"
export CVM_PROGRESS=plain
export CVM_REGISTRY_DIR="$CVM_SOURCE_DIR/registry"
command -v python3 > /dev/null || skip "python3 is not installed"
source "$(dirname "${BASH_SOURCE[0]}")/lib_http.sh"

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


# flip_byte FILE OFFSET: damages one byte of FILE in place (same size, another checksum).
flip_byte() {
    python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xFF]))' "$1" "$2"
}
