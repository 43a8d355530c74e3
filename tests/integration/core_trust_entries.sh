#!/usr/bin/env bash
# Trust of what is selected: before a toolkit or cuDNN build is run or loaded, its entry folder,
# the folder of its files, and its bin and lib folders must be its user's, root's or a listed
# owner's and not writable by others (files chowned to nobody, modes opened). Commands and shims
# refuse with one line; list still shows the entry and uninstall still removes it.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root (files are chowned to nobody)"
T=$TEST_TMP
chmod 755 "$T"

TK=$T/tk
make_toolkit "$TK" 12.4.1
CUDNN_DIR=$T/cudnn-linux-x86_64-9.1.0.70_cuda12-archive
make_cudnn "$CUDNN_DIR" 9.1.0
expect_rc 0 "$CVM" import "$TK"
expect_rc 0 "$CVM" import "$CUDNN_DIR"
expect_rc 0 "$CVM" use --global 12.4
NVCC=$CVM_ROOT/shims/nvcc
expect_rc 0 "$NVCC" --version
ENTRY=$CVM_ROOT/cuda/12.4.1

# refused CMD...: exit 2 with one line naming $WANT.
refused() { expect_refused "$WANT" "$@"; }

# --- The entry's folder of another user (the entry file in it stays root's): they could replace it.
chown nobody "$ENTRY"
WANT="refusing the folder of cuda 12.4.1 $ENTRY: it is owned by nobody (uid $(id -u nobody))"
refused "$NVCC" --version
refused "$CVM" which nvcc
refused "$CVM" exec -- nvcc --version
refused "$CVM" env
expect_rc 0 "$CVM" list
assert_contains "$OUT" "12.4.1"
doctor=$("$CVM" doctor 2>&1) && fail "doctor found nothing wrong: $doctor"
assert_contains "$doctor" "refusing the folder of cuda 12.4.1"
chown root "$ENTRY"

# --- The toolkit's own folder, its bin and its lib folders.
for sub in "" /bin /lib64; do
    chown nobody "$TK$sub"
    WANT="refusing a folder of cuda 12.4.1 $TK$sub: it is owned by nobody"
    refused "$NVCC" --version
    chown root "$TK$sub"
done
chmod o+w "$TK/bin"
WANT="refusing a folder of cuda 12.4.1 $TK/bin: the folder is writable by every user"
refused "$NVCC" --version
chmod o-w "$TK/bin"
chgrp nogroup "$TK/lib64"
chmod g+w "$TK/lib64"
WANT="refusing a folder of cuda 12.4.1 $TK/lib64: the folder is writable by its group"
refused "$NVCC" --version
chmod g-w "$TK/lib64"
chgrp root "$TK/lib64"
expect_rc 0 "$NVCC" --version

# --- cvm which and the shim also check the program itself.
chown nobody "$TK/bin/nvcc"
WANT="refusing a file of cuda 12.4.1 $TK/bin/nvcc: it is owned by nobody"
refused "$CVM" which nvcc
refused "$NVCC" --version
chown root "$TK/bin/nvcc"
chmod o+w "$TK/bin/nvcc"
WANT="refusing a file of cuda 12.4.1 $TK/bin/nvcc: the file is writable by every user"
refused "$NVCC" --version
chmod o-w "$TK/bin/nvcc"
expect_rc 0 "$CVM" which nvcc
assert_eq "$OUT" "$TK/bin/nvcc"

# --- cvm verify names every file another user could change.
expect_rc 0 "$CVM" verify 12.4.1
chown nobody "$TK/include/cuda.h"
chmod o+w "$TK/version.json"
expect_rc 1 "$CVM" verify 12.4.1
assert_contains "$OUT" "$TK/include/cuda.h"
assert_contains "$OUT" "owned by nobody"
assert_contains "$OUT" "$TK/version.json"
assert_contains "$OUT" "writable by every user"
chown root "$TK/include/cuda.h"
chmod o-w "$TK/version.json"

# --- The cuDNN build of the selection is checked too.
CUDNN_ENTRY=$CVM_ROOT/cudnn/$(ls "$CVM_ROOT/cudnn")
expect_rc 0 "$CVM" use --global 12.4+9
expect_rc 0 "$NVCC" --version
chown nobody "$CUDNN_DIR/lib"
WANT="refusing a folder of cudnn"
refused "$NVCC" --version
assert_contains "$ERR" "$CUDNN_DIR/lib"
chown root "$CUDNN_DIR/lib"
chmod 777 "$CUDNN_ENTRY"
WANT="refusing the folder of cudnn"
refused "$NVCC" --version
assert_contains "$ERR" "writable by every user"
chmod 755 "$CUDNN_ENTRY"
expect_rc 0 "$NVCC" --version

# --- An owner root lists in the machine's config is trusted for entries as for store folders.
chown -R nobody "$TK"
expect_rc 2 "$NVCC" --version
mkdir -p "$(dirname "$CVM_SYSTEM_CONFIG")"
echo 'trusted_owners = ["nobody"]' > "$CVM_SYSTEM_CONFIG"
expect_rc 0 "$NVCC" --version
rm "$CVM_SYSTEM_CONFIG"

# --- An untrusted entry can still be removed.
chown nobody "$ENTRY"
expect_rc 0 "$CVM" uninstall 12.4.1
[[ ! -e $ENTRY ]] || fail "uninstall left $ENTRY"
echo "core_trust_entries: ok"
