#!/usr/bin/env bash
# make-big-store.sh ROOT [COUNT] [--import CVM]
#
# Makes a store at ROOT with COUNT (default 200) CUDA toolkits and COUNT cuDNN builds, for
# scale tests. Always present: toolkits 12.4.1 and 11.2.2, cuDNN 9.1.0.70-cuda12 and
# 8.1.0.77-cuda11.2; the rest are spread over CUDA 9.x..12.x and cuDNN 7.x..9.x (per-minor
# builds before 8.3, per-major after). The global default is 12.4.1+9.1.0.70.
#
# Every toolkit is a small folder of its own (bin/nvcc is a copy of `true`, so a shim's time is
# cvm's own); entries are written as `cvm import` writes them (source=imported). With
# --import CVM, each folder is registered by running `CVM import` instead (slower, but the same
# code path as a user's import). Finally `cvm rehash` makes the shims when a cvm is known
# (CVM, or $CVM_BIN/cvm).
set -euo pipefail

usage() { echo "usage: $0 ROOT [COUNT] [--import CVM]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
ROOT=$1; shift
COUNT=200
IMPORT_WITH=
while [[ $# -gt 0 ]]; do
    case $1 in
    --import) IMPORT_WITH=${2:?}; shift 2 ;;
    [0-9]*) COUNT=$1; shift ;;
    *) usage ;;
    esac
done
[[ $COUNT -ge 2 ]] || { echo "$0: COUNT must be at least 2" >&2; exit 2; }
mkdir -p "$ROOT"
ROOT=$(cd "$ROOT" && pwd)
FILES="$ROOT/fake"
mkdir -p "$ROOT/cuda" "$ROOT/cudnn" "$FILES"
TRUE_BIN=$(command -v true)
[[ $TRUE_BIN == /* ]] || TRUE_BIN=/bin/true

# Toolkit ids: the two fixed ones, then MAJOR.MINOR.PATCH over 9..12 x 0..9 x 0..9.
toolkits=(12.4.1 11.2.2)
for major in 12 11 10 9; do
    for minor in 0 1 2 3 4 5 6 7 8 9; do
        for patch in 0 1 2 3 4 5 6 7 8 9; do
            [[ ${#toolkits[@]} -ge $COUNT ]] && break 3
            id=$major.$minor.$patch
            [[ $id == 12.4.1 || $id == 11.2.2 ]] && continue
            toolkits+=("$id")
        done
    done
done
# cuDNN ids: the two fixed ones, then VERSION-cudaX.Y (before 8.3) or VERSION-cudaX.
cudnns=(9.1.0.70-cuda12 8.1.0.77-cuda11.2)
i=0
while [[ ${#cudnns[@]} -lt $COUNT ]]; do
    i=$((i + 1))
    case $((i % 4)) in
    0) id="9.$((i % 10)).$((i / 10 % 10)).$((i + 100))-cuda12" ;;
    1) id="8.$((3 + i % 7)).$((i / 10 % 10)).$((i + 100))-cuda11" ;;
    2) id="8.$((i % 3)).$((i / 10 % 10)).$((i + 100))-cuda11.$((i % 9))" ;;
    3) id="7.$((i % 7)).$((i / 10 % 10)).$((i + 100))-cuda10.$((i % 3))" ;;
    esac
    [[ $id == 9.1.0.70-cuda12 || $id == 8.1.0.77-cuda11.2 ]] && continue
    cudnns+=("$id")
done

make_toolkit_dir() { # DIR VERSION
    local dir=$1 v=$2
    mkdir -p "$dir/bin" "$dir/include" "$dir/lib64"
    cp "$TRUE_BIN" "$dir/bin/nvcc"
    printf '{"cuda":{"name":"CUDA SDK","version":"%s"}}\n' "$v" >"$dir/version.json"
    printf '#define CUDA_VERSION %d\n' $((${v%%.*} * 1000 + $(cut -d. -f2 <<<"$v") * 10)) >"$dir/include/cuda.h"
    : >"$dir/lib64/libcudart.so"
}
make_cudnn_dir() { # DIR ID
    local dir=$1 id=$2
    local v=${id%%-*}
    IFS=. read -r ma mi pa _ <<<"$v"
    mkdir -p "$dir/include" "$dir/lib"
    printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n' "$ma" "$mi" "$pa" \
        >"$dir/include/cudnn_version.h"
    : >"$dir/lib/libcudnn.so.$ma"
}

for id in "${toolkits[@]}"; do
    dir="$FILES/cuda-$id"
    make_toolkit_dir "$dir" "$id"
    if [[ -n $IMPORT_WITH ]]; then
        CVM_ROOT=$ROOT "$IMPORT_WITH" import "$dir" 2>/dev/null
        continue
    fi
    mkdir -p "$ROOT/cuda/$id"
    cat >"$ROOT/cuda/$id/entry" <<EOF
kind=cuda
id=$id
version=$id
source=imported
path=$dir
include=include
lib=lib64
bin=bin
platform=linux-x86_64
note=made by scripts/make-big-store.sh
EOF
done
for id in "${cudnns[@]}"; do
    v=${id%%-cuda*}
    cuda=${id##*-cuda}
    dir="$FILES/cudnn-linux-x86_64-${v}_cuda$cuda-archive"
    make_cudnn_dir "$dir" "$id"
    if [[ -n $IMPORT_WITH ]]; then
        CVM_ROOT=$ROOT "$IMPORT_WITH" import --cuda "$cuda" "$dir" 2>/dev/null
        continue
    fi
    mkdir -p "$ROOT/cudnn/$id"
    cat >"$ROOT/cudnn/$id/entry" <<EOF
kind=cudnn
id=$id
version=$v
cuda=$cuda
source=imported
path=$dir
include=include
lib=lib
bin=
platform=linux-x86_64
note=made by scripts/make-big-store.sh
EOF
done
echo "12.4.1+9.1.0.70" >"$ROOT/version"

CVM=${IMPORT_WITH:-${CVM_BIN:+$CVM_BIN/cvm}}
if [[ -n $CVM && -x $CVM ]]; then
    CVM_ROOT=$ROOT "$CVM" rehash >/dev/null 2>&1 || true
fi
echo "$ROOT: $(ls "$ROOT/cuda" | wc -l) toolkits, $(ls "$ROOT/cudnn" | wc -l) cuDNN builds"
