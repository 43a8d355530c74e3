#!/usr/bin/env bash
# cvm install of NVIDIA's installers, built here in their real layouts
# (tests/integration/make_installers.py): the Linux runfile (a makeself archive: shell header,
# compressed tar payload) read without running it, 11.x per component and 10.2's merged tree,
# laid out like a redist install; --components; and the bad ones (truncated, offset past the
# end, another platform's, a network installer, 10.0's installers inside the installer), each
# refused with one line and nothing in the store.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'cleanup_test_tmp' EXIT
MI="python3 $CVM_SOURCE_DIR/tests/integration/make_installers.py"
D="$TEST_TMP/downloads"
mkdir -p "$D"
RUN112="$D/cuda_11.2.2_460.32.03_linux.run"
$MI runfile "$RUN112" --version 11.2.2

expect_rc 0 "$CVM" install "$RUN112"
root="$CVM_ROOT/cuda/11.2.2/root"
for f in bin/nvcc bin/ptxas include/crt/host_defines.h include/cuda_runtime.h include/cuda.h \
    include/cublas_v2.h lib/libcudart.so.11.0 lib/libcublas.so.11.4.1.1043 lib/stubs/libcuda.so \
    nvvm/bin/cicc nvvm/lib64/libnvvm.so.4.0.0 licenses/cuda_nvcc/EULA.txt version.json; do
    [[ -f $root/$f ]] || fail "the toolkit lacks $f: $(cd "$root" && find . | sort | tr '\n' ' ')"
done
[[ -L $root/lib/libcudart.so && $(readlink "$root/lib/libcudart.so") == libcudart.so.11.0 ]] ||
    fail "libcudart.so is not the installer's link"
[[ -L $root/lib64 && $(readlink "$root/lib64") == lib ]] || fail "no lib64 link as a redist install has"
for f in bin/cuda-gdb targets include/include Doc ncu cuda-installer; do
    [[ ! -e $root/$f ]] || fail "$f is not part of the default toolkit"
done
[[ -z $(find "$root" -name '*.run' -o -name 'vectorAdd*' -o -name index.html) ]] ||
    fail "driver, samples or documentation were installed"
entry=$(cat "$CVM_ROOT/cuda/11.2.2/entry")
assert_contains "$entry" "component=libcublas"
assert_contains "$entry" "$(sha256sum "$RUN112" | cut -d' ' -f1)"
assert_contains "$(cat "$root/version.json")" '"version": "11.2.152"'
expect_rc 0 "$CVM" verify 11.2.2
CVM_VERSION=11.2.2 expect_rc 0 "$CVM" which nvcc
assert_eq "$OUT" "$root/bin/nvcc"
# Installed again: recognised from its name before the payload is read.
expect_rc 0 "$CVM" install "$RUN112"
assert_contains "$ERR" "already installed"
expect_rc 0 "$CVM" uninstall 11.2.2

# --components as for manifests: unknown ones named with what the installer holds.
expect_rc 2 "$CVM" install "$RUN112" --components cuda_nvcc,cublas
assert_contains "$ERR" '"cublas"'
assert_contains "$ERR" "libcublas"
assert_store cuda ""
expect_rc 0 "$CVM" install "$RUN112" --components cuda_nvcc,cuda_gdb
[[ -x $root/bin/cuda-gdb && -x $root/bin/nvcc ]] || fail "--components ignored"
[[ ! -e $root/include/cublas_v2.h ]] || fail "--components ignored"
expect_rc 0 "$CVM" uninstall 11.2.2

# 10.2: one merged tree (gzip), cuBLAS beside it; the IDEs, docs and samples stay out.
RUN102="$D/cuda_10.2.89_440.33.01_linux.run"
$MI runfile "$RUN102" --version 10.2.89 --driver 440.33.01 --layout 10 --compress gz
expect_rc 2 "$CVM" install "$RUN102" --components cuda_nvcc
assert_contains "$ERR" "one merged tree"
expect_rc 0 "$CVM" install "$RUN102"
root="$CVM_ROOT/cuda/10.2.89/root"
for f in bin/nvcc include/cuda.h include/cublas_v2.h lib/libcudart.so.10.2.89 lib/libcublas.so.10.2.89 \
    nvvm/bin/cicc extras/CUPTI/lib64/libcupti.so.10.2.89 version.txt; do
    [[ -f $root/$f ]] || fail "10.2 lacks $f: $(cd "$root" && find . | sort | tr '\n' ' ')"
done
for f in doc samples libnsight nsight-systems-2019.5.2 bin/nvvp src; do
    [[ ! -e $root/$f ]] || fail "10.2's $f was installed"
done
assert_contains "$(cat "$root/version.txt")" "10.2.89"
expect_rc 0 "$CVM" uninstall 10.2.89
assert_store cuda ""

# Bad input: one line naming the file and the problem, exit 2, nothing in the store.
refused() { # FILE TEXT [ARGS...]
    local file=$1 text=$2; shift 2
    expect_refused "$text" "$CVM" -q install "$file" "$@"
    assert_contains "$ERR" "$(basename "$file")"
    assert_store cuda ""
}
size=$(stat -c %s "$RUN112")
mkdir -p "$D/cut"
head -c $((size - 200)) "$RUN112" > "$D/cut/cuda_11.2.2_460.32.03_linux.run"
refused "$D/cut/cuda_11.2.2_460.32.03_linux.run" "truncated"
mkdir -p "$D/past"
$MI runfile "$D/past/cuda_11.2.2_460.32.03_linux.run" --version 11.2.2 --skip-lines 100000
refused "$D/past/cuda_11.2.2_460.32.03_linux.run" "past the end"
mkdir -p "$D/head"
head -c 600 "$RUN112" > "$D/head/cuda_11.2.2_460.32.03_linux.run"
refused "$D/head/cuda_11.2.2_460.32.03_linux.run" "past the end"
# A damaged payload (bytes inside it overwritten) is refused by the decompressor.
mkdir -p "$D/bad"
cp "$RUN112" "$D/bad/cuda_11.2.2_460.32.03_linux.run"
printf 'XXXXXXXXXXXXXXXX' | dd of="$D/bad/cuda_11.2.2_460.32.03_linux.run" bs=1 seek=$((size - 3000)) conv=notrunc 2>/dev/null
refused "$D/bad/cuda_11.2.2_460.32.03_linux.run" "damaged"
RUN100="$D/cuda_10.0.130_410.48_linux.run"
$MI runfile "$RUN100" --version 10.0.130 --driver 410.48 --layout 10.0
refused "$RUN100" "10.1 and later"
# Another name than its contents.
cp "$RUN112" "$D/cuda_11.3.0_465.19.01_linux.run"
refused "$D/cuda_11.3.0_465.19.01_linux.run" "holds CUDA 11.2.2, not 11.3.0"
# Windows installers on Linux: another platform's; a network one gets the hint.
$MI stub "$D/stub.exe"
$MI windows "$D/cuda_11.2.2_461.33_win10.exe" --version 11.2.2 --stub "$D/stub.exe"
refused "$D/cuda_11.2.2_461.33_win10.exe" "installer for windows-x86_64"
cp "$D/stub.exe" "$D/cuda_11.2.2_461.33_win10_network.exe"
refused "$D/cuda_11.2.2_461.33_win10_network.exe" "network installer"
# A runfile named as a Windows installer.
cp "$RUN112" "$D/cuda_11.2.2_461.33_windows.exe"
refused "$D/cuda_11.2.2_461.33_windows.exe" "not the installer its name says"
[[ -z $(ls -A "$CVM_ROOT/.staging" 2>/dev/null | grep '^install-') ]] || fail "staging left behind"
echo "ok"
