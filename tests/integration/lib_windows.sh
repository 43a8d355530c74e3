# Helpers for the Windows tests (sourced after lib.sh): the cross-built .exe files run under Wine,
# against fixtures built here by mingw-w64 from tests/windows/.
#
# Needs: build-windows/bin/cvm.exe (scripts/build-windows.sh; or CVM_WINDOWS_BIN naming the folder),
# wine, x86_64-w64-mingw32-gcc and -windres. Missing any of these is a skip (exit 77).
#
# Wine: lib_wine.sh (the build folder's prefix, a wineserver for the test's whole run, wrun and
# wexpect). Every test keeps its files in its own folder: $TEST_TMP (Z:\tmp\cvm-it.XXXX under
# Wine) and a unique folder on drive C: ($WIN_C / $WIN_C_WIN), both removed at exit.

WINDOWS_BIN="${CVM_WINDOWS_BIN:-${CVM_SOURCE_DIR:?}/build-windows/bin}"
[[ -f $WINDOWS_BIN/cvm.exe ]] || windows_missing "no $WINDOWS_BIN/cvm.exe: run scripts/build-windows.sh (or set CVM_WINDOWS_BIN)"
MINGW_CC=x86_64-w64-mingw32-gcc
MINGW_WINDRES=x86_64-w64-mingw32-windres
command -v "$MINGW_CC" > /dev/null 2>&1 || windows_missing "$MINGW_CC is not installed (mingw-w64)"
command -v "$MINGW_WINDRES" > /dev/null 2>&1 || windows_missing "$MINGW_WINDRES is not installed (mingw-w64)"
for tool in jq zip unzip; do
    command -v "$tool" > /dev/null 2>&1 || windows_missing "$tool is not installed"
done
WIN_FIXTURES_SRC="$CVM_SOURCE_DIR/tests/windows"

source "$(dirname "${BASH_SOURCE[0]}")/lib_wine.sh"
# Unix variables reach the Windows programs: none of the machine's CUDA ones may.
unset FAKE_NVCC_EXIT FAKE_CUDNN_VERSION FAKE_CUDNN_WRONG || true
for var in $(compgen -e | grep -E '^(CUDA_PATH_V|CUDNN_)' || true); do unset "$var"; done

# This test's folder on drive C: (C:\cvm-tests\<name>).
WIN_C_NAME="$(basename "$TEST_TMP")"
WIN_C="$WINEPREFIX/drive_c/cvm-tests/$WIN_C_NAME"
WIN_C_WIN="C:\\cvm-tests\\$WIN_C_NAME"
mkdir -p "$WIN_C"
cleanup_windows_test() {
    wine_stop
    rm -rf "$WIN_C"
    cleanup_test_tmp
}
trap cleanup_windows_test EXIT
wine_start

# winpath UNIXPATH: the Windows spelling of a path (drive_c paths as C:\..., others as Z:\...).
winpath() {
    local p=$1
    case $p in
    "$WINEPREFIX/drive_c"/*) p="C:${p#"$WINEPREFIX/drive_c"}" ;;
    /*) p="Z:$p" ;;
    esac
    printf '%s' "${p//\//\\}"
}
# unixpath WINPATH: the reverse for C:\ and Z:\ paths.
unixpath() {
    local p=${1//\\//}
    case $p in
    [Cc]:/*) p="$WINEPREFIX/drive_c/${p:3}" ;;
    [Zz]:/*) p="${p:2}" ;;
    esac
    printf '%s' "$p"
}

# wbatch FILE: runs a batch file in wine's cmd.exe (/c), same outputs as wrun.
wbatch() { wrun cmd /c "$(winpath "$1")"; }

# assert_ieq ACTUAL EXPECTED [WHAT]: equal ignoring case (Windows paths and names).
assert_ieq() { [[ "${1,,}" == "${2,,}" ]] || fail "${3:-values differ}: expected [$2] (any case), got [$1]"; }

# value_of NAME TEXT: the value of the first NAME=value line in TEXT.
value_of() { sed -n "s/^$1=//p" <<< "$2" | head -n1; }

# Fixture builders --------------------------------------------------------------------------

win_cc() { "$MINGW_CC" -O2 -w "$@" || fail "mingw-w64 could not build: $*"; }

# build_fake_nvcc OUT.exe [RELEASE]: the fake nvcc.exe of tests/windows/fake_nvcc.c.
build_fake_nvcc() {
    win_cc -municode -DFAKE_RELEASE="\"${2:-11.2}\"" -o "$1" "$WIN_FIXTURES_SRC/fake_nvcc.c"
}

# version_resource OUT.o VERSION(4 numbers) FILENAME: a compiled VS_VERSIONINFO resource.
version_resource() {
    local out=$1 version=$2 name=$3
    IFS=. read -r ma mi pa bu <<< "$version"
    "$MINGW_WINDRES" -DVER_MAJOR="$ma" -DVER_MINOR="$mi" -DVER_PATCH="$pa" -DVER_BUILD="${bu:-0}" \
        -DVER_STRING="\\\"$version\\\"" -DVER_FILENAME="\\\"$name\\\"" \
        "$WIN_FIXTURES_SRC/version.rc" "$out" || fail "windres could not build the version resource of $name"
}

# build_cudnn_dll OUT_DIR NAME VERSION(4 numbers) [LIB_DIR]: cuDNN's front DLL (NAME cudnn64_8.dll)
# is the probe's fake cuDNN (tests/probe_fakes/fake_cudnn.c, everything in one library, made for
# CUDA 11.2); the others are small stand-ins. Each gets a version resource; with LIB_DIR also
# its import library there (cudnn_<x>64_8.lib).
build_cudnn_dll() {
    local dir=$1 name=$2 version=$3 libdir=${4:-}
    local res="$TEST_TMP/.res-$name-$version.o"
    version_resource "$res" "$version" "$name"
    local implib=()
    [[ -n $libdir ]] && implib=(-Wl,--out-implib,"$libdir/${name%.dll}.lib")
    local major=${version%%.*}
    local -a cudnn_version
    IFS=. read -r -a cudnn_version <<< "$version"
    if [[ $name == cudnn64_* ]]; then
        win_cc -shared -o "$dir/$name" -DFAKE_MAJOR="$major" -DFAKE_WITH_GRAPH -DFAKE_WITH_OPS \
            -DFAKE_WITH_CNN -DFAKE_CUDART_VERSION=11020 "$CVM_SOURCE_DIR/tests/probe_fakes/fake_cudnn.c" \
            "$res" "${implib[@]}"
    else
        win_cc -shared -o "$dir/$name" -DFAKE_DLL_NAME="\"$name\"" "$WIN_FIXTURES_SRC/fake_dll.c" "$res" \
            "${implib[@]}"
    fi
}

# build_stub_dll OUT_DIR NAME VERSION(4 numbers): a small DLL with a version resource (a library
# the tests only need to exist and be found, like cublas64_11.dll).
build_stub_dll() {
    local res="$TEST_TMP/.res-$2-$3.o"
    version_resource "$res" "$3" "$2"
    win_cc -shared -o "$1/$2" -DFAKE_DLL_NAME="\"$2\"" "$WIN_FIXTURES_SRC/fake_dll.c" "$res"
}

# build_fake_cudart OUT_DIR: cudart64_110.dll (CUDA 11.x runtime) from tests/probe_fakes/fake_cudart.c.
build_fake_cudart() {
    win_cc -shared -o "$1/cudart64_110.dll" -DFAKE_RUNTIME_VERSION=11020 -DFAKE_DRIVER_VERSION=11020 \
        "$CVM_SOURCE_DIR/tests/probe_fakes/fake_cudart.c"
}

# make_win_toolkit DIR [VERSION]: a CUDA toolkit folder as NVIDIA's Windows installer leaves it:
# bin\nvcc.exe (the fake), include\cuda.h, lib\x64, nvvm\bin, libnvvp, version.json.
make_win_toolkit() {
    local dir=$1 version=${2:-11.2.2}
    local major=${version%%.*} rest=${version#*.}
    local minor=${rest%%.*}
    mkdir -p "$dir/bin" "$dir/include" "$dir/lib/x64"
    build_fake_nvcc "$dir/bin/nvcc.exe" "$major.$minor"
    printf '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "%s"\n   }\n}\n' "$version" \
        > "$dir/version.json"
    printf '#define CUDA_VERSION %d\n' $((major * 1000 + minor * 10)) > "$dir/include/cuda.h"
    : > "$dir/lib/x64/cudart.lib"
    # A folder only the toolkit has: the merged view shows it through a junction.
    mkdir -p "$dir/nvvm/bin"
    printf 'cicc stand-in\n' > "$dir/nvvm/bin/cicc.txt"
    # NVIDIA's installer puts libnvvp on PATH beside bin.
    mkdir -p "$dir/libnvvp"
    printf 'nvvp stand-in\n' > "$dir/libnvvp/nvvp.ini"
}

# make_cudnn_tree DIR VERSION(4 numbers) CUDA: the tree of cudnn-<CUDA>-windows-x64-v<VERSION>.zip:
# cuda\bin (7 DLLs), cuda\include (9 headers), cuda\lib\x64 (14 import libraries) and the
# license, 31 files.
make_cudnn_tree() {
    local dir=$1 version=$2
    local root="$dir/cuda"
    mkdir -p "$root/bin" "$root/include" "$root/lib/x64"
    IFS=. read -r ma mi pa bu <<< "$version"
    local major=$ma
    build_cudnn_dll "$root/bin" "cudnn64_$major.dll" "$version" "$root/lib/x64"
    cp "$root/lib/x64/cudnn64_$major.lib" "$root/lib/x64/cudnn.lib"
    local sub
    for sub in adv_infer adv_train cnn_infer cnn_train ops_infer ops_train; do
        build_cudnn_dll "$root/bin" "cudnn_${sub}64_$major.dll" "$version" "$root/lib/x64"
        cp "$root/lib/x64/cudnn_${sub}64_$major.lib" "$root/lib/x64/cudnn_$sub.lib"
        printf '#pragma once\n/* cuDNN %s: %s */\n#include "cudnn_version.h"\n' "$version" "$sub" \
            > "$root/include/cudnn_$sub.h"
    done
    cat > "$root/include/cudnn_version.h" << EOS
/*
 * Copyright 2014-2021 NVIDIA Corporation.  All rights reserved. (stand-in for the cvm tests)
 */
/**
 * \file: The master cuDNN version file.
 */

#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR $ma
#define CUDNN_MINOR $mi
#define CUDNN_PATCHLEVEL $pa

#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

#endif /* CUDNN_VERSION_H */
EOS
    printf '#pragma once\n#include "cudnn_version.h"\n#include "cudnn_ops_infer.h"\n' > "$root/include/cudnn.h"
    printf '#pragma once\n/* cuDNN backend API */\n' > "$root/include/cudnn_backend.h"
    printf 'NVIDIA cuDNN Software License Agreement (stand-in for the cvm tests)\r\n' \
        > "$root/NVIDIA_SLA_cuDNN_Support.txt"
    : "${bu:?}"
}

# make_cudnn_zip OUT.zip VERSION CUDA: the archive of make_cudnn_tree (the name says the rest:
# cudnn-11.2-windows-x64-v8.1.0.77.zip).
make_cudnn_zip() {
    local out=$1 version=$2 cuda=$3
    local tree="$TEST_TMP/.zip-tree-$version"
    make_cudnn_tree "$tree" "$version" "$cuda"
    (cd "$tree" && zip -qrX "$out" cuda) || fail "zip could not write $out"
    rm -rf "$tree"
}

# setup_cuda112_cudnn81: this test's store ($CVM_ROOT = C:\cvm-tests\<name>\store) with CUDA
# 11.2.2 imported from ...\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v11.2 and cuDNN
# 8.1.0.77 installed from cudnn-11.2-windows-x64-v8.1.0.77.zip. Sets TK, TK_WIN, ZIP, STORE
# (the store's Unix path) and CVM_EXE.
setup_cuda112_cudnn81() {
    CVM_EXE="$WINDOWS_BIN/cvm.exe"
    TK="$WIN_C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.2"
    TK_WIN=$(winpath "$TK")
    make_win_toolkit "$TK" 11.2.2
    build_fake_cudart "$TK/bin"
    build_stub_dll "$TK/bin" cublas64_11.dll 11.4.1.1043
    build_stub_dll "$TK/bin" cublasLt64_11.dll 11.4.1.1043
    ZIP="$TEST_TMP/cudnn-11.2-windows-x64-v8.1.0.77.zip"
    make_cudnn_zip "$ZIP" 8.1.0.77 11.2
    STORE="$WIN_C/store"
    export CVM_ROOT="$WIN_C_WIN\\store"
    wexpect 0 "$CVM_EXE" import "$TK_WIN"
    wexpect 0 "$CVM_EXE" install "$(winpath "$ZIP")"
}
