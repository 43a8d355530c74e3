#!/usr/bin/env bash
# Windows, under Wine: `cvm install 11.2+8.1.0.77` with CUDA 11.2.2 imported fetches
# cudnn-11.2-windows-x64-v8.1.0.77.zip from the loopback server at the path of NVIDIA's public
# folder (<mirror>/redist/cudnn/v8.1.0/), trusts its SHA-256 on first use (recorded in
# %CVM_ROOT%\registry\first-use.toml and the entry), checks the next download against it, and
# refuses another archive under the same name with nothing left in the store.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
source "$(dirname "$0")/lib_install.sh"
unset CVM_REGISTRY_DIR # a Unix path: the Windows build finds its own registry
trap 'stop_server; cleanup_windows_test' EXIT
CVM_EXE="$WINDOWS_BIN/cvm.exe"
TK="$WIN_C/CUDA/v11.2"
TK_WIN=$(winpath "$TK")
make_win_toolkit "$TK" 11.2.2
M="$TEST_TMP/mirror"
NAME=cudnn-11.2-windows-x64-v8.1.0.77.zip
ZIP="$M/redist/cudnn/v8.1.0/$NAME"
mkdir -p "$(dirname "$ZIP")"
make_cudnn_zip "$ZIP" 8.1.0.77 11.2
start_server "$M"
export CVM_ROOT="$WIN_C_WIN\\store" CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=50
STORE="$WIN_C/store"
FIRST="$STORE/registry/first-use.toml"
wexpect 0 "$CVM_EXE" import "$TK_WIN"

wexpect 0 "$CVM_EXE" install 11.2+8.1.0.77
assert_contains "$ERR" "installed cuDNN 8.1.0.77-cuda11.2"
assert_contains "$ERR" "trusted on first use"
grep -q "GET /redist/cudnn/v8.1.0/$NAME" "$HTTP_LOG" || fail "not fetched from the public folder's path: $(cat "$HTTP_LOG")"
sum=$(sha256sum "$ZIP" | cut -d' ' -f1)
assert_contains "$(tr -d '\r' < "$FIRST")" "sha256 = \"$sum\""
CUDNN="$STORE/cudnn/8.1.0.77-cuda11.2"
assert_contains "$(tr -d '\r' < "$CUDNN/entry")" "first_use=$NAME"
assert_eq "$(find "$CUDNN/root/bin" -type f | wc -l)" 7 "DLLs installed"
cmp -s "$CUDNN/root/bin/cudnn64_8.dll" <(unzip -p "$ZIP" cuda/bin/cudnn64_8.dll) || fail "cudnn64_8.dll differs from the archive's"

# Again from the mirror: held to the first-use sum.
wexpect 0 "$CVM_EXE" uninstall 8.1.0.77-cuda11.2
wexpect 0 "$CVM_EXE" cache clean
wexpect 0 "$CVM_EXE" install cudnn 8.1.0.77 --cuda 11.2
assert_contains "$ERR" "checked against the SHA-256 trusted on first use"

# Another zip under that name: refused in one line naming it, nothing installed.
wexpect 0 "$CVM_EXE" uninstall 8.1.0.77-cuda11.2
wexpect 0 "$CVM_EXE" cache clean
rm "$ZIP"
make_cudnn_zip "$ZIP" 8.1.0.77 11.2
echo extra > "$TEST_TMP/extra.txt"
(cd "$TEST_TMP" && zip -q "$ZIP" extra.txt)
wexpect 1 "$CVM_EXE" install 8.1.0.77-cuda11.2
last=$(tail -n1 <<< "$ERR")
assert_contains "$last" "$NAME"
assert_contains "$last" "trusted on first use"
[[ ! -e $CUDNN ]] || fail "a refused archive left $CUDNN"
[[ -z $(ls -A "$STORE/.staging" 2>/dev/null | grep '^install-' || true) ]] || fail "staging leftovers"
echo ok
