#!/usr/bin/env bash
# NVIDIA's own projects (issue 39), built as their users build them with NOTHING but cvm's
# environment: no -I, -L, CUDA_HOME or NCCL_HOME given by hand; `cvm exec` or `eval "$(cvm env)"`
# sets them. The sources are snapshots in ../shared/clients beside the checkout (see its README.md),
# unpacked here; compile only (no GPU), for sm_90 alone. The toolkit is the machine's real CUDA 13.0
# (/usr/local/cuda-13.0, which carries its own cuDNN 9.19 and NCCL 2.28.9), imported as a user does.
#
#  1. nccl-tests (`make`, reading CUDA_HOME and NCCL_HOME; all_reduce_perf only) against NCCL
#     2.32.6 apart from the toolkit, selected with `cvm use 13.0+nccl2.32.6`:
#     a. the real nvidia-nccl-cu13 wheel, `cvm import SITE-PACKAGES` from a virtual environment;
#     b. an apt-shaped /usr made of the wheel's files (libnccl2/libnccl-dev in dpkg's status),
#        `cvm import STAGED/usr`;
#     c. NVIDIA's archive shape nccl_2.32.6-1+cuda13.5_x86_64.txz made of them, `cvm install FILE`.
#     Each must compile against 2.32.6's headers (nccl.h, nccl_device.h and the whole nccl_device/
#     folder, never the toolkit's 2.28.9 ones: all_reduce.cu calls ncclCommQueryProperties, which only
#     2.29 and later declare, in nccl_device/host.h) and link and load 2.32.6's library.
#  2. cuda-samples vectorAdd, deviceQuery and simpleCUBLAS with CMake (find_package(CUDAToolkit)),
#     with the toolkit alone under `cvm exec` and after `eval "$(cvm env)"` in bash, and with the
#     toolkit and the real nvidia-cudnn-cu13 wheel selected together (`cvm use 13.0+9.28`).
#
# A distribution's nvcc (Debian's CUDA 11.8 in /usr/bin, where installed) stays on PATH, as on
# users' machines: a build that is not handed the selection takes it.
#
# What each case costs on this project's 2-core machine (-j2; measured at load about 1, half
# again as much at load 3.7; the wheels' virtual environments are kept in
# CVM_TEST_CACHE, made once in about 10 s):
#   nccl-wheel 23 s (verifiable.o alone is 25 s of CPU; it includes nccl.h only for its types, so
#     the two other NCCL cases reuse it), nccl-apt 12 s, nccl-archive 33 s (packing 199 MB of
#     library with xz, 10 to 20 s, then 11 s of build); each cuda-samples way 10 to 12 s (three
#     configures and builds); in all about 105 s (150 s at load 3.7).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
CLIENTS=$(cd "$(dirname "$0")/../../.." && pwd)/shared/clients
NCCL_TESTS_TGZ=$CLIENTS/nccl-tests-2.19.6.tgz
SAMPLES_TGZ=$CLIENTS/cuda-samples-subset.tgz
[[ -f $NCCL_TESTS_TGZ && -f $SAMPLES_TGZ ]] ||
    skip "NVIDIA's client projects are not in $CLIENTS (../shared/clients beside the checkout; CI has them)"
CUDA13=/usr/local/cuda-13.0
[[ -x $CUDA13/bin/nvcc && -f $CUDA13/lib/libcudart.so.13 ]] || skip "the real CUDA 13.0 is not in $CUDA13"
need_tools make cmake gcc g++ readelf nm ldd tar xz python3
# The venv import_real_wheels and doctor_torch_real use too (one install in the cache): its
# site-packages also holds CUDA 13.5's runtime, nvcc and CCCL, imported beside 13.0 and not selected.
wheel_venv_cuda13
NCCL_SITE=$WHEEL_SITE
CUDNN_SITE=$WHEEL_SITE
WHEEL_NCCL=$NCCL_SITE/nvidia/nccl
[[ -f $WHEEL_NCCL/lib/libnccl.so.2 && -f $WHEEL_NCCL/include/nccl_device.h && -d $WHEEL_NCCL/include/nccl_device ]] ||
    fail "the $NCCL_CU13 wheel lacks libnccl.so.2, nccl_device.h or nccl_device/ in $WHEEL_NCCL"
export PATH=/usr/bin:/bin
unset CONDA_PREFIX VIRTUAL_ENV || true
T=$TEST_TMP
CUDART13=$(readlink -f "$CUDA13/lib/libcudart.so.13")

# project NAME: a fresh project folder $T/NAME, made the current one.
project() { mkdir -p "$T/$1" && cd "$T/$1"; }
# is_elf FILE: an x86-64 ELF program.
is_elf() {
    [[ -f $1 && -x $1 ]] || fail "$1 was not built"
    readelf -h "$1" 2> /dev/null | grep -q 'Advanced Micro Devices X86-64' || fail "$1 is no x86-64 ELF file"
}
needs() { readelf -d "$1" | grep -q "(NEEDED).*\[$2\]" || fail "$1 does not need $2: $(readelf -d "$1" | grep NEEDED)"; }
# loaded BIN LIB: the path the dynamic loader takes for LIB when BIN runs in the selection (here).
loaded() { "$CVM" exec -- ldd "$1" | awk -v l="$2" '$1 == l { print $3 }'; }
# loaded_from BIN LIB DIR...: LIB loads, under cvm, from a path inside one of the DIRs.
loaded_from() {
    local bin=$1 lib=$2 path d
    shift 2
    path=$(loaded "$bin" "$lib")
    for d; do [[ $path == "$d"/* ]] && return 0; done
    fail "under cvm exec $bin loads $lib from [${path:-nothing}], not from $*"
}

# ---------------------------------------------------------------------------------------------
# 1. nccl-tests against NCCL 2.32.6 apart from the toolkit.
NT=$T/nccl-tests
mkdir -p "$NT" && tar -xzf "$NCCL_TESTS_TGZ" -C "$NT"
GENCODE=-gencode=arch=compute_90,code=sm_90
VERIFIABLE_O=

# nccl_case NAME WANT_LIB: in the project folder (cvm use done), builds all_reduce_perf with
# `cvm exec -- make` into $T/NAME/build; it must use the selected NCCL's headers and link and
# load WANT_LIB (the file libnccl.so.2 resolves to), with the toolkit's libcudart.
nccl_case() {
    local name=$1 want=$2 b=$T/$1/build log=$T/$1/make.log
    mkdir -p "$b/verifiable"
    [[ -z $VERIFIABLE_O ]] || cp -p "$VERIFIABLE_O" "$b/verifiable/verifiable.o"
    # What the view shows of NCCL is the selection's, never the toolkit's 2.28.9 headers.
    local view h stray
    view=$("$CVM" exec -- printenv CUDA_HOME)
    stray=$(cd "$view/include" && find -L nccl* -type f | while read -r h; do
        [[ $(readlink -f "$h") != "$CUDA13"/* ]] || echo "$h"
    done | awk 'NR <= 5 { printf "%s%s", (NR > 1 ? ", " : ""), $0 }')
    # nccl-tests' own Makefile, told only which architecture: CUDA_HOME and NCCL_HOME are cvm's.
    if ! "$CVM" exec -- make -C "$NT/src" -j2 BUILDDIR="$b" NVCC_GENCODE="$GENCODE" "$b/all_reduce_perf" > "$log" 2>&1; then
        echo "--- $name: make failed; its errors:" >&2
        grep -E -A3 'error|undefined' "$log" | awk 'NR <= 40' >&2
        [[ -z $stray ]] || stray="; the view's include shows the toolkit's NCCL 2.28.9 headers: $stray"
        fail "$name: nccl-tests did not build under cvm exec (log $log)$stray"
    fi
    [[ -z $stray ]] || fail "$name: the view's include shows the toolkit's NCCL 2.28.9 headers: $stray"
    local bin=$b/all_reduce_perf
    is_elf "$bin"
    needs "$bin" libnccl.so.2
    needs "$bin" libcudart.so.13
    # Compiled against 2.32.6's headers: only they declare what all_reduce.cu calls from 2.29 on.
    nm -D --undefined-only "$bin" | grep -qw ncclCommQueryProperties ||
        fail "$name: all_reduce_perf calls no ncclCommQueryProperties: compiled against NCCL headers older than 2.29, not the selected 2.32.6"
    local got
    got=$(loaded "$bin" libnccl.so.2)
    [[ $(readlink -f "$got") == "$(readlink -f "$want")" ]] ||
        fail "$name: under cvm exec all_reduce_perf loads libnccl.so.2 from [$got] ($(readlink -f "$got")), not $want"
    got=$(loaded "$bin" libcudart.so.13)
    [[ $(readlink -f "$got") == "$CUDART13" ]] || fail "$name: all_reduce_perf loads libcudart.so.13 from [$got], not the toolkit's $CUDART13"
    echo "ok: $name: nccl-tests' all_reduce_perf built against NCCL 2.32.6, loading $want"
}
FAILED=()
# run_case NAME FUNCTION: one case in a subshell (its own CVM_ROOT); a failure is said and the
# next case still runs, so one run shows every case's result.
run_case() {
    local rc=0 start=$SECONDS
    set +e
    (
        set -e
        export CVM_ROOT=$T/store-$1
        "$2"
    )
    rc=$?
    set -e
    ((rc == 0)) || { echo "FAIL: case $1 ended with exit $rc" >&2; FAILED+=("$1"); }
    echo "($1: $((SECONDS - start)) s)"
}

# 1a. The wheel, imported from the virtual environment's site-packages as a user would.
wheel_nccl() {
    expect_rc 0 "$CVM" import "$CUDA13"
    expect_rc 0 "$CVM" import "$NCCL_SITE"
    assert_contains "$ERR" "imported nccl 2.32.6-cuda13"
    project nccl-wheel
    expect_rc 0 "$CVM" use 13.0+nccl2.32.6
    nccl_case nccl-wheel "$WHEEL_NCCL/lib/libnccl.so.2"
}
run_case nccl-wheel wheel_nccl
# Reused by b and c only when a built it (its objects depend on nothing the cases differ in).
[[ -f $T/nccl-wheel/build/verifiable/verifiable.o ]] && VERIFIABLE_O=$T/nccl-wheel/build/verifiable/verifiable.o

# 1b. NVIDIA's apt packages libnccl2 and libnccl-dev, as they lay NCCL out in /usr beside other
# packages' files (zlib's header here): an assembled root of NCCL's own files.
apt_nccl() {
    local m=$T/apt usr=$T/apt/usr
    local lib=$usr/lib/x86_64-linux-gnu
    mkdir -p "$lib" "$usr/include" "$m/var/lib/dpkg"
    cp "$WHEEL_NCCL/lib/libnccl.so.2" "$lib/libnccl.so.2.32.6"
    ln -s libnccl.so.2.32.6 "$lib/libnccl.so.2"
    ln -s libnccl.so.2 "$lib/libnccl.so"
    cp -r "$WHEEL_NCCL/include/nccl.h" "$WHEEL_NCCL/include/nccl_device.h" "$WHEEL_NCCL/include/nccl_device" "$usr/include/"
    printf '#define ZLIB_VERSION "1.2.13"\n' > "$usr/include/zlib.h"
    printf 'Package: libnccl2\nStatus: install ok installed\nVersion: 2.32.6-1+cuda13.0\n\nPackage: libnccl-dev\nStatus: install ok installed\nVersion: 2.32.6-1+cuda13.0\n\n' \
        > "$m/var/lib/dpkg/status"
    expect_rc 0 "$CVM" import "$CUDA13"
    expect_rc 0 "$CVM" import "$usr"
    assert_contains "$ERR" "imported nccl 2.32.6-cuda13"
    local id
    id=$(cd "$CVM_ROOT/nccl" && ls -d 2.32.6-*)
    [[ ! -e $CVM_ROOT/nccl/$id/root/include/zlib.h ]] || fail "apt: the assembled root holds another package's header"
    project nccl-apt
    expect_rc 0 "$CVM" use 13.0+nccl2.32.6
    nccl_case nccl-apt "$lib/libnccl.so.2.32.6"
}
run_case nccl-apt apt_nccl

# 1c. NVIDIA's archive shape (include/ whole, lib/ with the library and its links), installed.
# Named for the CUDA its library says it was built for ("NCCL version 2.32.6+cuda13.5"): cvm
# refuses an archive named +cuda13.0 around that library, rightly (the name would lie).
archive_nccl() {
    local a=$T/archive f=nccl_2.32.6-1+cuda13.5_x86_64
    mkdir -p "$a/$f/lib"
    cp -r "$WHEEL_NCCL/include" "$a/$f/"
    cp "$WHEEL_NCCL/lib/libnccl.so.2" "$a/$f/lib/libnccl.so.2.32.6"
    ln -s libnccl.so.2.32.6 "$a/$f/lib/libnccl.so.2"
    ln -s libnccl.so.2 "$a/$f/lib/libnccl.so"
    # xz's fastest settings: the library is hardly compressible, and -6 would take a minute.
    tar -C "$a" -cf - "$f" | xz -T2 --lzma2=preset=0,mode=fast,mf=hc3,nice=4,dict=64KiB > "$a/$f.txz"
    rm -rf "${a:?}/$f"
    expect_rc 0 "$CVM" import "$CUDA13"
    expect_rc 0 "$CVM" install "$a/$f.txz"
    assert_contains "$ERR" "installed NCCL 2.32.6-cuda13.5"
    project nccl-archive
    expect_rc 0 "$CVM" use 13.0+nccl2.32.6
    nccl_case nccl-archive "$CVM_ROOT/nccl/2.32.6-cuda13.5/root/lib/libnccl.so.2.32.6"
}
run_case nccl-archive archive_nccl

# ---------------------------------------------------------------------------------------------
# 2. cuda-samples with CMake. Their CMakeLists set CMAKE_CUDA_ARCHITECTURES to nine architectures
# over any -D, so the copy here names 90 alone (the one change to NVIDIA's files).
S=$T/cuda-samples
mkdir -p "$S" && tar -xzf "$SAMPLES_TGZ" -C "$S"
sed -i 's/^set(CMAKE_CUDA_ARCHITECTURES .*)$/set(CMAKE_CUDA_ARCHITECTURES 90)/' "$S"/Samples/*/*/CMakeLists.txt
SAMPLES="0_Introduction/vectorAdd 1_Utilities/deviceQuery 4_CUDA_Libraries/simpleCUBLAS"

# check_samples NAME NVCC_DIR LIB_DIR...: the three built programs in $T/NAME/build/<sample>:
# CUDA code compiled by CUDA 13.0's nvcc from NVCC_DIR (never a distribution's), the toolkit's
# libraries (libcudart, libcublas) loaded under cvm from the selected toolkit or its view.
check_samples() {
    local name=$1 nvcc_dir=$2 s n b cache
    shift 2
    for s in $SAMPLES; do
        n=${s#*/} b=$T/$name/build/$n
        is_elf "$b/$n"
        cache=$b/CMakeCache.txt
        if grep -q '^CMAKE_CUDA_COMPILER:' "$cache"; then
            local nvcc
            nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$cache")
            [[ $nvcc == "$nvcc_dir"/* ]] || fail "$name: CMake compiled $n's CUDA with [$nvcc], not the nvcc in $nvcc_dir"
            grep -q 'CMAKE_CUDA_COMPILER_VERSION "13\.0\.' "$b"/CMakeFiles/*/CMakeCUDACompiler.cmake ||
                fail "$name: $n's CUDA compiler is not CUDA 13.0: $(grep -h CMAKE_CUDA_COMPILER_VERSION "$b"/CMakeFiles/*/CMakeCUDACompiler.cmake)"
        fi
    done
    # vectorAdd links libcudart statically (CMake's default for CUDA code); the two others need it.
    for n in deviceQuery simpleCUBLAS; do
        needs "$T/$name/build/$n/$n" libcudart.so.13
        loaded_from "$T/$name/build/$n/$n" libcudart.so.13 "$@"
        [[ $(readlink -f "$(loaded "$T/$name/build/$n/$n" libcudart.so.13)") == "$CUDART13" ]] ||
            fail "$name: $n loads another libcudart.so.13 than the toolkit's $CUDART13"
    done
    needs "$T/$name/build/simpleCUBLAS/simpleCUBLAS" libcublas.so.13
    loaded_from "$T/$name/build/simpleCUBLAS/simpleCUBLAS" libcublas.so.13 "$@"
    echo "ok: $name: vectorAdd, deviceQuery and simpleCUBLAS built with CUDA 13.0's nvcc, loading the selection's libraries"
}
# build_samples NAME WAY: configures and builds the three samples in $T/NAME (the current folder)
# through WAY: `exec` (cvm exec -- cmake ...) or `env` (bash after eval "$(cvm env)").
build_samples() {
    local name=$1 way=$2 s n log=$T/$1/cmake.log
    for s in $SAMPLES; do
        n=${s#*/}
        local cfg=(cmake -S "$S/Samples/$s" -B "build/$n") bld=(cmake --build "build/$n" -j2)
        if [[ $way == exec ]]; then
            { "$CVM" exec -- "${cfg[@]}" && "$CVM" exec -- "${bld[@]}"; } >> "$log" 2>&1 ||
                fail "$name: $n did not build under cvm exec: $(grep -E -A3 'rror' "$log" | awk 'NR <= 30')"
        else
            CVM="$CVM" bash -c 'eval "$("$CVM" env)" && "$@"' bash "${cfg[@]}" >> "$log" 2>&1 &&
                CVM="$CVM" bash -c 'eval "$("$CVM" env)" && "$@"' bash "${bld[@]}" >> "$log" 2>&1 ||
                fail "$name: $n did not build after eval \"\$(cvm env)\": $(grep -E -A3 'rror' "$log" | awk 'NR <= 30')"
        fi
    done
}

samples_exec() {
    expect_rc 0 "$CVM" import "$CUDA13"
    project samples-exec
    expect_rc 0 "$CVM" use 13.0
    build_samples samples-exec exec
    check_samples samples-exec "$CUDA13" "$CUDA13"
}
run_case samples-exec samples_exec

samples_env() {
    expect_rc 0 "$CVM" import "$CUDA13"
    project samples-env
    expect_rc 0 "$CVM" use 13.0
    build_samples samples-env env
    check_samples samples-env "$CUDA13" "$CUDA13"
}
run_case samples-env samples_env

# The toolkit and the cuDNN wheel apart from it, selected together: CUDA_HOME is the merged view,
# whose cuDNN is the wheel's 9.28 (not the toolkit's own 9.19); the toolkit's libraries load
# through the view.
samples_cudnn() {
    expect_rc 0 "$CVM" import "$CUDA13"
    expect_rc 0 "$CVM" import "$CUDNN_SITE"
    assert_contains "$ERR" "imported cudnn 9.28.1.4-cuda13"
    project samples-cudnn
    expect_rc 0 "$CVM" use 13.0+9.28
    local view
    view=$("$CVM" exec -- printenv CUDA_HOME)
    [[ $view == "$CVM_ROOT/views/"* ]] || fail "samples-cudnn: CUDA_HOME [$view] is no merged view"
    grep -q '#define CUDNN_MINOR 28' "$view/include/cudnn_version.h" ||
        fail "samples-cudnn: the view's cudnn_version.h is not the wheel's 9.28: $(grep -h '#define CUDNN_M' "$view/include/cudnn_version.h")"
    [[ $(readlink -f "$view/lib64/libcudnn.so.9") == "$CUDNN_SITE"/nvidia/cudnn/lib/* ]] ||
        fail "samples-cudnn: the view's libcudnn.so.9 is $(readlink -f "$view/lib64/libcudnn.so.9"), not the wheel's"
    build_samples samples-cudnn exec
    check_samples samples-cudnn "$view" "$view"
}
run_case samples-cudnn samples_cudnn

((${#FAILED[@]} == 0)) || fail "cases that failed: ${FAILED[*]} (their messages are above)"
echo "build_nvidia_clients: ok"
