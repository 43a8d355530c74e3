#!/usr/bin/env bash
# A corrupt archive and a full disk end with a clear error and a clean store.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
A="$TEST_TMP/archives"
mkdir -p "$A"
name=cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
$MK cudnn-redist "$A/$name" --version 9.1.0

# Corrupt: flip bytes in the middle, and cut the file short.
mkdir -p "$A/flip" "$A/cut"
python3 - "$A/$name" "$A/flip/$name" "$A/cut/$name" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
cut = data[: len(data) * 2 // 3]
data[len(data) // 2] ^= 0x55
open(sys.argv[2], "wb").write(data)
open(sys.argv[3], "wb").write(cut)
PY
expect_rc 2 "$CVM" install "$A/flip/$name"
assert_contains "$ERR" "damaged"
expect_rc 2 "$CVM" install "$A/cut/$name"
assert_contains "$ERR" "$name"
assert_store cudnn ""

# A full disk: writes beyond a size limit fail (EFBIG) as they would with ENOSPC. The wheel
# gets a file larger than the limit.
$MK cudnn-wheel "$A/nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl" --version 9.1.0.70
python3 - "$A" <<'PY'
import os, sys, zipfile
src = os.path.join(sys.argv[1], "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl")
with zipfile.ZipFile(src, "a") as z:
    z.writestr("nvidia/cudnn/lib/huge.bin", os.urandom(3 << 20))
PY
rc=0
( trap '' XFSZ; ulimit -f 1024; exec "$CVM" install "$A/nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl" ) 2> "$TEST_TMP/err" || rc=$?
assert_eq "$rc" "1" "exit code when the disk is full"
assert_contains "$(cat "$TEST_TMP/err")" "cannot write"
assert_store cudnn ""
expect_rc 0 "$CVM" install "$A/$name"
assert_store cudnn "9.1.0.70-cuda12"
echo PASS
