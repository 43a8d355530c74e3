#!/usr/bin/env bash
# Windows, under Wine: `cvm install cuda_11.2.2_461.33_win10.exe`, NVIDIA's local installer built
# here (a mingw program followed by a 7-Zip archive written by p7zip, holding the installer's
# <component>/<part>/ folders), with the archive outside libarchive's 0x27000-0x60000 window and
# inside it; the toolkit laid out like a redist install; --components; and the refusals: an .exe
# holding no 7-Zip archive, a truncated one, a network installer, a Linux runfile.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
command -v 7z > /dev/null 2>&1 || skip "7z is not installed (p7zip-full)"
MI="python3 $CVM_SOURCE_DIR/tests/integration/make_installers.py"
CVM_EXE="$WINDOWS_BIN/cvm.exe"
STORE="$WIN_C/store"
export CVM_ROOT="$WIN_C_WIN\\store" CVM_PROGRESS=plain
D="$TEST_TMP/dl"
mkdir -p "$D/in" "$D/out"
$MI stub "$D/stub.exe"
EXE="$D/out/cuda_11.2.2_461.33_win10.exe"
$MI windows "$EXE" --version 11.2.2 --stub "$D/stub.exe" --at 0x70000
$MI windows "$D/in/cuda_11.2.2_461.33_win10.exe" --version 11.2.2 --stub "$D/stub.exe" --at 0x30000

for exe in "$EXE" "$D/in/cuda_11.2.2_461.33_win10.exe"; do
    wexpect 0 "$CVM_EXE" install "$(winpath "$exe")"
    root="$STORE/cuda/11.2.2/root"
    for f in bin/nvcc.exe bin/cudart64_110.dll bin/cublas64_11.dll include/cuda_runtime.h \
        include/cublas_v2.h lib/x64/cudart.lib lib/x64/cublas.lib nvvm/bin/nvvm64_40_0.dll \
        licenses/cuda_nvcc/EULA.txt version.json; do
        [[ -f $root/$f ]] || fail "the toolkit lacks $f: $(cd "$root" && find . | sort | tr '\n' ' ')"
    done
    for f in bin/nvprof.exe Display.Driver nvlddmkm.sys ncu.exe cuda_nvcc.nvi; do
        [[ ! -e $root/$f ]] || fail "$f is not part of the toolkit"
    done
    entry=$(tr -d '\r' < "$STORE/cuda/11.2.2/entry")
    assert_contains "$entry" "$(sha256sum "$exe" | cut -d' ' -f1)"
    assert_contains "$entry" "component=libcublas"
    wexpect 0 "$CVM_EXE" list --json
    assert_eq "$(jq -r '[.cuda[].id] | join(" ")' <<< "$OUT")" "11.2.2" "toolkits listed"
    wexpect 0 "$CVM_EXE" uninstall 11.2.2
done
wexpect 0 "$CVM_EXE" install "$(winpath "$EXE")" --components cuda_nvcc,cuda_nvprof
[[ -f $STORE/cuda/11.2.2/root/bin/nvprof.exe && ! -e $STORE/cuda/11.2.2/root/include/cublas_v2.h ]] ||
    fail "--components ignored"
wexpect 0 "$CVM_EXE" uninstall 11.2.2

refused() { # FILE TEXT
    wexpect 2 "$CVM_EXE" -q install "$(winpath "$1")"
    assert_contains "$ERR" "$(basename "$1")"
    assert_contains "$ERR" "$2"
    one_line "$ERR"
    [[ -z $(ls -A "$STORE/cuda" 2> /dev/null) ]] || fail "something was installed: $(ls "$STORE/cuda")"
}
mkdir -p "$D/bad" "$D/cut" "$D/net" "$D/linux"
cp "$D/stub.exe" "$D/bad/cuda_11.2.2_461.33_win10.exe"
refused "$D/bad/cuda_11.2.2_461.33_win10.exe" "holds no 7-Zip archive"
head -c $(($(stat -c %s "$EXE") - 40)) "$EXE" > "$D/cut/cuda_11.2.2_461.33_win10.exe"
refused "$D/cut/cuda_11.2.2_461.33_win10.exe" "truncated"
cp "$D/stub.exe" "$D/net/cuda_11.2.2_461.33_win10_network.exe"
refused "$D/net/cuda_11.2.2_461.33_win10_network.exe" "network installer"
$MI runfile "$D/linux/cuda_11.2.2_460.32.03_linux.run" --version 11.2.2
refused "$D/linux/cuda_11.2.2_460.32.03_linux.run" "installer for linux-x86_64"
echo ok
