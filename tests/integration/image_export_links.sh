#!/usr/bin/env bash
# Issue 33, finding 1: `cvm export --oci` run by root never puts into an image what another user
# planted in an imported toolkit. A folder of the entry another user can write (extras/ at 0777)
# or a file they own stops the export; a link out of an imported folder (to a root-only key, to
# `../..`, to /root) is left out and named, never read; only the links of an import cvm
# assembled are followed out of the store, and what they took is named. `cvm verify` names a
# writable folder of an import as such (not "DAMAGED, 1 of 0 files") with the chmod that fixes
# it, and walks no folder link out of the import.
source "$(dirname "$0")/lib.sh"
need_tools jq umoci
[[ $(id -u) == 0 ]] || skip "needs root (files are chowned to nobody)"
trap 'cleanup_test_tmp' EXIT
unset SOURCE_DATE_EPOCH
T=$TEST_TMP
chmod 755 "$T"

TK="$T/import/cuda-12.4"
make_toolkit "$TK" 12.4.1
mkdir -p "$TK/extras"
expect_rc 0 "$CVM" import "$TK"
echo "PRIVATE KEY of root" > "$T/id_rsa"
chmod 600 "$T/id_rsa"
mkdir -p "$T/elsewhere/project"
echo "another project" > "$T/elsewhere/project/notes.txt"

# layer_of DIR: the listing of the newest layer of the layout DIR's only image, and its text.
layer_of() {
    local manifest layer
    manifest=$(jq -r '.manifests[0].digest' "$1/index.json")
    layer=$(jq -r '.layers[-1].digest' "$1/blobs/sha256/${manifest#sha256:}")
    gzip -dc "$1/blobs/sha256/${layer#sha256:}" | tar -tvf - > "$T/listing"
    gzip -dc "$1/blobs/sha256/${layer#sha256:}" > "$T/layer.tar"
}

# --- A folder of the entry that every user can write: another user's links in it. The export
# stops before writing anything and names the folder.
chmod 0777 "$TK/extras"
ln -s "$T/id_rsa" "$TK/extras/key"
chown -h nobody "$TK/extras/key"
expect_rc 2 "$CVM" export --oci "$T/img1" 12.4
assert_contains "$ERR" "refusing to put into an image $TK/extras: the folder is writable by every user"
assert_contains "$ERR" "chmod o-w $TK/extras"
[[ ! -e $T/img1 ]] || fail "a refused export left $T/img1"

# A link another user owns in a folder now closed: still theirs, still refused.
chmod 0755 "$TK/extras"
expect_rc 2 "$CVM" export --oci "$T/img1" 12.4
assert_contains "$ERR" "$TK/extras/key: it is owned by nobody"
rm "$TK/extras/key"

# A file another user owns inside the entry.
echo "theirs" > "$TK/extras/readme.txt"
chown nobody "$TK/extras/readme.txt"
expect_rc 2 "$CVM" export --oci "$T/img1" 12.4
assert_contains "$ERR" "$TK/extras/readme.txt: it is owned by nobody"
rm "$TK/extras/readme.txt"

# --- Links out of the imported folder (root's own now, as a careless import would have them):
# left out and named; what they lead to never read.
ln -s "$T/id_rsa" "$TK/extras/key"
ln -s ../.. "$TK/include/up"
ln -s /root "$TK/extras/rootdir"
ln -s "$T/elsewhere" "$TK/extras/projects"
ln -s ../include/cuda.h "$TK/extras/cuda.h" # inside the entry: kept as a link
expect_rc 0 "$CVM" export --oci "$T/img1" 12.4 --json
assert_eq "$(jq -r '.skipped | map(select(test("a link out of its folder"))) | length' <<<"$OUT")" 4
assert_eq "$(jq -r '.outside | length' <<<"$OUT")" 0 "an import cvm did not assemble took files from outside"
expect_rc 0 "$CVM" export --oci "$T/img2" 12.4
assert_contains "$ERR" "left out $TK/extras/key (a link out of its folder to $T/id_rsa, not followed)"
assert_contains "$ERR" "left out $TK/include/up (a link out of its folder to ../.., not followed)"
layer_of "$T/img1"
! grep -q "PRIVATE KEY" "$T/layer.tar" || fail "root's key is in the layer"
! grep -q "another project" "$T/layer.tar" || fail "another folder's file is in the layer"
! grep -Eq ' opt/cvm/cuda/12.4.1/(include/up|extras/(key|rootdir|projects))' "$T/listing" ||
    fail "a link out of the entry is in the layer: $(grep -E 'up|key|rootdir|projects' "$T/listing")"
grep -q ' opt/cvm/cuda/12.4.1/extras/cuda.h -> ../include/cuda.h' "$T/listing" ||
    fail "a link inside the entry was not kept: $(grep cuda.h "$T/listing")"
grep -q ' opt/cvm/cuda/12.4.1/bin/nvcc$' "$T/listing" || fail "the toolkit's own files are missing"
# What a container tool unpacks: the toolkit, and nothing of what the links pointed at.
TAG=$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$T/img1/index.json")
umoci unpack --rootless --image "$T/img1:$TAG" "$T/bundle" > /dev/null 2>&1 ||
    fail "umoci cannot unpack the image"
R="$T/bundle/rootfs/opt/cvm/cuda/12.4.1"
[[ -x $R/bin/nvcc && -L $R/extras/cuda.h ]] || fail "umoci's rootfs lacks the toolkit: $(ls -R "$R" | head)"
! grep -rq "PRIVATE KEY" "$T/bundle/rootfs" || fail "root's key is in the unpacked image"
[[ ! -e $R/extras/key && ! -e $R/include/up && ! -e $R/extras/rootdir ]] || fail "a link out of the entry was unpacked"

# --- An import cvm assembled (NVIDIA's cuDNN packages in a /usr): its links are followed, what
# they took is named by folder; a folder they lead into that another user can write is refused.
make_apt_cudnn "$T/machine" 9.14.0.64 12
expect_rc 0 "$CVM" import "$T/machine/usr"
expect_rc 0 "$CVM" export --oci "$T/img3" 12.4+9.14 --json
LIBS=$(realpath "$T/machine/usr/lib/x86_64-linux-gnu")
assert_eq "$(jq -r --arg d "$LIBS" '[.outside[] | select(.source | startswith($d))] | length > 0' <<<"$OUT")" true \
    "the assembled cuDNN's libraries are not named as taken from outside: $(jq -c .outside <<<"$OUT")"
expect_rc 0 "$CVM" export --oci "$T/img4" 12.4+9.14
assert_contains "$ERR" "the layer took from outside the store, through the links of imports cvm assembled:"
assert_contains "$ERR" "files of $LIBS"
layer_of "$T/img3"
grep -Eq '^-.* opt/cvm/cudnn/9.14.0.64-cuda12/lib/libcudnn.so.9$' "$T/listing" ||
    fail "the assembled cuDNN's library is not a file of the layer: $(grep libcudnn.so "$T/listing")"
chmod 0777 "$LIBS"
expect_rc 2 "$CVM" export --oci "$T/img5" 12.4+9.14
assert_contains "$ERR" "refusing to put into an image $LIBS: the folder is writable by every user"
[[ ! -e $T/img5 ]] || fail "a refused export left $T/img5"
chmod 0755 "$LIBS"

# --- cvm verify: a writable folder of an import is named with its fix, not called damaged; the
# folder links out of the import are not walked (a world-writable file out there goes unnamed).
rm "$TK/extras/projects"
mkdir -p "$T/outside"
echo x > "$T/outside/open.txt"
chmod 0666 "$T/outside/open.txt"
ln -s "$T/outside" "$TK/extras/out"
expect_rc 0 "$CVM" verify 12.4.1
chmod 0777 "$TK/include"
expect_rc 1 "$CVM" verify 12.4.1
assert_contains "$OUT" "ANOTHER USER COULD CHANGE 1 of its folders and files"
assert_contains "$OUT" "$TK/include/: writable by every user"
assert_contains "$OUT" "repair: run \`chmod o-w $TK/include\`"
assert_not_contains "$OUT" "DAMAGED"
assert_not_contains "$OUT" "open.txt"
expect_rc 1 "$CVM" verify 12.4.1 --json
assert_eq "$(jq -r '.entries[0].state' <<<"$OUT")" untrusted
assert_eq "$(jq -r '.entries[0].untrusted[0].path' <<<"$OUT")" "$TK/include/"
chmod 0755 "$TK/include"
expect_rc 0 "$CVM" verify 12.4.1
