#!/usr/bin/env bash
# `cvm import` and `import --detect` of a cuDNN whose layout does not say its CUDA (NVIDIA's RPM
# packages in usr/lib64 + usr/include, plain folders): the major comes from the CUDA libraries
# cuDNN's libraries name. Real ELF files built here; the real cuDNN of /usr/local/cuda-13.0 in
# both layouts where it is installed.
source "$(dirname "$0")/lib.sh"
unset CONDA_PREFIX VIRTUAL_ENV || true
export HOME="$TEST_TMP/home" CVM_PYTHON=
command -v cc > /dev/null || skip "no C compiler"

# so OUT SOURCE [FLAGS...]: a real shared library.
so() {
    local out=$1 src=$2
    shift 2
    mkdir -p "$(dirname "$out")"
    printf '%s\n' "$src" > "$out.c"
    cc -shared -fPIC -o "$out" "$out.c" "$@" || fail "cannot build $out"
    rm "$out.c"
}
plain='int cvm_fn(void) { return 1; }'
# A cuDNN 9 sub-library keeps the names it loads at run time in its read-only data.
loads() { printf 'const char* cvm_loads = "%s";\nint cvm_fn(void) { return 1; }\n' "$1"; }
version_h() { printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n' "$@"; }

# NVIDIA's RPM packages of cuDNN 9.1.0 for CUDA 13 on a staged machine: no dpkg, no --cuda.
M="$TEST_TMP/machine"
usr="$M/usr"
mkdir -p "$usr/include"
version_h 9 1 0 > "$usr/include/cudnn_version.h"
echo '#include <cudnn_version.h>' > "$usr/include/cudnn.h"
so "$usr/lib64/libcudnn.so.9.1.0" "$plain"
so "$usr/lib64/libcudnn_adv.so.9.1.0" "$(loads libcublasLt.so.13)"
so "$usr/lib64/libcudnn_engines_precompiled.so.9.1.0" "$(loads libnvrtc.so.13)"
for s in "" _adv _engines_precompiled; do ln -s "libcudnn$s.so.9.1.0" "$usr/lib64/libcudnn$s.so.9"; done
so "$usr/lib64/libother.so.1" "$(loads libcublasLt.so.12)"

# A --cuda that contradicts the libraries is refused and registers nothing.
expect_rc 2 "$CVM" import --cuda 12 "$usr"
assert_eq "$ERR" "cvm import: --cuda 12 contradicts the cuDNN in $usr/lib64: libcudnn_adv.so.9.1.0 names libcublasLt.so.13 (CUDA 13); rerun with --cuda 13 or without --cuda"
expect_rc 0 "$CVM" list
assert_not_contains "$OUT" "9.1.0"

CVM_DETECT_ROOT="$M" expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "imported cudnn 9.1.0-cuda13 from $usr (NVIDIA's cuDNN packages)"
expect_rc 0 "$CVM" list
assert_contains "$OUT" "9.1.0-cuda13"
# Its assembled root holds cuDNN's libraries only, not the other library of lib64.
r="$CVM_ROOT/cudnn/9.1.0-cuda13/root"
[[ -e $r/lib/libcudnn_adv.so.9 && -e $r/include/cudnn_version.h && ! -e $r/lib/libother.so.1 ]] || fail "root: $(ls -R "$r")"

# A plain folder of cuDNN 8.9.7 whose libcudnn_ops_infer links cuBLASLt of CUDA 12.
so "$TEST_TMP/stubs/libcublasLt.so.12" "$plain" -Wl,-soname,libcublasLt.so.12
p8="$TEST_TMP/dl/cudnn8"
mkdir -p "$p8/include"
version_h 8 9 7 > "$p8/include/cudnn_version.h"
so "$p8/lib/libcudnn.so.8.9.7" "$plain"
so "$p8/lib/libcudnn_ops_infer.so.8.9.7" "$plain" -Wl,--no-as-needed -L"$TEST_TMP/stubs" -l:libcublasLt.so.12
expect_rc 0 "$CVM" import "$p8"
assert_contains "$ERR" "imported cudnn 8.9.7-cuda12 from $p8"

# A plain folder whose libraries name no CUDA: --cuda is asked for, naming the folder; given it,
# the import is kept. Once its libraries (and header) change to load CUDA 13's, --detect
# re-reads it with their CUDA and forgets the old entry.
p9="$TEST_TMP/dl/cudnn9"
mkdir -p "$p9/include"
version_h 9 2 0 > "$p9/include/cudnn_version.h"
so "$p9/lib/libcudnn.so.9.2.0" "$plain"
so "$p9/lib/libcudnn_adv.so.9.2.0" "$plain"
expect_rc 2 "$CVM" import "$p9"
assert_contains "$ERR" "cannot tell which CUDA the cuDNN 9.2.0 in $p9 was built for"
assert_contains "$ERR" "rerun with --cuda 12"
expect_rc 0 "$CVM" import --cuda 12 "$p9"
assert_contains "$ERR" "imported cudnn 9.2.0-cuda12 from $p9"
so "$p9/lib/libcudnn_adv.so.9.2.0" "$(loads libcublasLt.so.13)"
touch -d '+1 hour' "$p9/include/cudnn_version.h"
CVM_DETECT_ROOT="$M" expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "9.2.0-cuda13"
assert_contains "$ERR" "forgot cudnn 9.2.0-cuda12"
expect_rc 0 "$CVM" list
assert_contains "$OUT" "9.2.0-cuda13"
assert_not_contains "$OUT" "9.2.0-cuda12"

# The real cuDNN 9.19 of /usr/local/cuda-13.0, as a plain folder and as NVIDIA's RPM layout
# (links to its files, without the toolkit beside it).
real=/usr/local/cuda-13.0
if [[ -f $real/lib/libcudnn_adv.so.9 && -f $real/include/cudnn_version.h ]]; then
    for layout in plain rpm; do
        if [[ $layout == plain ]]; then d="$TEST_TMP/real/cudnn" inc=include lib=lib; else d="$TEST_TMP/real$layout/usr" inc=include lib=lib64; fi
        mkdir -p "$d/$inc" "$d/$lib"
        for f in "$real"/include/cudnn*.h; do ln -s "$f" "$d/$inc/"; done
        for f in "$real"/lib/libcudnn*.so.9; do
            if [[ $layout == plain ]]; then
                ln -s "$f" "$d/$lib/"
            else # the packages' names: libcudnn_adv.so.9.19.0 and its link libcudnn_adv.so.9
                ln -s "$f" "$d/$lib/${f##*/}.19.0"
                ln -s "${f##*/}.19.0" "$d/$lib/${f##*/}"
            fi
        done
        if [[ $layout == plain ]]; then
            CVM_ROOT="$TEST_TMP/real-$layout" expect_rc 0 "$CVM" import "$d"
        else
            CVM_ROOT="$TEST_TMP/real-$layout" CVM_DETECT_ROOT="$TEST_TMP/real$layout" expect_rc 0 "$CVM" import --detect
        fi
        assert_contains "$ERR" "imported cudnn 9.19.0-cuda13 from $d"
    done
else
    echo "no cuDNN 9 in $real: skipping the real one" >&2
fi
echo "import_cudnn_major: ok"
