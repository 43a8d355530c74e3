#!/usr/bin/env bash
# cvm install FILE for every archive family: recognised from the contents, cross-checked with
# the name, symlinks and permissions kept, wrong platform / mislabelled / incomplete refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
A="$TEST_TMP/archives"
mkdir -p "$A"

# Legacy Linux tgz with its cuda/ top folder.
$MK cudnn-legacy "$A/cudnn-11.2-linux-x64-v8.1.0.77.tgz" --version 8.1.0
expect_rc 0 "$CVM" install "$A/cudnn-11.2-linux-x64-v8.1.0.77.tgz"
assert_contains "$ERR" "installed cuDNN 8.1.0.77-cuda11.2"
root="$CVM_ROOT/cudnn/8.1.0.77-cuda11.2/root"
[[ -f $root/include/cudnn_version.h ]] || fail "headers not installed"
assert_eq "$(readlink "$root/lib64/libcudnn.so.8")" "libcudnn.so.8.1.0" "symlink kept"
[[ -x $root/lib64/libcudnn.so.8.1.0 ]] || fail "exec permission lost"
grep -qx "lib=lib64" "$CVM_ROOT/cudnn/8.1.0.77-cuda11.2/entry" || fail "entry lib folder"
grep -q "^archive=[0-9a-f]\{64\} cudnn-11.2-linux-x64-v8.1.0.77.tgz" "$CVM_ROOT/cudnn/8.1.0.77-cuda11.2/entry" || fail "archive checksum not recorded"

# The same again: one copy, exit 0, known from its name and digest before anything is extracted
# (a file where the store stages its work would stop any extraction).
mv "$CVM_ROOT/.staging" "$TEST_TMP/staging.away" 2> /dev/null || true
touch "$CVM_ROOT/.staging"
expect_rc 0 "$CVM" install "$A/cudnn-11.2-linux-x64-v8.1.0.77.tgz"
assert_contains "$ERR" "cuDNN 8.1.0.77-cuda11.2 is already installed (cudnn-11.2-linux-x64-v8.1.0.77.tgz, the archive it was installed from)"
assert_not_contains "$ERR" "extracting"
# A copy in another folder is the same archive; the same name with other content is not: it is
# extracted (which the file in the staging place stops).
mkdir -p "$A/copy"
cp "$A/cudnn-11.2-linux-x64-v8.1.0.77.tgz" "$A/copy/"
expect_rc 0 "$CVM" install "$A/copy/cudnn-11.2-linux-x64-v8.1.0.77.tgz"
assert_contains "$ERR" "is already installed (cudnn-11.2-linux-x64-v8.1.0.77.tgz, the archive it was installed from)"
$MK cudnn-legacy "$A/copy/cudnn-11.2-linux-x64-v8.1.0.77.tgz" --version 8.1.1
expect_rc 1 "$CVM" install "$A/copy/cudnn-11.2-linux-x64-v8.1.0.77.tgz"
assert_not_contains "$ERR" "already installed"
rm -rf "$CVM_ROOT/.staging" "$A/copy"

# cuDNN 9 redist tar.xz, and a wheel.
$MK cudnn-redist "$A/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz" --version 9.1.0
expect_rc 0 "$CVM" install "$A/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"
[[ -L $CVM_ROOT/cudnn/9.1.0.70-cuda12/root/lib/libcudnn_graph.so.9 ]] || fail "redist lib links"
$MK cudnn-wheel "$A/nvidia_cudnn_cu11-9.1.0.70-py3-none-manylinux2014_x86_64.whl" --version 9.1.0.70 --project nvidia-cudnn-cu11
expect_rc 0 "$CVM" install "$A/nvidia_cudnn_cu11-9.1.0.70-py3-none-manylinux2014_x86_64.whl"
[[ -f $CVM_ROOT/cudnn/9.1.0.70-cuda11/root/include/cudnn_version.h ]] || fail "wheel root is nvidia/cudnn"
expect_rc 0 "$CVM" list --json cudnn
for id in 8.1.0.77-cuda11.2 9.1.0.70-cuda12 9.1.0.70-cuda11; do assert_contains "$OUT" "$id"; done

# A Windows build on Linux: refused, naming both platforms.
$MK cudnn-legacy "$A/cudnn-11.2-windows-x64-v8.1.0.77.zip" --version 8.1.0 --windows
expect_rc 2 "$CVM" install "$A/cudnn-11.2-windows-x64-v8.1.0.77.zip"
assert_contains "$ERR" "windows-x86_64"
assert_contains "$ERR" "linux-x86_64"
# ... also when renamed, from the DLLs inside.
cp "$A/cudnn-11.2-windows-x64-v8.1.0.77.zip" "$A/cudnn-11.2-linux-x64-v8.1.0.78.zip"
expect_rc 2 "$CVM" install "$A/cudnn-11.2-linux-x64-v8.1.0.78.zip"
assert_contains "$ERR" "64_8.dll is built for windows-x86_64"

# Name and header disagree.
$MK cudnn-legacy "$A/cudnn-11.2-linux-x64-v8.1.1.33.tgz" --version 8.1.1 --header-version 8.0.5
expect_rc 2 "$CVM" install "$A/cudnn-11.2-linux-x64-v8.1.1.33.tgz"
assert_contains "$ERR" "8.1.1"
assert_contains "$ERR" "8.0.5"

# Incomplete build.
$MK cudnn-redist "$A/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz" --version 9.2.0 --skip libcudnn_heuristic.so.9
expect_rc 2 "$CVM" install "$A/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz"
assert_contains "$ERR" "libcudnn_heuristic.so.9"

# Not an archive / missing file.
echo "hello" > "$A/notes.tar.xz"
expect_rc 2 "$CVM" install "$A/notes.tar.xz"
assert_contains "$ERR" "not an archive"
expect_rc 2 "$CVM" install "$A/missing.tgz"

assert_store cudnn "8.1.0.77-cuda11.2 9.1.0.70-cuda11 9.1.0.70-cuda12"

# A folder is imported, not installed: one line naming `cvm import` (issue 35), whether the path
# has a separator or is a folder here (an extracted archive's); a spec stays a spec.
mkdir -p "$A/extracted" "$A/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" "$A/99"
expect_rc 2 "$CVM" install "$A/extracted"
assert_eq "$ERR" "cvm install: $A/extracted is a folder, not an archive: to add what it holds, run \`cvm import $A/extracted\`"
(cd "$A" && expect_rc 2 "$CVM" install cudnn-linux-x86_64-9.1.0.70_cuda12-archive &&
    assert_eq "$ERR" "cvm install: cudnn-linux-x86_64-9.1.0.70_cuda12-archive is a folder, not an archive: to add what it holds, run \`cvm import cudnn-linux-x86_64-9.1.0.70_cuda12-archive\`" &&
    expect_rc 2 "$CVM" install 99 && assert_contains "$ERR" "CUDA 99 is not in cvm's release list")
expect_rc 2 "$CVM" install --json "$A/extracted/"
assert_contains "$OUT" '"code": "invalid_input"'

# A renamed legacy cuDNN archive: its name no longer says the CUDA it was built for. --cuda says
# it, as `cvm import --cuda` does for the extracted folder: the same id, the build number from the
# registry (issue 35).
export CVM_ROOT="$TEST_TMP/renamed"
cp "$A/cudnn-11.2-linux-x64-v8.1.0.77.tgz" "$A/cudnn.tgz"
expect_rc 2 "$CVM" install "$A/cudnn.tgz"
assert_contains "$ERR" "cannot tell which CUDA this cuDNN 8.1.0 was built for"
assert_contains "$ERR" "--cuda"
# 8.1.0.77 was built for CUDA 10.2 and 11.2: another is refused, naming them; nothing installed.
expect_rc 2 "$CVM" install "$A/cudnn.tgz" --cuda 12
assert_contains "$ERR" "cuDNN 8.1.0.77 was built for CUDA 10.2 and 11.2, not 12"
expect_rc 2 "$CVM" install "$A/cudnn.tgz" --cuda 11.x
assert_contains "$ERR" "--cuda 11.x is not a CUDA version"
assert_store cudnn ""
expect_rc 0 "$CVM" install "$A/cudnn.tgz" --cuda 11.2
assert_contains "$ERR" "installed cuDNN 8.1.0.77-cuda11.2"
grep -q "^archive=[0-9a-f]\{64\} cudnn.tgz" "$CVM_ROOT/cudnn/8.1.0.77-cuda11.2/entry" || fail "renamed archive not recorded"
# Reinstalled from it, with the CUDA it was given.
expect_rc 0 "$CVM" install --reinstall 8.1.0.77-cuda11.2
assert_store cudnn "8.1.0.77-cuda11.2"
expect_rc 0 "$CVM" uninstall 8.1.0.77-cuda11.2
# A major names the release's only build of it.
expect_rc 0 "$CVM" install "$A/cudnn.tgz" --cuda 11
assert_store cudnn "8.1.0.77-cuda11.2"
# The import of the same files, extracted, gives the same id.
mkdir -p "$TEST_TMP/unnamed"
tar -xzf "$A/cudnn.tgz" -C "$TEST_TMP/unnamed"
CVM_ROOT="$TEST_TMP/renamed-import" expect_rc 0 "$CVM" import --cuda 11.2 "$TEST_TMP/unnamed"
assert_contains "$ERR" "imported cudnn 8.1.0.77-cuda11.2"
# --cuda that contradicts the name is refused; one that agrees is taken.
expect_rc 2 "$CVM" install "$A/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz" --cuda 11
assert_contains "$ERR" "--cuda 11 contradicts the file name, which says CUDA 12"
expect_rc 0 "$CVM" install "$A/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz" --cuda 12
assert_store cudnn "8.1.0.77-cuda11.2 9.1.0.70-cuda12"
# Not for a toolkit's installer, nor a URL.
expect_rc 2 "$CVM" install "https://example.invalid/cudnn.tgz" --cuda 11.2
assert_contains "$ERR" "--cuda only applies to"
echo PASS
