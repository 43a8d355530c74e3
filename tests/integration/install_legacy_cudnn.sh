#!/usr/bin/env bash
# Legacy cuDNN (before NVIDIA's manifests) from the public folder <mirror>/redist/cudnn/v<X.Y.Z>/,
# served on loopback at the real paths: `cvm install cudnn 8.1.0.77 --cuda 11.2`, the id form,
# combined specs with a toolkit from its manifest; an archive no public source gives a sum for is
# trusted on first use (recorded in $CVM_ROOT/registry/first-use.toml, the entry and cvm.lock) and
# held to that sum afterwards; a size or SHA-256 that differs from the registry's or the first-use
# record, and a 404, are refused with one line, nothing left in the store. Partial versions get
# the answer of the full one; a cuDNN that fits no toolkit lists the builds that do.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
M="$TEST_TMP/mirror"
L="$M/redist/cudnn"
mkdir -p "$L/v8.1.0" "$L/v8.2.4"
A81="$L/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz"
A82="$L/v8.2.4/cudnn-11.4-linux-x64-v8.2.4.15.tgz"
$MK cudnn-legacy "$A81" --version 8.1.0
$MK cudnn-legacy "$A82" --version 8.2.4
# CUDA 11.4.4 from its manifest, for the combined spec 11.4+8.2.4.
R="$M/cuda/redist"
ENTRIES=()
redist_component "$R" cuda_nvcc 11.4.152 --tool bin/nvcc
redist_component "$R" cuda_cudart 11.4.148 --lib libcudart.so --cuda-h 11.4
$MK manifest "$R/redistrib_11.4.4.json" --product cuda --base "$R" "${ENTRIES[@]}"

# A registry whose cudnn_archives.toml gives the test's 8.2.4.15 archive its sum and size, as
# nixpkgs gives NVIDIA's; 8.1.0.77 has none (as in the shipped registry).
REG="$TEST_TMP/registry"
cp -r "$CVM_SOURCE_DIR/registry" "$REG"
sum82=$(sha256sum "$A82" | cut -d' ' -f1)
size82=$(stat -c %s "$A82")
grep -q 'cudnn-11.2-linux-x64-v8.1.0.77.tgz' "$REG/cudnn_archives.toml" && fail "8.1.0.77 has a sum in the registry"
write_sums() { # SHA256 SIZE
    sed -i '/^\[\[archive\]\]$/,$d' "$REG/cudnn_archives.toml"
    printf '[[archive]]\nname = "cudnn-11.4-linux-x64-v8.2.4.15.tgz"\nsha256 = "%s"\nsize = %s\nsource = "the test"\n' \
        "$1" "$2" >> "$REG/cudnn_archives.toml"
}
write_sums "$sum82" "$size82"
export CVM_REGISTRY_DIR="$REG"
start_server "$M"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=50
FIRST="$CVM_ROOT/registry/first-use.toml"
last_line() { tail -n1 <<< "$ERR"; }

# --- trusted on first use: recorded in first-use.toml and in the entry
expect_rc 0 "$CVM" install cudnn 8.1.0.77 --cuda 11.2
assert_contains "$ERR" "trusted on first use"
grep -q "GET /redist/cudnn/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz" "$HTTP_LOG" || fail "not fetched from the public folder: $(cat "$HTTP_LOG")"
assert_store cudnn "8.1.0.77-cuda11.2"
sum81=$(sha256sum "$A81" | cut -d' ' -f1)
[[ -f $FIRST ]] || fail "no $FIRST"
assert_contains "$(cat "$FIRST")" 'name = "cudnn-11.2-linux-x64-v8.1.0.77.tgz"'
assert_contains "$(cat "$FIRST")" "sha256 = \"$sum81\""
assert_contains "$(cat "$FIRST")" "size = $(stat -c %s "$A81")"
entry=$(cat "$CVM_ROOT/cudnn/8.1.0.77-cuda11.2/entry")
assert_contains "$entry" "archive=$sum81 cudnn-11.2-linux-x64-v8.1.0.77.tgz $CVM_MIRROR/redist/cudnn/v8.1.0/"
assert_contains "$entry" "first_use=cudnn-11.2-linux-x64-v8.1.0.77.tgz"
[[ -f $CVM_ROOT/cudnn/8.1.0.77-cuda11.2/root/lib64/libcudnn.so.8 ]] || fail "libcudnn.so.8 not installed"

# `cvm cache clean --all` keeps the record (it is not a cache).
expect_rc 0 "$CVM" cache clean --all
[[ -f $FIRST ]] || fail "cache clean --all dropped $FIRST"

# The id form, checked against the first-use sum.
expect_rc 0 "$CVM" uninstall 8.1.0.77-cuda11.2
expect_rc 0 "$CVM" install 8.1.0.77-cuda11.2
assert_contains "$ERR" "checked against the SHA-256 trusted on first use"
assert_store cudnn "8.1.0.77-cuda11.2"

# --- another archive under the same name: refused, named, with what to do; nothing kept
expect_rc 0 "$CVM" uninstall 8.1.0.77-cuda11.2
expect_rc 0 "$CVM" cache clean
cp "$A81" "$TEST_TMP/a81.orig"
$MK cudnn-legacy "$A81" --version 8.1.0 --skip libcudnn_ops_infer.so.8
expect_rc 1 "$CVM" install cudnn 8.1.0.77 --cuda 11.2
assert_contains "$(last_line)" "cudnn-11.2-linux-x64-v8.1.0.77.tgz"
assert_contains "$(last_line)" "trusted on first use"
assert_contains "$(last_line)" "remove its record from $FIRST"
assert_store cudnn ""
[[ ! -e $CVM_ROOT/cache/downloads/cudnn-11.2-linux-x64-v8.1.0.77.tgz ]] || fail "the refused archive stayed in the cache"
assert_contains "$(cat "$FIRST")" "sha256 = \"$sum81\"" "the record is kept"
cp "$TEST_TMP/a81.orig" "$A81"

# --- a combined spec: the toolkit from its manifest, the cuDNN from the legacy folder, checked
# against the registry's sum and size; a partial toolkit version picks the newest patch.
expect_rc 0 "$CVM" install 11.4+8.2.4
assert_contains "$ERR" "CUDA 11.4 is 11.4.4, the newest 11.4 release cvm knows"
assert_contains "$ERR" "installed CUDA 11.4.4"
assert_contains "$ERR" "checked against the SHA-256 in cvm's registry (from the test)"
assert_store cuda "11.4.4"
assert_store cudnn "8.2.4.15-cuda11.4"
assert_not_contains "$(cat "$FIRST")" "v8.2.4.15" "a registry sum is not trusted on first use"
assert_not_contains "$(cat "$CVM_ROOT/cudnn/8.2.4.15-cuda11.4/entry")" "first_use="

# --- a size or sum that differs from the registry's: refused, nothing left
expect_rc 0 "$CVM" uninstall 8.2.4.15-cuda11.4
expect_rc 0 "$CVM" cache clean
write_sums "$sum82" "$((size82 + 1))"
expect_rc 1 "$CVM" install cudnn 8.2.4.15 --cuda 11.4
assert_contains "$(last_line)" "cudnn-11.4-linux-x64-v8.2.4.15.tgz"
assert_contains "$(last_line)" "size mismatch"
assert_contains "$(last_line)" "cvm's registry"
assert_contains "$(last_line)" "Check CVM_MIRROR"
assert_store cudnn ""
write_sums "$(printf '0%.0s' {1..64})" "$size82"
expect_rc 1 "$CVM" install 11.4+8.2.4
assert_contains "$(last_line)" "checksum mismatch"
assert_contains "$(last_line)" "differs from the SHA-256 in cvm's registry (from the test)"
assert_store cudnn ""
[[ -z $(ls -A "$CVM_ROOT/cache/downloads" | grep "8.2.4.15.tgz\(.part\)\?$" || true) ]] || fail "a refused download stayed in the cache: $(ls -A "$CVM_ROOT/cache/downloads")"
write_sums "$sum82" "$size82"

# --- a 404: one clear line naming the URL
expect_rc 1 "$CVM" install cudnn 8.0.5.39 --cuda 11.0
assert_contains "$(last_line)" "/redist/cudnn/v8.0.5/cudnn-11.0-linux-x64-v8.0.5.39.tgz"
assert_contains "$(last_line)" "404"
assert_store cudnn ""

# --- partial versions answer as the full one; a cuDNN no toolkit build fits lists those that do
# (This mirror has no CUDA installers: both stop at NVIDIA's md5sum.txt of 11.2.2.)
expect_rc 1 "$CVM" install 11.2+8.1.0.77
partial=$(last_line)
expect_rc 1 "$CVM" install 11.2.2+8.1.0.77
assert_eq "$partial" "$(last_line)" "11.2 and 11.2.2 answer alike"
assert_contains "$partial" "CUDA 11.2.2"
expect_rc 2 "$CVM" install 11.8+8.1.0.77
assert_contains "$(last_line)" "supports CUDA 11.8"
assert_contains "$(last_line)" "builds that do: "
assert_contains "$(last_line)" "8.9.7.29-cuda11"
expect_rc 2 "$CVM" install cudnn 8.1.0.77 --cuda 12
assert_contains "$(last_line)" "its builds are for CUDA"

# --- with the toolkit there (imported), the combined spec fetches only the cuDNN; cvm.lock
# records the public URL, the sum and that it was trusted on first use; --locked reproduces it.
make_toolkit "$TEST_TMP/tk112" 11.2.2
expect_rc 0 "$CVM" import "$TEST_TMP/tk112"
expect_rc 0 "$CVM" install 11.2+8.1.0.77
assert_store cudnn "8.1.0.77-cuda11.2"
mkdir -p "$TEST_TMP/proj" && cd "$TEST_TMP/proj"
expect_rc 0 "$CVM" use 11.2+8.1.0.77
expect_rc 0 "$CVM" lock
assert_contains "$ERR" "trusted on first use"
lock=$(cat cvm.lock)
assert_contains "$lock" "url = \"$CVM_MIRROR/redist/cudnn/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz\""
assert_contains "$lock" "sha256 = \"$sum81\""
assert_contains "$lock" 'trust = "first-use"'
expect_rc 0 "$CVM" uninstall -y 8.1.0.77-cuda11.2
rm -f "$FIRST"
expect_rc 0 "$CVM" install --locked
assert_contains "$ERR" "cvm.lock"
assert_store cudnn "8.1.0.77-cuda11.2"
assert_contains "$(cat "$FIRST")" "sha256 = \"$sum81\"" "the lock's sum recorded as first use"
# The lock's sum decides: another archive is refused.
expect_rc 0 "$CVM" uninstall -y 8.1.0.77-cuda11.2
rm -f "$FIRST"
expect_rc 0 "$CVM" cache clean
$MK cudnn-legacy "$A81" --version 8.1.0 --skip libcudnn_ops_infer.so.8
expect_rc 1 "$CVM" install --locked
assert_store cudnn ""
[[ ! -e $FIRST ]] || fail "a refused archive was recorded as trusted"

# --- --reinstall goes back to the public folder, held to the first-use sum
cp "$TEST_TMP/a81.orig" "$A81"
expect_rc 0 "$CVM" install 8.1.0.77-cuda11.2
expect_rc 0 "$CVM" install --reinstall 8.1.0.77-cuda11.2
assert_contains "$ERR" "checked against the SHA-256 trusted on first use"
assert_contains "$(cat "$CVM_ROOT/cudnn/8.1.0.77-cuda11.2/entry")" "first_use=cudnn-11.2-linux-x64-v8.1.0.77.tgz"
