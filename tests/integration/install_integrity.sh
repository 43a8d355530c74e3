#!/usr/bin/env bash
# Nothing corrupt is ever reported installed: failed writes (an LD_PRELOAD library fails the Nth
# write under the staging folder), a full tmpfs, an interrupted install; `cvm verify` finds a
# flipped byte, a truncated file, a removed file, a broken view link, and compares an imported
# wheel with its RECORD; archive modes are masked.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
command -v cc > /dev/null || skip "no C compiler for the fault-injection library"
A="$TEST_TMP/archives"
mkdir -p "$A/big" "$A/many" "$A/modes" "$CVM_ROOT/.staging"
FAULT="$TEST_TMP/write_fault.so"
cc -shared -fPIC -O1 -o "$FAULT" "$CVM_SOURCE_DIR/tests/fault/write_fault.c" -ldl
# A sanitizer build wants its runtime first; the preloaded library comes before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
STAGING=$(realpath "$CVM_ROOT/.staging")

tgz=cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
$MK cudnn-redist "$A/$tgz" --version 9.1.0
whl=nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl
$MK cudnn-wheel "$A/$whl" --version 9.1.0.70
$MK cudnn-legacy "$A/cudnn-11.2-linux-x64-v8.1.0.77.tgz" --version 8.1.0
# Something installed before, which every failure below must leave as it is.
expect_rc 0 "$CVM" install "$A/cudnn-11.2-linux-x64-v8.1.0.77.tgz"
before=$("$CVM" list cudnn 2>&1)

faulty_install() { # ERRNO NTH FILE [ALL]
    local rc=0
    env CVM_FAULT_DIR="$STAGING" CVM_FAULT_ERRNO="$1" CVM_FAULT_NTH="$2" ${4:+CVM_FAULT_ALL=1} \
        LD_PRELOAD="$FAULT" "$CVM" install "$3" > "$TEST_TMP/out" 2> "$TEST_TMP/err" || rc=$?
    ERR=$(cat "$TEST_TMP/err")
    assert_eq "$rc" "1" "exit code of an install whose write $2 fails with $1 ($ERR)"
    assert_store cudnn "8.1.0.77-cuda11.2"
    assert_eq "$("$CVM" list cudnn 2>&1)" "$before" "cvm list after a failed install"
    assert_eq "$(ls -A "$STAGING")" "" "staging after a failed install"
}
# tar.xz: one write fails (libarchive calls that a warning and used to extend the file with zeros).
faulty_install ENOSPC 2 "$A/$tgz"
assert_contains "$ERR" "No space left on device"
assert_contains "$ERR" "MB free in"
faulty_install EIO 1 "$A/$tgz"
assert_contains "$ERR" "Input/output error"
# zip (a wheel), written by several threads.
faulty_install EIO 3 "$A/$whl"
assert_contains "$ERR" "Input/output error"
faulty_install ENOSPC 1 "$A/$whl" all
assert_contains "$ERR" "No space left on device"
# tgz through libarchive's own filters (another release: the installed one is known from its
# name and digest without being extracted).
$MK cudnn-legacy "$A/cudnn-11.2-linux-x64-v8.1.1.33.tgz" --version 8.1.1
faulty_install ENOSPC 4 "$A/cudnn-11.2-linux-x64-v8.1.1.33.tgz" all
assert_contains "$ERR" "No space left on device"

# A real small disk, where mounting is allowed.
SMALL="$TEST_TMP/small"
mkdir -p "$SMALL"
if mount -t tmpfs -o size=2m tmpfs "$SMALL" 2> /dev/null; then
    trap 'umount "$SMALL" 2>/dev/null || true; cleanup_test_tmp' EXIT
    $MK cudnn-redist "$A/big/$tgz" --version 9.1.0 --big 3
    $MK cudnn-wheel "$A/big/$whl" --version 9.1.0.70
    python3 - "$A/big/$whl" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "a") as z:
    z.writestr("nvidia/cudnn/lib/big.bin", os.urandom(3 << 20))
PY
    rc=0
    CVM_ROOT="$SMALL/root" "$CVM" install "$A/big/$tgz" 2> "$TEST_TMP/err" || rc=$?
    assert_eq "$rc" "1" "exit code on a full tmpfs (tar.xz)"
    assert_contains "$(cat "$TEST_TMP/err")" "No space left on device"
    assert_eq "$(ls -A "$SMALL/root/.staging" "$SMALL/root/cudnn" 2> /dev/null | grep -v ':$' | grep -c . || true)" "0" "tmpfs store after the failure"
    # The zip's central directory tells its size: refused before a byte is written.
    rc=0
    CVM_ROOT="$SMALL/root" "$CVM" install "$A/big/$whl" 2> "$TEST_TMP/err" || rc=$?
    assert_eq "$rc" "1" "exit code on a full tmpfs (zip)"
    assert_contains "$(cat "$TEST_TMP/err")" "no space left on device"
    assert_contains "$(cat "$TEST_TMP/err")" "MB are free"
    # Once there is room, the same archive installs and verifies.
    expect_rc 0 env CVM_ROOT="$SMALL/root" "$CVM" install "$A/$tgz"
    expect_rc 0 env CVM_ROOT="$SMALL/root" "$CVM" verify
    umount "$SMALL"
    trap cleanup_test_tmp EXIT
else
    echo "note: cannot mount a tmpfs here; the full-disk case runs with injected faults only" >&2
fi

# Ctrl-C in the middle of an install: the staging folder goes at once, not at the next run.
$MK cudnn-redist "$A/many/$tgz" --version 9.1.0 --files 400
for sig in INT TERM; do
    CVM_FAULT_DIR="$STAGING" CVM_FAULT_NTH=0 CVM_FAULT_HOLD="$TEST_TMP/go-$sig" LD_PRELOAD="$FAULT" \
        "$CVM_BIN/cvm-install" install "$A/many/$tgz" 2> "$TEST_TMP/err" &
    pid=$!
    writing() { [[ -n $(find "$STAGING" -type f -path '*/x/*' 2> /dev/null | head -1) ]]; }
    wait_running "$pid" 300 writing
    [[ -n $(find "$STAGING" -type f -path '*/x/*' | head -1) ]] || fail "the install never started writing"
    kill -"$sig" "$pid"
    touch "$TEST_TMP/go-$sig" # the writes wait for it: the install cannot end before the signal
    finish "$pid" 120 "cvm-install after SIG$sig"
    assert_eq "$RC" "$((128 + $(kill -l "$sig")))" "exit status after SIG$sig"
    assert_eq "$(ls -A "$STAGING")" "" "staging right after SIG$sig"
    assert_store cudnn "8.1.0.77-cuda11.2"
done

# verify: intact, then each kind of damage, then the repair.
expect_rc 0 "$CVM" install "$A/$tgz"
expect_rc 0 "$CVM" verify
assert_contains "$OUT" "cudnn 9.1.0.70-cuda12: intact"
R="$CVM_ROOT/cudnn/9.1.0.70-cuda12/root"
python3 - "$R/lib/libcudnn_ops.so.9.1.0" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
d[len(d) // 2] ^= 0x01
open(p, "wb").write(d)
PY
expect_rc 1 "$CVM" verify 9.1.0.70-cuda12
assert_contains "$OUT" "lib/libcudnn_ops.so.9.1.0: content differs"
assert_contains "$OUT" "repair: cvm install --reinstall 9.1.0.70-cuda12"
truncate -s 5 "$R/include/cudnn.h"
rm "$R/lib/libcudnn_cnn.so.9.1.0"
expect_rc 1 "$CVM" verify --json
python3 - "$OUT" <<'PY'
import json, sys
doc = json.loads(sys.argv[1])
assert doc["intact"] is False, doc
e = {x["id"]: x for x in doc["entries"]}["9.1.0.70-cuda12"]
assert e["state"] == "damaged" and e["repair"] == "cvm install --reinstall 9.1.0.70-cuda12", e
got = {p["path"]: p["problem"] for p in e["problems"]}
assert got["include/cudnn.h"].startswith("5 bytes"), got
assert got["lib/libcudnn_cnn.so.9.1.0"] == "missing", got
assert "content differs" in got["lib/libcudnn_ops.so.9.1.0"], got
assert {x["id"]: x for x in doc["entries"]}["8.1.0.77-cuda11.2"]["state"] == "intact", doc
PY
# doctor sees it too (sizes only).
rc=0
"$CVM" doctor > "$TEST_TMP/doctor" 2>&1 || rc=$?
assert_eq "$rc" "1" "doctor exit code with a damaged install"
assert_contains "$(cat "$TEST_TMP/doctor")" "cudnn 9.1.0.70-cuda12 is damaged"
assert_contains "$(cat "$TEST_TMP/doctor")" "cvm install --reinstall 9.1.0.70-cuda12"
expect_rc 0 "$CVM" install --reinstall 9.1.0.70-cuda12
expect_rc 0 "$CVM" verify 9.1.0.70-cuda12
assert_contains "$OUT" "intact, "
expect_rc 2 "$CVM" verify 9.9
expect_rc 1 "$CVM" verify 9.9.9.9-cuda12

# A merged view whose link leads nowhere.
make_toolkit "$TEST_TMP/tk" 12.4.1
expect_rc 0 "$CVM" import "$TEST_TMP/tk"
expect_rc 0 "$CVM" exec 12.4+9.1 -- true
view="$CVM_ROOT/views/12.4.1+9.1.0.70-cuda12"
[[ -d $view ]] || fail "no merged view was made"
link=$(find "$view" -type l -name 'libcudnn_adv.so.9*' | head -1)
[[ -n $link ]] || fail "no cuDNN link in the view"
rm "$(readlink -f "$link")"
expect_rc 1 "$CVM" verify 12.4.1
assert_contains "$OUT" "view 12.4.1+9.1.0.70-cuda12: DAMAGED"
assert_contains "$OUT" "leads nowhere"
expect_rc 0 "$CVM" install --reinstall 9.1.0.70-cuda12
expect_rc 0 "$CVM" verify

# An imported wheel: compared with its RECORD (as pip writes it), not with a record of cvm's.
SITE="$TEST_TMP/venv/lib/python3.11/site-packages"
mkdir -p "$SITE"
python3 - "$A/$whl" "$SITE" <<'PY'
import base64, hashlib, os, sys, zipfile
whl, site = sys.argv[1], sys.argv[2]
rows = []
with zipfile.ZipFile(whl) as z:
    z.extractall(site)
    for name in z.namelist():
        if name.endswith("/"):
            continue
        data = z.read(name)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        rows.append("%s,sha256=%s,%d" % (name, digest, len(data)))
dist = [n for n in os.listdir(site) if n.endswith(".dist-info")][0]
rows.append(dist + "/RECORD,,")
open(os.path.join(site, dist, "RECORD"), "w").write("\n".join(rows) + "\n")
PY
expect_rc 0 "$CVM" uninstall 9.1.0.70-cuda12
expect_rc 0 "$CVM" import "$SITE/nvidia/cudnn"
expect_rc 0 "$CVM" verify 9.1.0.70-cuda12
assert_contains "$OUT" "can only compare them with their owner's record"
assert_contains "$OUT" "RECORD"
python3 - "$SITE/nvidia/cudnn/lib/libcudnn_graph.so.9" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
d[7] ^= 0x10
open(p, "wb").write(d)
PY
expect_rc 1 "$CVM" verify 9.1.0.70-cuda12
assert_contains "$OUT" "libcudnn_graph.so.9: content differs from nvidia_cudnn_cu12-9.1.0.70.dist-info's record"
assert_contains "$OUT" "repair: pip install --force-reinstall nvidia_cudnn_cu12==9.1.0.70"
expect_rc 2 "$CVM" install --reinstall 9.1.0.70-cuda12

# An import whose files a dpkg package lists: compared with the package's md5sums.
make_cudnn "$TEST_TMP/pkg/cudnn" 8.9.7
echo "library bytes" > "$TEST_TMP/pkg/cudnn/lib/libcudnn.so.8"
mkdir -p "$TEST_TMP/dpkg"
(cd / && md5sum "${TEST_TMP#/}/pkg/cudnn/include/cudnn_version.h" "${TEST_TMP#/}/pkg/cudnn/lib/libcudnn.so.8") \
    > "$TEST_TMP/dpkg/libcudnn8-test:amd64.md5sums"
export CVM_DPKG_INFO="$TEST_TMP/dpkg"
expect_rc 0 "$CVM" import "$TEST_TMP/pkg/cudnn" --cuda 12
id=$(cd "$CVM_ROOT/cudnn" && ls -d 8.9.7*)
expect_rc 0 "$CVM" verify "$id"
assert_contains "$OUT" "2 files match $TEST_TMP/dpkg/libcudnn8-test:amd64.md5sums (1 not listed there)"
echo "other bytes!!" > "$TEST_TMP/pkg/cudnn/lib/libcudnn.so.8"
expect_rc 1 "$CVM" verify "$id"
assert_contains "$OUT" "libcudnn.so.8: content differs from libcudnn8-test:amd64's record (md5)"
assert_contains "$OUT" "repair: apt-get install --reinstall libcudnn8-test:amd64"
unset CVM_DPKG_INFO

# Modes: an archive's 0777 file and 0777 folder land without group/world write (umask 022 or
# stricter), and with umask 077 only the owner has any access.
mkdir -p "$A/modes"
$MK cudnn-redist "$A/modes/plain.tar.xz" --version 9.2.0
python3 - "$A/modes/plain.tar.xz" "$A/modes/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz" <<'PY'
import io, sys, tarfile
src, dst = sys.argv[1], sys.argv[2]
with tarfile.open(src, "r:xz") as t, tarfile.open(dst, "w:xz") as o:
    for m in t.getmembers():
        data = t.extractfile(m).read() if m.isfile() else None
        if m.isfile() or m.isdir():
            m.mode = 0o777
        o.addfile(m, io.BytesIO(data) if data is not None else None)
PY
rc=0
( umask 002; "$CVM" install "$A/modes/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz" ) 2> "$TEST_TMP/err" || rc=$?
assert_eq "$rc" "0" "install of an archive with 0777 modes ($(cat "$TEST_TMP/err"))"
R2="$CVM_ROOT/cudnn/9.2.0.82-cuda12/root"
assert_eq "$(find "$R2" ! -type l -perm /022 | head -3)" "" "group- or world-writable files"
assert_eq "$(stat -c %a "$R2/include/cudnn.h")" "755" "mode of a 0777 file"
expect_rc 0 "$CVM" uninstall 9.2.0.82-cuda12
( umask 077; "$CVM" install "$A/modes/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz" ) 2> /dev/null
assert_eq "$(stat -c %a "$R2/include/cudnn.h")" "700" "mode of a 0777 file under umask 077"
assert_eq "$(stat -c %a "$R2/lib")" "700" "mode of a 0777 folder under umask 077"
expect_rc 0 "$CVM" verify 9.2.0.82-cuda12
echo PASS
