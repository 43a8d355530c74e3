#!/usr/bin/env bash
# Streaming installs: an archive is extracted while it downloads and kept only once its
# SHA-256 matches. Files appear in the staging folder while the .part still grows; a checksum
# mismatch after a whole streamed extraction leaves nothing; a resumed download (dropped
# connection, a .part left by a killed run, a server that cannot resume) installs the right
# files; a zip streamed through its local headers must agree with its central directory;
# several components download and extract at once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
T=$TEST_TMP
CACHE=$CVM_ROOT/cache/downloads
export CVM_RETRY_DELAY_MS=50
M=$T/mirror
D=$M/cudnn/redist
REL=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
NAME=$(basename "$REL")
ID=9.1.0.70-cuda12
mkdir -p "$D/cudnn/linux-x86_64" "$M/files"
$MK cudnn-redist "$D/$REL" --version 9.1.0 --big 3
$MK manifest "$D/redistrib_9.1.0.json" --product cudnn --base "$D" --entry "cudnn=9.1.0.70=$REL=12"
SIZE=$(stat -c %s "$D/$REL")

no_part() {
    if compgen -G "$CACHE/*.part" > /dev/null; then ls -l "$CACHE" >&2; fail "$1 left a .part"; fi
}
fresh() { # forget the installed entry and the cached archive
    "$CVM" uninstall "$ID" > /dev/null 2>&1 || true
    rm -f "$CACHE/$NAME" "$CACHE/$NAME.part"
}
installed_ok() { # WHAT
    expect_rc 0 "$CVM" verify "$ID"
    assert_store cudnn "$ID"
    no_part "$1"
    cmp -s "$CACHE/$NAME" "$D/$REL" || fail "$1: the cached archive is not the served one"
}

# --- extracted while it arrives: headers are in the staging folder while the .part grows ----
# The server holds the body after 1.5 MB of 3 (past the first MB the xz decoder hands on at
# once) until the test has seen the headers staged: no race between the test's look and the
# download's end, however busy the machine.
start_server "$M" "/cudnn/redist/cudnn/*=hold:1500000:$T/go"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
"$CVM" install cudnn 9.1.0 --cuda 12 > "$T/out" 2> "$T/err" &
pid=$!
staged() { compgen -G "$CVM_ROOT/.staging/install-*/x/*/include/cudnn_version.h" > /dev/null; }
wait_running "$pid" 300 staged
staged || fail "nothing was extracted from the first 1500000 of $SIZE bytes: $(cat "$T/err")"
[[ -f $CACHE/$NAME.part ]] || fail "no .part while the download was held"
touch "$T/go"
finish "$pid" 300 "the streamed install"
((RC == 0)) || fail "the streamed install failed: $(cat "$T/err")"
installed_ok "a streamed install"
[[ -L $CVM_ROOT/cudnn/$ID/root/lib/libcudnn.so ]] || fail "a streamed tar lost its symlinks"
stop_server

# --- a connection dropped mid-file: resumed with Range, the extraction reads on -------------
fresh
start_server "$M" "/cudnn/redist/cudnn/*=die:1200000,times=1"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
expect_rc 0 "$CVM" install cudnn 9.1.0 --cuda 12
grep -q "bytes=1200000-" "$HTTP_LOG" || fail "not resumed with Range: $(cat "$HTTP_LOG")"
installed_ok "a resumed download"

# --- a .part that a killed run left: resumed, and extracted from its first byte -------------
fresh
head -c 1000000 "$D/$REL" > "$CACHE/$NAME.part"
: > "$HTTP_LOG"
expect_rc 0 "$CVM" install cudnn 9.1.0 --cuda 12
grep -q "bytes=1000000-" "$HTTP_LOG" || fail "the left .part was not resumed: $(cat "$HTTP_LOG")"
installed_ok "a download resumed from an earlier run's .part"
stop_server

# --- dropped, and the server cannot resume: the part starts over, so does the extraction ----
fresh
start_server "$M" "/cudnn/redist/cudnn/*=die:1200000,times=1" "/cudnn/redist/cudnn/*=norange"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
expect_rc 0 "$CVM" install cudnn 9.1.0 --cuda 12
installed_ok "a download begun again"
stop_server

# --- a checksum mismatch after a whole streamed extraction: nothing is kept ----------------
fresh
cp -r "$M" "$T/bad"
python3 - "$T/bad/cudnn/redist/redistrib_9.1.0.json" << 'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
a = m["cudnn"]["linux-x86_64"]["cuda12"]
a["sha256"] = "0" * 64
json.dump(m, open(p, "w"))
PY
start_server "$T/bad"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
expect_rc 1 "$CVM" install cudnn 9.1.0 --cuda 12
assert_contains "$ERR" "checksum mismatch"
assert_contains "$ERR" "$NAME"
assert_store cudnn ""
no_part "a checksum mismatch"
[[ ! -e $CACHE/$NAME ]] || fail "a mismatching archive was kept in the cache"
# Damaged bytes (same size): the extraction stops early, the download's verdict is reported.
cp "$D/redistrib_9.1.0.json" "$T/bad/cudnn/redist/"
flip_byte "$T/bad/cudnn/redist/$REL" 200000
expect_rc 1 "$CVM" install cudnn 9.1.0 --cuda 12
assert_contains "$ERR" "checksum mismatch"
assert_store cudnn ""
no_part "damaged bytes"
stop_server

# --- zips: streamed through their local headers, compared with the central directory -------
ZIP=cudnn-linux-x86_64-9.1.0.70_cuda12-archive.zip
$MK cudnn-redist "$M/files/$ZIP" --version 9.1.0 --no-links --big 1
mkdir -p "$M/links" "$M/renamed" "$M/crc"
$MK cudnn-redist "$M/links/$ZIP" --version 9.1.0
# The central directory alone changed: one name, or one CRC-32.
python3 - "$M/files/$ZIP" "$M/renamed/$ZIP" "$M/crc/$ZIP" << 'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
end = data.rfind(b"PK\x05\x06")
size, at = struct.unpack("<II", data[end + 12:end + 20])
def patch(out, change):
    d = bytearray(data)
    p = at
    while p < at + size:
        n, x, c = struct.unpack("<HHH", d[p + 28:p + 34])
        name = bytes(d[p + 46:p + 46 + n])
        if name.endswith(b"include/cudnn.h"):
            change(d, p, n)
            break
        p += 46 + n + x + c
    open(out, "wb").write(d)
def rename(d, p, n):
    d[p + 46 + n - 3] = ord("x")       # cudnn.h -> cudnx.h
def crc(d, p, n):
    d[p + 16] ^= 0xFF
patch(sys.argv[2], rename)
patch(sys.argv[3], crc)
PY
start_server "$M"
U="http://127.0.0.1:$HTTP_PORT"
sum() { sha256sum "$1" | cut -d' ' -f1; }
expect_rc 0 "$CVM" install "$U/files/$ZIP" --sha256 "$(sum "$M/files/$ZIP")"
expect_rc 0 "$CVM" verify "$ID"
R=$CVM_ROOT/cudnn/$ID/root
assert_eq "$(stat -c %a "$R/include/cudnn.h")" 644 "a streamed zip's header mode"
assert_eq "$(stat -c %a "$R/lib/libcudnn.so.9.1.0")" 755 "a streamed zip's library mode"
expect_rc 0 "$CVM" uninstall "$ID"
# Stored (uncompressed) entries, streamed like the others.
python3 - "$M/files/$ZIP" "$M/stored.zip" << 'PY'
import sys, zipfile
src = zipfile.ZipFile(sys.argv[1])
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_STORED) as z:
    for i in src.infolist():
        data = src.read(i.filename)
        i.compress_type = zipfile.ZIP_STORED
        z.writestr(i, data)
PY
mkdir -p "$M/stored" && mv "$M/stored.zip" "$M/stored/$ZIP"
expect_rc 0 "$CVM" install "$U/stored/$ZIP" --sha256 "$(sum "$M/stored/$ZIP")"
expect_rc 0 "$CVM" verify "$ID"
expect_rc 0 "$CVM" uninstall "$ID"
# Symlinks are only in the central directory: the files their local headers held become links.
expect_rc 0 "$CVM" install "$U/links/$ZIP" --sha256 "$(sum "$M/links/$ZIP")"
[[ -L $R/lib/libcudnn.so ]] || fail "a zip's symlink was lost"
expect_rc 0 "$CVM" verify "$ID"
expect_rc 0 "$CVM" uninstall "$ID"
# A zip symlink that leaves the folder: refused like one in a file.
$MK hostile "$M/links/evil.zip" symlink-out
expect_rc 2 "$CVM" install "$U/links/evil.zip" --sha256 "$(sum "$M/links/evil.zip")"
assert_contains "$ERR" "refused"
assert_store cudnn ""
expect_rc 2 "$CVM" install "$U/renamed/$ZIP" --sha256 "$(sum "$M/renamed/$ZIP")"
assert_contains "$ERR" "include/cudnn.h\" is not in the central directory"
assert_contains "$ERR" "local header and its central directory disagree"
assert_store cudnn ""
expect_rc 2 "$CVM" install "$U/crc/$ZIP" --sha256 "$(sum "$M/crc/$ZIP")"
assert_contains "$ERR" "CRC-32"
assert_store cudnn ""
no_part "a refused zip"
stop_server

# --- several components: downloading and extracting at the same time -----------------------
R=$M/cuda/redist
ENTRIES=()
for key in cuda_nvcc cuda_cudart cuda_cccl libcublas; do
    top="$key-linux-x86_64-12.4.127-archive"
    mkdir -p "$R/$key/linux-x86_64"
    extra=()
    [[ $key == cuda_cudart ]] && extra=(--cuda-h 12.4)
    $MK component "$R/$key/linux-x86_64/$top.tar.xz" --folder "$top" --tool bin/t_$key \
        --header h_$key.h --big 2 "${extra[@]}"
    ENTRIES+=(--entry "$key=12.4.127=$key/linux-x86_64/$top.tar.xz")
done
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${ENTRIES[@]}"
# Each component (2 MB) is held after 1.5 MB until the test has seen two downloading and two
# extracting.
start_server "$M" "/cuda/redist/*/linux-x86_64/*=hold:1500000:$T/go-toolkit"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
"$CVM" install cuda 12.4.1 > "$T/out" 2> "$T/err" &
pid=$!
count() { (compgen -G "$1" || true) | wc -l; }
parts() { count "$CACHE/*.part"; }
extracting() { count "$CVM_ROOT/.staging/install-*/x/*/*/include"; }
both() { (($(parts) >= 2 && $(extracting) >= 2)); }
wait_running "$pid" 300 both
(($(parts) >= 2)) || fail "the components were not downloaded at the same time: $(cat "$T/err")"
(($(extracting) >= 2)) || fail "the components were not extracted at the same time: $(cat "$T/err")"
touch "$T/go-toolkit"
finish "$pid" 300 "the toolkit install"
((RC == 0)) || fail "the toolkit install failed: $(cat "$T/err")"
for f in bin/t_cuda_nvcc include/h_libcublas.h include/cuda.h lib/big.bin; do
    [[ -e $CVM_ROOT/cuda/12.4.1/root/$f ]] || fail "the toolkit lacks $f"
done
expect_rc 0 "$CVM" verify 12.4.1
assert_store cuda "12.4.1"
no_part "a toolkit install"
