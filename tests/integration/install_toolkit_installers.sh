#!/usr/bin/env bash
# Toolkits before NVIDIA's manifests, fetched by version: `cvm install 11.2` downloads NVIDIA's
# local installer from <mirror>/cuda/11.2.2/local_installers/ (10.2: <mirror>/cuda/10.2/Prod/...),
# checks it against the MD5 of NVIDIA's md5sum.txt beside it and against the registry's SHA-256
# (else trusts the first download's), and installs it as `cvm install FILE` does. The seed's
# `cvm install 11.2+8.1.0.77` gets the toolkit and the legacy cuDNN in one command. An installer
# whose MD5 differs, a mirror without md5sum.txt, and a later download that differs from the
# first are refused with one line, nothing left in the store. Installers built by
# make_installers.py in NVIDIA's layout, served on loopback at the real paths.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
MI="python3 $CVM_SOURCE_DIR/tests/integration/make_installers.py"
M="$TEST_TMP/mirror"
I112="$M/cuda/11.2.2/local_installers"
I102="$M/cuda/10.2/Prod/local_installers"
mkdir -p "$I112" "$I102" "$M/cuda/11.2.2/docs/sidebar" "$M/cuda/10.2/Prod/docs/sidebar" "$M/redist/cudnn/v8.1.0"
RUN112="$I112/cuda_11.2.2_460.32.03_linux.run"
RUN102="$I102/cuda_10.2.89_440.33.01_linux.run"
$MI runfile "$RUN112" --version 11.2.2
$MI runfile "$RUN102" --version 10.2.89 --layout 10
$MK cudnn-legacy "$M/redist/cudnn/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz" --version 8.1.0
# md5sum.txt as NVIDIA writes it: "<md5>  <file>" for every installer of the release.
write_md5s() { # FOLDER RUNFILE
    { printf '%s  %s\n' "0123456789abcdef0123456789abcdef" "cuda_x_win10.exe"
      (cd "$(dirname "$2")" && md5sum "$(basename "$2")"); } > "$1/md5sum.txt"
}
write_md5s "$M/cuda/11.2.2/docs/sidebar" "$RUN112"
write_md5s "$M/cuda/10.2/Prod/docs/sidebar" "$RUN102"
# The shipped registry gives 10.2.89's runfile a SHA-256 from nixpkgs (NVIDIA's real file); the
# test's runfile is not that file, so a copy of the registry carries the test runfile's sum.
REG="$TEST_TMP/registry"
cp -r "$CVM_SOURCE_DIR/registry" "$REG"
grep -q 'installer_linux = "cuda_11.2.2_460.32.03_linux.run"' "$REG/cuda.toml" || fail "11.2.2 has no installer in the registry"
real102=$(grep -A12 'version = "10.2.89"' "$REG/cuda.toml" | sed -n 's/^installer_linux_sha256 = "\(.*\)"/\1/p')
[[ ${#real102} == 64 ]] || fail "10.2.89 has no runfile sum in the registry"
sed -i "s/$real102/$(sha256sum "$RUN102" | cut -d' ' -f1)/" "$REG/cuda.toml"
export CVM_REGISTRY_DIR="$REG"
start_server "$M"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=50
FIRST="$CVM_ROOT/registry/first-use.toml"

# --- The seed's spec in one command: CUDA 11.2.2 from its installer, cuDNN 8.1.0.77 from the
# legacy folder; both trusted on first use (no public sum), both recorded.
expect_rc 0 "$CVM" install 11.2+8.1.0.77
assert_contains "$ERR" "CUDA 11.2 is 11.2.2"
assert_contains "$ERR" "MD5 checked against NVIDIA's md5sum.txt"
assert_contains "$ERR" "cuda_11.2.2_460.32.03_linux.run: no public source gives its SHA-256"
grep -q "GET /cuda/11.2.2/local_installers/cuda_11.2.2_460.32.03_linux.run" "$HTTP_LOG" || fail "installer not fetched: $(cat "$HTTP_LOG")"
grep -q "GET /cuda/11.2.2/docs/sidebar/md5sum.txt" "$HTTP_LOG" || fail "md5sum.txt not read"
assert_store cuda "11.2.2"
assert_store cudnn "8.1.0.77-cuda11.2"
root="$CVM_ROOT/cuda/11.2.2/root"
for f in bin/nvcc include/cuda_runtime.h lib/libcudart.so.11.0 version.json; do
    [[ -f $root/$f ]] || fail "the toolkit lacks $f"
done
assert_contains "$(cat "$FIRST")" 'name = "cuda_11.2.2_460.32.03_linux.run"'
assert_contains "$(cat "$FIRST")" "sha256 = \"$(sha256sum "$RUN112" | cut -d' ' -f1)\""
assert_contains "$(cat "$CVM_ROOT/cuda/11.2.2/entry")" "first_use=cuda_11.2.2_460.32.03_linux.run"
expect_rc 0 "$CVM" verify 11.2.2
# It works as a selection: the shim runs the installed nvcc, the environment names both.
mkdir -p "$TEST_TMP/proj" && cd "$TEST_TMP/proj"
expect_rc 0 "$CVM" use 11.2+8.1.0.77
expect_rc 0 "$CVM" which nvcc
assert_eq "$OUT" "$root/bin/nvcc"
expect_rc 0 "$CVM" env --shell bash
assert_contains "$OUT" "CUDNN_PATH="
cd "$TEST_TMP"

# --- A partial version gets what the full one gets; installed again: nothing fetched.
: > "$HTTP_LOG"
expect_rc 0 "$CVM" install 11.2
assert_contains "$ERR" "already installed"
! grep -q "local_installers" "$HTTP_LOG" || fail "an installed toolkit was downloaded again"

# --- 10.2 (before 11.0): the <X.Y>/Prod folder, held to the registry's SHA-256.
expect_rc 0 "$CVM" install 10.2
grep -q "GET /cuda/10.2/Prod/local_installers/cuda_10.2.89_440.33.01_linux.run" "$HTTP_LOG" || fail "10.2 not fetched from Prod/"
assert_contains "$ERR" "sha256 against the SHA-256 in cvm's registry"
assert_store cuda "10.2.89 11.2.2"
! grep -q "cuda_10.2.89" "$FIRST" || fail "a registry-checked installer was recorded as trusted on first use"

# --- Bad: the MD5 differs from NVIDIA's list. Refused, deleted, nothing installed.
expect_rc 0 "$CVM" uninstall 11.2.2 -y
rm -f "$CVM_ROOT/cache/downloads/"*.run
cp "$RUN112" "$TEST_TMP/good.run"
printf '0123456789abcdef0123456789abcdef  cuda_11.2.2_460.32.03_linux.run\n' > "$M/cuda/11.2.2/docs/sidebar/md5sum.txt"
expect_rc 1 "$CVM" install 11.2
assert_contains "$ERR" "does not have the MD5 NVIDIA publishes"
assert_store cuda "10.2.89"
[[ ! -e $CVM_ROOT/cache/downloads/cuda_11.2.2_460.32.03_linux.run ]] || fail "the bad download was kept"
# --- Bad: no md5sum.txt on the mirror.
rm "$M/cuda/11.2.2/docs/sidebar/md5sum.txt"
expect_rc 1 "$CVM" install 11.2
assert_contains "$ERR" "cannot read NVIDIA's checksums of CUDA 11.2.2"
assert_store cuda "10.2.89"
# --- Bad: a later download differs from the one trusted on first use (MD5 list updated to match).
$MI runfile "$RUN112" --version 11.2.2 --compress gz
write_md5s "$M/cuda/11.2.2/docs/sidebar" "$RUN112"
expect_rc 1 "$CVM" install 11.2
assert_contains "$ERR" "differs from the SHA-256 trusted on first use"
assert_store cuda "10.2.89"
# The original installer again: accepted.
cp "$TEST_TMP/good.run" "$RUN112"
write_md5s "$M/cuda/11.2.2/docs/sidebar" "$RUN112"
expect_rc 0 "$CVM" install 11.2
assert_store cuda "10.2.89 11.2.2"
echo "install_toolkit_installers: ok"
