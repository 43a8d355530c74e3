#!/usr/bin/env bash
# `cvm verify` says "intact" only when the installed tree is exactly what was installed: the whole
# tree (files, links, folders, modes, owners, set-user-ID bits) and cvm's own record (its mode, a
# record cut to its header), the merged views, and an entry whose entry file became a FIFO. A
# toolkit assembled from NVIDIA's wheels is compared with the dist-info RECORDs it keeps.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
A="$TEST_TMP/archives"
mkdir -p "$A"
tgz=cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
$MK cudnn-redist "$A/$tgz" --version 9.1.0
ID=9.1.0.70-cuda12
E="$CVM_ROOT/cudnn/$ID"
R="$E/root"
fresh() {
    "$CVM" uninstall -y "$ID" > /dev/null 2>&1 || true
    expect_rc 0 "$CVM" install "$A/$tgz"
    expect_rc 0 "$CVM" verify "$ID"
    assert_contains "$OUT" "intact"
}
# Progress while the files are hashed, on stderr, as installs show theirs (lines when stderr is
# not a terminal, none with CVM_PROGRESS=none); --json's stdout stays one document.
fresh
assert_contains "$ERR" "cvm: verifying cudnn $ID ("
assert_contains "$ERR" "cvm: verifying cudnn $ID done ("
expect_rc 0 "$CVM" verify "$ID" --json
jq -e '.intact' <<< "$OUT" > /dev/null || fail "verify --json is not one document: $OUT"
assert_contains "$ERR" "verifying cudnn $ID done"
expect_rc 0 env CVM_PROGRESS=none "$CVM" verify "$ID"
assert_not_contains "$ERR" "verifying"
damaged() { # WHAT TEXT...: verify fails, naming each TEXT
    local what=$1; shift
    local rc=0
    OUT=$("$CVM" verify "$ID" 2>&1) || rc=$?
    [[ $rc == 1 ]] || fail "verify after $what: exit $rc, $OUT"
    assert_contains "$OUT" "DAMAGED" "verify after $what"
    local t
    for t in "$@"; do assert_contains "$OUT" "$t" "verify after $what"; done
}

fresh
[[ $(head -1 "$E/files") == "cvm-files 2" ]] || fail "the record is not version 2"
assert_contains "$(cat "$E/files")" "d 0755 lib"
# A library added where every program cvm starts looks first.
cp "$R/lib/libcudnn.so.9" "$R/lib/libevil.so.9"
damaged "an added library" "lib/libevil.so.9: added: a file cvm did not install"
rm "$R/lib/libevil.so.9"
ln -s /tmp "$R/include/elsewhere"
damaged "an added link" "include/elsewhere: added: a link cvm did not install"
rm "$R/include/elsewhere"
mkdir "$R/extra"
damaged "an added folder" "extra: added: a folder cvm did not install"
rmdir "$R/extra"
expect_rc 0 "$CVM" verify "$ID"

# The lib folder replaced by a link to a folder everybody may write to.
mkdir -p "$TEST_TMP/open"
chmod 0777 "$TEST_TMP/open"
cp -a "$R/lib/." "$TEST_TMP/open/"
mv "$R/lib" "$TEST_TMP/lib.orig"
ln -s "$TEST_TMP/open" "$R/lib"
damaged "lib replaced by a link" "lib: is a link now, installed as a folder"
rm "$R/lib"
mv "$TEST_TMP/lib.orig" "$R/lib"

# Modes: a setuid library, a world-writable folder, a file made executable.
chmod u+s "$R/lib/libcudnn.so.9.1.0"
damaged "a setuid library" "lib/libcudnn.so.9.1.0: mode 4" "set-user-ID"
chmod u-s "$R/lib/libcudnn.so.9.1.0"
chmod o+w "$R/include"
damaged "a world-writable folder" "include: mode 0757, installed 0755" "writable by every user"
chmod o-w "$R/include"
chmod +x "$R/include/cudnn.h"
damaged "a changed mode" "include/cudnn.h: mode 0755, installed 0644"
chmod -x "$R/include/cudnn.h"
expect_rc 0 "$CVM" verify "$ID"

# cvm's own record: another user may not be able to change it, and it must be whole.
cp "$E/files" "$TEST_TMP/files.orig"
chmod 0666 "$E/files"
damaged "a record everybody may write" "$E/files: writable by every user"
chmod 0644 "$E/files"
printf 'cvm-files 2\n' > "$E/files"
damaged "a record cut to its header" "the record is cut short"
printf 'cvm-files 1\n' > "$E/files"
damaged "an old record cut to its header" "include/cudnn.h: added"
cp "$TEST_TMP/files.orig" "$E/files"
chmod 0644 "$E/files"
expect_rc 0 "$CVM" verify "$ID"

# An entry file replaced by a FIFO: damaged, never "nothing is installed".
mv "$E/entry" "$TEST_TMP/entry.orig"
mkfifo "$E/entry"
rc=0
OUT=$(timeout 20 "$CVM" verify 2>&1) || rc=$?
[[ $rc == 1 ]] || fail "verify with a FIFO entry: exit $rc, $OUT"
assert_contains "$OUT" "cudnn $ID: DAMAGED"
assert_not_contains "$OUT" "nothing is installed"
expect_rc 1 "$CVM" verify --json
assert_contains "$OUT" '"intact": false'
rc=0
OUT=$(timeout 20 "$CVM" verify "$ID" 2>&1) || rc=$?
[[ $rc == 1 ]] || fail "verify ID with a FIFO entry: exit $rc, $OUT"
rm "$E/entry"
mv "$TEST_TMP/entry.orig" "$E/entry"
expect_rc 0 "$CVM" verify

# A merged view: anything added, a link pointing elsewhere, a folder others may write to.
make_toolkit "$TEST_TMP/tk" 12.4.1
expect_rc 0 "$CVM" import "$TEST_TMP/tk"
expect_rc 0 "$CVM" exec 12.4+9.1 -- true
V="$CVM_ROOT/views/12.4.1+$ID"
[[ -d $V/lib64 ]] || fail "no merged view"
expect_rc 0 "$CVM" verify
cp "$R/lib/libcudnn.so.9" "$V/lib64/libextra.so.1"
expect_rc 1 "$CVM" verify
assert_contains "$OUT" "view 12.4.1+$ID: DAMAGED"
assert_contains "$OUT" "lib64/libextra.so.1: added: a file cvm did not put there"
rm "$V/lib64/libextra.so.1"
link=$(cd "$V/lib64" && ls libcudnn.so.9)
target=$(readlink "$V/lib64/$link")
ln -sfn "$TEST_TMP/open/libcudnn.so.9" "$V/lib64/$link"
expect_rc 1 "$CVM" verify
assert_contains "$OUT" "lib64/$link: link to $TEST_TMP/open/libcudnn.so.9, not $target"
ln -sfn "$target" "$V/lib64/$link"
chmod o+w "$V/lib64"
expect_rc 1 "$CVM" verify
assert_contains "$OUT" "lib64: writable by every user"
chmod o-w "$V/lib64"
expect_rc 0 "$CVM" verify
# The view's own mark, a file cvm writes (not a link): compared by its bytes.
cp "$V/.cvm-view" "$TEST_TMP/mark"
echo 9 > "$V/.cvm-view"
expect_rc 1 "$CVM" verify
assert_contains "$OUT" ".cvm-view: is not the file cvm puts there"
cp "$TEST_TMP/mark" "$V/.cvm-view"
expect_rc 0 "$CVM" verify

# A toolkit assembled from NVIDIA's wheels keeps their records in dist-info/: compared with them
# (paths nvidia/<package>/X stand for X), labelled as wheels by import --detect.
W="$TEST_TMP/detect/usr/local/cuda-12.6"
make_toolkit "$W" 12.6.2
mkdir -p "$W/dist-info/nvidia_cuda_nvcc-12.6.85.dist-info"
python3 - "$W" <<'PY'
import base64, hashlib, os, sys
top = sys.argv[1]
rows = []
for rel in ("bin/nvcc", "include/cuda.h"):
    data = open(os.path.join(top, rel), "rb").read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    rows.append("nvidia/cu12/%s,sha256=%s,%d" % (rel, digest, len(data)))
rows.append("nvidia_cuda_nvcc-12.6.85.dist-info/RECORD,,")
open(os.path.join(top, "dist-info/nvidia_cuda_nvcc-12.6.85.dist-info/RECORD"), "w").write("\n".join(rows) + "\n")
PY
expect_rc 0 env CVM_DETECT_ROOT="$TEST_TMP/detect" CVM_PYTHON= "$CVM" import --detect
assert_contains "$ERR" "imported cuda 12.6.2 from $W (NVIDIA's wheels"
assert_not_contains "$ERR" "$W (NVIDIA's installer)"
expect_rc 0 "$CVM" verify 12.6.2
assert_contains "$OUT" "2 files match"
assert_contains "$OUT" "nvidia_cuda_nvcc-12.6.85.dist-info/RECORD"
echo "changed" >> "$W/bin/nvcc"
expect_rc 1 "$CVM" verify 12.6.2
assert_contains "$OUT" "$W/bin/nvcc: "
assert_contains "$OUT" "repair: pip install --force-reinstall nvidia_cuda_nvcc==12.6.85"

# The real CUDA 13.0 of this project's machines, where it is there.
if [[ -d /usr/local/cuda-13.0/dist-info ]]; then
    export CVM_ROOT="$TEST_TMP/real-root"
    expect_rc 0 "$CVM" import /usr/local/cuda-13.0
    rc=0
    OUT=$("$CVM" verify 2>&1) || rc=$?
    assert_not_contains "$OUT" "no wheel RECORD"
    assert_contains "$OUT" "wheel RECORDs in /usr/local/cuda-13.0/dist-info/"
    [[ $rc == 0 ]] || fail "verify of the real /usr/local/cuda-13.0: exit $rc, $OUT"
fi
