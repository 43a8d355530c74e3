#!/usr/bin/env bash
# NCCL from NVIDIA's public folder <mirror>/redist/nccl/v<X.Y.Z>/ (no manifest; registry/nccl.toml
# names the archives), served on loopback at the real paths: `cvm install nccl VERSION --cuda N`,
# specs with +ncclVERSION, wheels; an archive no public source gives a sum for is trusted on first
# use and held to it afterwards, one with the registry's sum is checked against it; the version
# and CUDA are the library's own (its banner), never a name's. Then the NCCL in use: list,
# list --available, use, current, env (NCCL_HOME, NCCL_ROOT, the merged view's lib), exec, lock and
# install --locked, export lmod/tcl, verify, --reinstall, uninstall.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
need_tools cc
trap 'stop_server; cleanup_test_tmp' EXIT
M="$TEST_TMP/mirror"
N="$M/redist/nccl"
mkdir -p "$N/v2.21.5" "$N/v2.28.9"
A21="$N/v2.21.5/nccl_2.21.5-1+cuda12.4_x86_64.txz"
A28="$N/v2.28.9/nccl_2.28.9-1+cuda13.0_x86_64.txz"
$MK nccl "$A21" --version 2.21.5 --cuda 12.4
$MK nccl "$A28" --version 2.28.9 --cuda 13.0
sum21=$(sha256sum "$A21" | cut -d' ' -f1)
sum28=$(sha256sum "$A28" | cut -d' ' -f1)

# A registry whose nccl.toml gives the test's 2.28.9 archive its sum, as the shipped one gives
# NVIDIA's; 2.21.5 has none (trusted on first use, as in the shipped registry).
REG="$TEST_TMP/registry"
cp -r "$CVM_SOURCE_DIR/registry" "$REG"
grep -q 'nccl_2.21.5-1+cuda12.4_x86_64.txz' "$REG/nccl.toml" || fail "the shipped registry lacks NCCL 2.21.5 for CUDA 12.4"
set_sum28() { sed -i "s/^linux_x86_64_sha256 = \".*\"/linux_x86_64_sha256 = \"$1\"/" "$REG/nccl.toml"; }
set_sum28 "$sum28"
export CVM_REGISTRY_DIR="$REG"
start_server "$M"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=50
FIRST="$CVM_ROOT/registry/first-use.toml"
last_line() { tail -n1 <<< "$ERR"; }

# --- trusted on first use: recorded in first-use.toml and in the entry
expect_rc 0 "$CVM" install nccl 2.21.5 --cuda 12.4
assert_contains "$ERR" "trusted on first use"
assert_contains "$ERR" "installed NCCL 2.21.5-cuda12.4"
grep -q "GET /redist/nccl/v2.21.5/nccl_2.21.5-1+cuda12.4_x86_64.txz" "$HTTP_LOG" || fail "not fetched from the public folder: $(cat "$HTTP_LOG")"
assert_store nccl "2.21.5-cuda12.4"
assert_contains "$(cat "$FIRST")" 'name = "nccl_2.21.5-1+cuda12.4_x86_64.txz"'
assert_contains "$(cat "$FIRST")" "sha256 = \"$sum21\""
entry=$(cat "$CVM_ROOT/nccl/2.21.5-cuda12.4/entry")
assert_contains "$entry" "kind=nccl"
assert_contains "$entry" "cuda=12.4"
assert_contains "$entry" "archive=$sum21 nccl_2.21.5-1+cuda12.4_x86_64.txz $CVM_MIRROR/redist/nccl/v2.21.5/"
assert_contains "$entry" "first_use=nccl_2.21.5-1+cuda12.4_x86_64.txz"
[[ -f $CVM_ROOT/nccl/2.21.5-cuda12.4/root/lib/libnccl.so.2 ]] || fail "libnccl.so.2 not installed"
[[ -f $CVM_ROOT/nccl/2.21.5-cuda12.4/root/include/nccl.h ]] || fail "nccl.h not installed"
# A partial version and a CUDA major answer as the full ones.
expect_rc 0 "$CVM" install nccl 2.21 --cuda 12
assert_contains "$ERR" "NCCL 2.21.5-cuda12.4 is already installed"

# --- the registry's sum: checked; another sum there refuses the download, nothing kept
expect_rc 0 "$CVM" install nccl 2.28.9 --cuda 13
assert_contains "$ERR" "checked against the SHA-256 in cvm's registry"
assert_not_contains "$(cat "$FIRST")" "nccl_2.28.9" "a registry sum is not trusted on first use"
assert_store nccl "2.21.5-cuda12.4 2.28.9-cuda13.0"
expect_rc 0 "$CVM" uninstall 2.28.9-cuda13.0
expect_rc 0 "$CVM" cache clean
set_sum28 "$(printf '1%.0s' {1..64})"
expect_rc 1 "$CVM" install nccl 2.28.9 --cuda 13.0
assert_contains "$(last_line)" "nccl_2.28.9-1+cuda13.0_x86_64.txz"
assert_contains "$(last_line)" "checksum mismatch"
assert_contains "$(last_line)" "cvm's registry"
assert_store nccl "2.21.5-cuda12.4"
set_sum28 "$sum28"

# --- refused before anything is downloaded: no such build, no such release, no such platform
: > "$HTTP_LOG"
expect_rc 2 "$CVM" install nccl 2.21.5 --cuda 11
assert_contains "$(last_line)" "NCCL 2.21.5 has no build for CUDA 11 in cvm's registry (its builds are for CUDA 12.4)"
expect_rc 2 "$CVM" install nccl 2.99
assert_contains "$(last_line)" "NCCL 2.99 is not in cvm's release list"
assert_eq "$(cat "$HTTP_LOG")" "" "nothing is downloaded for a refused release"
# A full version and CUDA the registry lacks: NVIDIA's name for it is tried (here a 404).
expect_rc 1 "$CVM" install nccl 2.23.4 --cuda 12.6
assert_contains "$ERR" "nccl_2.23.4-1+cuda12.6_x86_64.txz: not in cvm's release list; trying NVIDIA's name for it"
assert_contains "$(last_line)" "/redist/nccl/v2.23.4/nccl_2.23.4-1+cuda12.6_x86_64.txz"
assert_contains "$(last_line)" "404"

# --- the library decides: an archive whose library is another release is refused
BAD="$TEST_TMP/nccl_2.20.3-1+cuda12.2_x86_64.txz"
$MK nccl "$BAD" --version 2.20.3 --cuda 12.2 --banner-version 2.20.5
expect_rc 2 "$CVM" install "$BAD"
assert_contains "$(last_line)" "says NCCL 2.20.3 but lib/libnccl.so.2.20.5"
assert_contains "$(last_line)" "is NCCL 2.20.5"
$MK nccl "$BAD" --version 2.20.3 --cuda 12.2 --header-version 2.19.3
expect_rc 2 "$CVM" install "$BAD"
assert_contains "$(last_line)" "include/nccl.h says NCCL 2.19.3"
assert_store nccl "2.21.5-cuda12.4"

# --- a wheel: nvidia-nccl-cu13, its CUDA minor from the library
W="$TEST_TMP/nvidia_nccl_cu13-2.28.9-py3-none-manylinux_2_18_x86_64.whl"
$MK nccl-wheel "$W" --version 2.28.9 --cuda 13.0 --project nvidia-nccl-cu13
expect_rc 0 "$CVM" install --json "$W"
assert_contains "$OUT" '"kind": "nccl"'
assert_contains "$OUT" '"id": "2.28.9-cuda13.0"'
[[ -f $CVM_ROOT/nccl/2.28.9-cuda13.0/root/lib/libnccl.so.2 ]] || fail "the wheel's nvidia/nccl is not the root"
# A cu12 wheel whose library was built for CUDA 13 is refused.
W12="$TEST_TMP/nvidia_nccl_cu12-2.28.9-py3-none-manylinux_2_18_x86_64.whl"
$MK nccl-wheel "$W12" --version 2.28.9 --cuda 13.0 --project nvidia-nccl-cu12
expect_rc 2 "$CVM" install "$W12"
assert_contains "$(last_line)" "says CUDA 12 but lib/libnccl.so.2"
expect_rc 0 "$CVM" uninstall 2.28.9-cuda13.0

# --- what is installed and what can be
expect_rc 0 "$CVM" list
assert_contains "$OUT" "nccl"
assert_contains "$OUT" "2.21.5-cuda12.4"
expect_rc 0 "$CVM" list --json
assert_eq "$(jq -r '.nccl[0].id + " " + .nccl[0].cuda' <<< "$OUT")" "2.21.5-cuda12.4 12.4"
expect_rc 0 "$CVM" list --available nccl
assert_contains "$OUT" "nccl (available)"
assert_contains "$OUT" "* 2.21.5-cuda12.4"
assert_contains "$OUT" "2.28.9-cuda13.0"
expect_rc 0 "$CVM" list --available nccl --json
assert_eq "$(jq -r '[.nccl[] | select(.id == "2.21.5-cuda12.4")][0] | "\(.installed) \(.how) \(.cuda)"' <<< "$OUT")" "true archive 12.4"
expect_rc 0 "$CVM" latest nccl 2.21
assert_eq "$OUT" "2.21.5"

# --- selected beside a toolkit: the spec, current, env, exec
make_toolkit "$TEST_TMP/tk124" 12.4.1
expect_rc 0 "$CVM" import "$TEST_TMP/tk124"
mkdir -p "$TEST_TMP/proj" && cd "$TEST_TMP/proj"
expect_rc 2 "$CVM" use 12.4+nccl2.99
assert_contains "$ERR" "no known NCCL release is 2.99"
expect_rc 2 "$CVM" use 12.4+nccl2.28.9-cuda13.0
assert_contains "$ERR" "no known NCCL 2.28.9 is built for CUDA 12.4"
expect_rc 0 "$CVM" use 12.4+nccl2.21
assert_eq "$(cat .cudaversion)" "12.4+nccl2.21"
expect_rc 0 "$CVM" current
assert_contains "$OUT" "12.4.1+nccl2.21.5-cuda12.4"
assert_contains "$OUT" "  nccl   2.21.5-cuda12.4"
expect_rc 0 "$CVM" current --json
assert_eq "$(jq -r '.nccl.id' <<< "$OUT")" "2.21.5-cuda12.4"
NROOT="$CVM_ROOT/nccl/2.21.5-cuda12.4/root"
VIEW="$CVM_ROOT/views/12.4.1+nccl2.21.5-cuda12.4"
expect_rc 0 "$CVM" env --shell bash
assert_contains "$OUT" "export NCCL_HOME='$NROOT'"
assert_contains "$OUT" "export NCCL_ROOT='$NROOT'"
assert_contains "$OUT" "export CUDA_HOME='$VIEW'"
assert_contains "$OUT" "$VIEW/lib64"
[[ -e $VIEW/include/nccl.h && -e $VIEW/lib64/libnccl.so.2 ]] || fail "the merged view lacks NCCL: $(ls -R "$VIEW" | head -30)"
[[ -e $VIEW/lib64/libcudart.so.12 ]] || fail "the merged view lost the toolkit's libraries"
expect_rc 0 "$CVM" exec -- sh -c 'echo "$NCCL_HOME|$CVM_ACTIVE|$LD_LIBRARY_PATH"'
assert_contains "$OUT" "$NROOT|12.4.1+nccl2.21.5-cuda12.4|$VIEW/lib64"
# What a build reads: NCCL_INCLUDE_DIR and NCCL_LIB_DIR (PyTorch's FindNCCL) name the view's
# folders; a real compiler finds nccl.h and -lnccl through CPATH and LIBRARY_PATH alone, and
# through those two variables alone; the program loads the selected library.
expect_rc 0 "$CVM" env --shell bash
assert_contains "$OUT" "export NCCL_INCLUDE_DIR='$VIEW/include'"
assert_contains "$OUT" "export NCCL_LIB_DIR='$VIEW/lib64'"
cat >"$TEST_TMP/uses_nccl.c" <<'EOF'
#include <nccl.h>
int ncclGetVersion(int*);
int main(void) { int v = 0; ncclGetVersion(&v); return NCCL_MAJOR == 2 && NCCL_MINOR == 21 && v == 22105 ? 0 : 1; }
EOF
expect_rc 0 "$CVM" exec -- sh -c 'cc "$1" -o "$2" -lnccl && "$2" && echo via-lists &&
    env -u CPATH -u LIBRARY_PATH cc "$1" -o "$2" -I"$NCCL_INCLUDE_DIR" -L"$NCCL_LIB_DIR" -lnccl && "$2" && echo via-dirs' \
    sh "$TEST_TMP/uses_nccl.c" "$TEST_TMP/uses_nccl"
assert_contains "$OUT" "via-lists"
assert_contains "$OUT" "via-dirs"
# Without NCCL selected, a NCCL_HOME of the user's own is left alone.
expect_rc 0 env NCCL_HOME=/opt/mine "$CVM" exec 12.4 -- sh -c 'echo "$NCCL_HOME"'
assert_eq "$OUT" "/opt/mine"

# --- cvm.lock records the NCCL, its URL and that its sum was trusted on first use
expect_rc 0 "$CVM" lock
lock=$(cat cvm.lock)
assert_contains "$lock" "[nccl]"
assert_contains "$lock" 'id = "2.21.5-cuda12.4"'
assert_contains "$lock" "url = \"$CVM_MIRROR/redist/nccl/v2.21.5/nccl_2.21.5-1+cuda12.4_x86_64.txz\""
assert_contains "$lock" "sha256 = \"$sum21\""
assert_contains "$lock" 'trust = "first-use"'
assert_contains "$lock" 'active = "12.4.1+nccl2.21.5-cuda12.4"'
expect_rc 0 "$CVM" lock --check
expect_rc 0 "$CVM" uninstall -y nccl2.21
assert_store nccl ""
expect_rc 0 "$CVM" install --locked
assert_store nccl "2.21.5-cuda12.4"
# Another archive under the locked name is refused.
expect_rc 0 "$CVM" uninstall -y 2.21.5-cuda12.4
expect_rc 0 "$CVM" cache clean
cp "$A21" "$TEST_TMP/a21.orig"
$MK nccl "$A21" --version 2.21.5 --cuda 12.4 --folder nccl_2.21.5-1+cuda12.4_x86_64
printf 'x' >> "$A21" # another archive of the same release
expect_rc 1 "$CVM" install --locked
assert_store nccl ""
# ...and so is it without a lock: the first-use record holds it.
expect_rc 1 "$CVM" install nccl 2.21.5 --cuda 12.4
assert_contains "$(last_line)" "trusted on first use"
assert_store nccl ""
cp "$TEST_TMP/a21.orig" "$A21"

# --- the spec names what to install; an NCCL that does not exist is refused before the toolkit
expect_rc 0 "$CVM" install 12.4+nccl2.21
assert_store nccl "2.21.5-cuda12.4"
assert_contains "$ERR" "next: cvm use 12+nccl2.21.5 (selects it"
: > "$HTTP_LOG"
expect_rc 2 "$CVM" install 12.8+nccl2.99
assert_eq "$(cat "$HTTP_LOG")" "" "nothing downloaded for an NCCL that does not exist"

# --- modules, verify, --reinstall
expect_rc 0 "$CVM" export lmod "$TEST_TMP/modules"
lua="$TEST_TMP/modules/nccl/2.21.5-cuda12.4.lua"
[[ -f $lua ]] || fail "no nccl module: $(ls -R "$TEST_TMP/modules")"
assert_contains "$(cat "$lua")" "family(\"nccl\")"
assert_contains "$(cat "$lua")" "\"NCCL_HOME\", \"$NROOT\""
assert_contains "$(cat "$lua")" 'depends_on("cuda/" .. toolkit)'
expect_rc 0 "$CVM" export tcl "$TEST_TMP/tcl"
[[ -f $TEST_TMP/tcl/nccl/2.21.5-cuda12.4 ]] || fail "no tcl nccl module"
(cd "$TEST_TMP/proj" && "$CVM" env --shell bash > /dev/null) || fail "cvm env in the project"
[[ -d $VIEW ]] || fail "no view $VIEW to verify"
expect_rc 0 "$CVM" verify 2.21.5-cuda12.4
assert_contains "$OUT" "view 12.4.1+nccl2.21.5-cuda12.4: intact"
# Issue 35, finding 1: every view verifies as what it is, the NCCL part not read as a cuDNN id.
expect_rc 0 "$CVM" verify
assert_contains "$OUT" "view 12.4.1+nccl2.21.5-cuda12.4: intact"
assert_not_contains "$OUT" "DAMAGED"
expect_rc 0 "$CVM" install --reinstall 2.21.5-cuda12.4
assert_contains "$ERR" "checked against the SHA-256 trusted on first use"
assert_store nccl "2.21.5-cuda12.4"
expect_rc 0 "$CVM" uninstall --json -y 2.21.5
assert_eq "$(jq -r '.removed[0].kind + " " + .removed[0].id' <<< "$OUT")" "nccl 2.21.5-cuda12.4"
echo PASS
