#!/usr/bin/env bash
# NCCL imported from the places it lives: an extracted archive of NVIDIA's, the folder it was
# extracted into, a wheel's site-packages, NVIDIA's apt packages libnccl2/libnccl-dev under /usr (an
# assembled root of NCCL's files only), a conda environment, and all of them through
# `cvm import --detect` on a staged machine (CVM_DETECT_ROOT). The version and CUDA are the
# library's own, never a file name's; --cuda that contradicts the library is refused.
source "$(dirname "$0")/lib.sh"
need_tools cc
unset CONDA_PREFIX VIRTUAL_ENV CUDA_PATH_V11_8 CUDA_PATH_V12_4 || true
export HOME="$TEST_TMP/home"
MK="python3 $CVM_SOURCE_DIR/tests/integration/make_archives.py"
mkdir -p "$HOME"

# An extracted archive: its own root (no links), from the folder itself or the one above.
dl="$TEST_TMP/dl"
mkdir -p "$dl"
$MK nccl "$TEST_TMP/a.txz" --version 2.21.5 --cuda 12.4
tar -xJf "$TEST_TMP/a.txz" -C "$dl"
a="$dl/nccl_2.21.5-1+cuda12.4_x86_64"
CVM_ROOT="$TEST_TMP/s1" expect_rc 0 "$CVM" import "$a"
assert_contains "$ERR" "imported nccl 2.21.5-cuda12.4 from $a"
assert_contains "$ERR" "next: cvm install 12 (no CUDA 12 toolkit is installed; then cvm use 12+nccl2.21.5)"
entry=$(cat "$TEST_TMP/s1/nccl/2.21.5-cuda12.4/entry")
assert_contains "$entry" "path=$a"
assert_contains "$entry" 'NCCL version 2.21.5+cuda12.4'
[[ ! -e $TEST_TMP/s1/nccl/2.21.5-cuda12.4/root ]] || fail "an archive's own folder got an assembled root"
CVM_ROOT="$TEST_TMP/s2" expect_rc 0 "$CVM" import --json "$dl"
assert_eq "$(jq -r '.imported[0] | "\(.kind) \(.id) \(.source)"' <<< "$OUT")" "nccl 2.21.5-cuda12.4 $a"

# A folder named for another release than its library: the library's release, with a warning.
mv "$a" "$dl/nccl_2.20.3-1+cuda12.4_x86_64"
CVM_ROOT="$TEST_TMP/s3" expect_rc 0 "$CVM" import "$dl/nccl_2.20.3-1+cuda12.4_x86_64"
assert_contains "$ERR" "imported nccl 2.21.5-cuda12.4"
assert_contains "$ERR" "warning: the folder's name says NCCL 2.20.3"
# --cuda of another major than the library's is refused, nothing registered.
CVM_ROOT="$TEST_TMP/s4" expect_rc 2 "$CVM" import --cuda 13 "$dl/nccl_2.20.3-1+cuda12.4_x86_64"
assert_contains "$ERR" "--cuda 13 contradicts the NCCL in"
[[ ! -e $TEST_TMP/s4/nccl ]] || fail "a refused import registered something"

# Issue 33, finding 15. A wheel whose library is not the release its record names: imported as
# the library says, with a warning naming both and the reinstall.
site2="$TEST_TMP/py2/site-packages"
mkdir -p "$site2"
$MK nccl-wheel "$TEST_TMP/w2.whl" --version 2.28.9 --cuda 12.4 --banner-version 2.21.5 --header-version 2.21.5 --project nvidia-nccl-cu13
(cd "$site2" && python3 -m zipfile -e "$TEST_TMP/w2.whl" .)
CVM_ROOT="$TEST_TMP/s5" expect_rc 0 "$CVM" import "$site2/nvidia/nccl"
assert_contains "$ERR" "imported nccl 2.21.5-cuda12.4"
assert_contains "$ERR" "warning: the wheel's record says NCCL 2.28.9 for CUDA 13 but $site2/nvidia/nccl/lib/libnccl.so.2 says \"NCCL version 2.21.5+cuda12.4\""
assert_contains "$ERR" "pip install --force-reinstall nvidia-nccl-cu13"
# Banners no NCCL release has: refused, nothing registered.
for bad in "0.0.0 12.4" "9999.9999.9999 9999.9999"; do
    set -- $bad
    $MK nccl "$TEST_TMP/bad.txz" --version 2.21.5 --banner-version "$1" --cuda "$2" --folder bad
    rm -rf "$TEST_TMP/badx" && mkdir -p "$TEST_TMP/badx" && tar -xJf "$TEST_TMP/bad.txz" -C "$TEST_TMP/badx"
    CVM_ROOT="$TEST_TMP/s6" expect_rc 2 "$CVM" import --cuda 12 "$TEST_TMP/badx/bad"
    assert_contains "$ERR" "says \"NCCL version $1+cuda$2\", which is no NCCL release; reinstall NCCL"
    [[ ! -e $TEST_TMP/s6/nccl ]] || fail "an NCCL banner of $1 was registered"
done
# Another user's NCCL: registered, and said at once (as list and use will).
if [[ $(id -u) == 0 ]]; then
    cp -r "$TEST_TMP/badx" "$TEST_TMP/theirs"
    rm -rf "$TEST_TMP/theirs/bad"
    tar -xJf "$TEST_TMP/a.txz" -C "$TEST_TMP/theirs"
    chown -R nobody "$TEST_TMP/theirs"
    CVM_ROOT="$TEST_TMP/s7" expect_rc 0 "$CVM" import "$TEST_TMP/theirs/nccl_2.21.5-1+cuda12.4_x86_64"
    assert_contains "$ERR" "imported nccl 2.21.5-cuda12.4"
    assert_contains "$ERR" "warning: $TEST_TMP/theirs/nccl_2.21.5-1+cuda12.4_x86_64"
    assert_contains "$ERR" "owned by nobody"
    assert_contains "$ERR" "cvm runs and loads nothing of nccl 2.21.5-cuda12.4 until then"
fi

# A staged machine: NVIDIA's apt packages, a conda environment, a python's wheel.
Mch="$TEST_TMP/machine"
export CVM_DETECT_ROOT="$Mch"
usr="$Mch/usr"
mkdir -p "$usr/lib/x86_64-linux-gnu" "$usr/include" "$Mch/var/lib/dpkg"
$MK nccl-lib "$usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3" --version 2.28.3 --cuda 13.0
ln -s libnccl.so.2.28.3 "$usr/lib/x86_64-linux-gnu/libnccl.so.2"
ln -s libnccl.so.2 "$usr/lib/x86_64-linux-gnu/libnccl.so"
echo zlib > "$usr/lib/x86_64-linux-gnu/libz.so.1"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 3\n' > "$usr/include/nccl.h"
echo 'not NCCL' > "$usr/include/stdio.h"
printf 'Package: libnccl2\nStatus: install ok installed\nVersion: 2.28.3-1+cuda13.0\n\nPackage: libnccl-dev\nStatus: install ok installed\nVersion: 2.28.3-1+cuda13.0\n\n' \
    > "$Mch/var/lib/dpkg/status"
env="$TEST_TMP/conda/envs/dl"
mkdir -p "$env/lib" "$env/include" "$env/conda-meta" "$HOME/.conda"
$MK nccl-lib "$env/lib/libnccl.so.2.21.5" --version 2.21.5 --cuda 12.4
ln -s libnccl.so.2.21.5 "$env/lib/libnccl.so.2"
echo python > "$env/lib/libpython3.12.so.1.0"
echo '{"name": "nccl", "depends": ["cuda-version >=12,<13.0a0"]}' > "$env/conda-meta/nccl-2.21.5.1-h6103f9b_0.json"
printf '%s\n' "$env" > "$HOME/.conda/environments.txt"
site="$TEST_TMP/py/lib/python3.12/site-packages"
mkdir -p "$site"
$MK nccl-wheel "$TEST_TMP/w.whl" --version 2.28.9 --cuda 13.0 --project nvidia-nccl-cu13
(cd "$site" && python3 -m zipfile -e "$TEST_TMP/w.whl" .)
chmod -R u+rwX "$site"
printf '#!/bin/sh\necho %s\necho %s\n' "$site" "$site" > "$TEST_TMP/python3"
chmod +x "$TEST_TMP/python3"
export CVM_PYTHON="$TEST_TMP/python3"

expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "imported nccl 2.28.3-cuda13.0 from $usr (NVIDIA's NCCL packages)"
assert_contains "$ERR" "imported nccl 2.21.5-cuda12.4 from $env (conda environment in ~/.conda/environments.txt)"
assert_contains "$ERR" "imported nccl 2.28.9-cuda13.0 from $site/nvidia/nccl (pip wheels of $TEST_TMP/python3)"
# The apt packages' assembled root: NCCL's files only, never the shared folder.
r="$CVM_ROOT/nccl/2.28.3-cuda13.0/root"
[[ -L $r/lib/libnccl.so.2 && -L $r/include/nccl.h ]] || fail "NCCL's files missing in $r: $(ls -R "$r")"
[[ ! -e $r/lib/libz.so.1 && ! -e $r/include/stdio.h ]] || fail "files of other packages in $r"
assert_contains "$(cat "$CVM_ROOT/nccl/2.28.3-cuda13.0/entry")" 'NCCL version 2.28.3+cuda13.0'
# The conda environment's too (its lib holds python's libraries).
[[ ! -e $CVM_ROOT/nccl/2.21.5-cuda12.4/root/lib/libpython3.12.so.1.0 ]] || fail "the conda root holds other libraries"
expect_rc 0 "$CVM" list nccl
assert_contains "$OUT" "2.28.3-cuda13.0"
assert_contains "$OUT" "$usr  (imported)"
# With a toolkit: NCCL_HOME is that root, LD_LIBRARY_PATH has no system folder.
make_toolkit "$TEST_TMP/tk13" 13.0.2
expect_rc 0 "$CVM" import "$TEST_TMP/tk13"
expect_rc 0 "$CVM" exec --version 13.0+nccl2.28.3 -- sh -c 'echo "$NCCL_HOME|$LD_LIBRARY_PATH"; test -e "$CUDA_HOME/lib64/libnccl.so.2" && test -e "$CUDA_HOME/include/nccl.h" && echo view-ok'
assert_contains "$OUT" "$r|"
assert_contains "$OUT" "view-ok"
assert_not_contains "$OUT" "x86_64-linux-gnu"

# A second run registers nothing new; a package upgrade is seen and re-read.
expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "nccl 2.28.3-cuda13.0 from $usr is already registered"
assert_not_contains "$ERR" "imported nccl"
touch -d '+1 hour' "$usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3"
expect_rc 0 "$CVM" list nccl
assert_contains "$OUT" "changed: run cvm import --detect"
expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "re-read nccl 2.28.3-cuda13.0 from $usr"
# Forgetting an import leaves its files.
expect_rc 0 "$CVM" uninstall 2.28.3
assert_contains "$ERR" "forgot nccl 2.28.3-cuda13.0"
[[ -f $usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3 ]] || fail "uninstall removed the system's NCCL"

# The real NCCL of this machine's CUDA 13.0 (the nvidia-nccl-cu13 wheel's), where there is one.
real=/usr/local/cuda-13.0
if [[ -f $real/lib/libnccl.so.2 ]]; then
    CVM_ROOT="$TEST_TMP/real" CVM_DETECT_ROOT= expect_rc 0 "$CVM" import "$real"
    assert_contains "$ERR" "imported nccl 2."
    assert_contains "$ERR" "-cuda13."
    id=$(ls "$TEST_TMP/real/nccl")
    [[ -L $TEST_TMP/real/nccl/$id/root/lib/libnccl.so.2 ]] || fail "the toolkit's NCCL got no root of its own"
fi
echo "import_nccl: ok"
