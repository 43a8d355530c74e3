#!/usr/bin/env bash
# cvm export --oci: an OCI image layout of a selection, read by the real clients (skopeo inspect
# and copy to a docker-archive, umoci unpack), stacked on a base image made with umoci and passed
# through skopeo, and run by podman (or buildah) where this machine lets a container start.
# Reproducible to the byte; refusals leave nothing behind.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
need_tools skopeo umoci jq busybox
trap 'cleanup_test_tmp' EXIT
export CVM_PROGRESS=plain
unset SOURCE_DATE_EPOCH
# A toolkit and cuDNN installed from NVIDIA-style manifests on a file:// mirror (archives with
# URLs and sums, for the labels).
M="$TEST_TMP/mirror"
R="$M/cuda/redist"
mkdir -p "$R" "$M/cudnn/redist/cudnn/linux-x86_64"
ENTRIES=()
redist_component "$R" cuda_nvcc 12.4.131 --tool bin/nvcc --tool bin/ptxas --header crt/host_defines.h
redist_component "$R" cuda_cudart 12.4.127 --lib libcudart.so --header cuda_runtime.h --cuda-h 12.4
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${ENTRIES[@]}"
$MK cudnn-redist "$M/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz" --version 9.1.0
$MK manifest "$M/cudnn/redist/redistrib_9.1.0.json" --product cudnn --base "$M/cudnn/redist" \
    --entry "cudnn=9.1.0.70=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz=12"
export CVM_MIRROR="file://$M"
expect_rc 0 "$CVM" install 12.4.1+9.1.0
P="$TEST_TMP/project"
mkdir -p "$P"
cd "$P"
expect_rc 0 "$CVM" use 12.4.1+9.1.0.70
TAG=cuda12.4.1-cudnn9.1.0.70-cuda12
VIEW=/opt/cvm/views/12.4.1+9.1.0.70-cuda12

# The selection here, twice: the same bytes, the default tag, the layout's files.
I="$TEST_TMP/images"
expect_rc 0 "$CVM" export --oci "$I/one" --json
FULL_JSON=$OUT
DIGEST=$(jq -r .manifest <<<"$OUT")
assert_eq "$(jq -r .tag <<<"$OUT")" "$TAG"
assert_eq "$(jq -r .selection <<<"$OUT")" "12.4.1+9.1.0.70-cuda12"
assert_eq "$(jq -r .new_layout <<<"$OUT")" "true"
assert_contains "$ERR" "writing"
expect_rc 0 "$CVM" export --oci "$I/two" 12.4+9
assert_contains "$ERR" "wrote the image $I/two:$TAG (manifest $DIGEST)"
assert_contains "$ERR" "private registry"
cmp "$I/one/index.json" "$I/two/index.json" || fail "two exports of one selection differ"
diff -r "$I/one" "$I/two" > /dev/null || fail "two exports' blobs differ"
assert_eq "$(cat "$I/one/oci-layout")" '{"imageLayoutVersion":"1.0.0"}'
assert_eq "$(jq -r '.manifests[0].annotations["org.opencontainers.image.ref.name"]' "$I/one/index.json")" "$TAG"
assert_eq "$(jq -r '.manifests[0].digest' "$I/one/index.json")" "$DIGEST"
for b in "$I"/one/blobs/sha256/*; do
    assert_eq "sha256:$(sha256sum < "$b" | cut -d' ' -f1)" "sha256:$(basename "$b")" "blob named by its digest"
done
LAYER=$(jq -r '.layers[-1].digest' "$I/one/blobs/sha256/${DIGEST#sha256:}")
LAYER_FILE="$I/one/blobs/sha256/${LAYER#sha256:}"
# gzip header: no time (bytes 4-7), no name (flags 0), system 255.
assert_eq "$(od -An -tx1 -N10 "$LAYER_FILE" | tr -d ' \n')" "1f8b08000000000000ff" "the layer's gzip header"
CONFIG=$(jq -r '.config.digest' "$I/one/blobs/sha256/${DIGEST#sha256:}")
assert_eq "$(jq -r '.rootfs.diff_ids[0]' "$I/one/blobs/sha256/${CONFIG#sha256:}")" \
    "sha256:$(gzip -dc "$LAYER_FILE" | sha256sum | cut -d' ' -f1)" "diff_id is the tar stream's SHA-256"
gzip -dc "$LAYER_FILE" | tar -tvf - > "$TEST_TMP/listing"
grep -v ' root/root \| 0/0 ' "$TEST_TMP/listing" | head -3 | grep . && fail "an entry not owned by 0/0"
grep -v ' 1980-01-01 00:00 ' "$TEST_TMP/listing" | head -3 | grep . && fail "an entry with another time"
# The same export into the same layout again changes nothing; SOURCE_DATE_EPOCH does.
before=$(cat "$I/one/index.json")
expect_rc 0 "$CVM" export --oci "$I/one" --json
assert_eq "$(jq -r .replaced <<<"$OUT")" "false"
assert_eq "$(cat "$I/one/index.json")" "$before" "index.json after exporting the same image again"
expect_rc 0 env SOURCE_DATE_EPOCH=1700000000 "$CVM" export --oci "$I/epoch" --json
[[ $(jq -r .manifest <<<"$OUT") != "$DIGEST" ]] || fail "SOURCE_DATE_EPOCH did not change the image"
expect_rc 0 env SOURCE_DATE_EPOCH=1700000000 "$CVM" export --oci "$I/epoch2" --json
cmp "$I/epoch/index.json" "$I/epoch2/index.json" || fail "SOURCE_DATE_EPOCH exports differ"
expect_rc 2 env SOURCE_DATE_EPOCH=yesterday "$CVM" export --oci "$I/bad-epoch"
assert_contains "$ERR" "SOURCE_DATE_EPOCH='yesterday' is not a whole number"
[[ ! -e $I/bad-epoch ]] || fail "a refused export left $I/bad-epoch"

# skopeo reads it: the digest, the labels, the environment.
expect_rc 0 skopeo inspect "oci:$I/one:$TAG"
assert_eq "$(jq -r .Digest <<<"$OUT")" "$DIGEST"
assert_eq "$(jq -r '.Labels["cvm.cuda"]' <<<"$OUT")" "12.4.1"
assert_eq "$(jq -r '.Labels["cvm.cudnn"]' <<<"$OUT")" "9.1.0.70-cuda12"
# A mirror's archive is labelled with NVIDIA's URL, for which it stands: no folder of this machine.
assert_contains "$(jq -r '.Labels["cvm.cuda.archive.cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"]' <<<"$OUT")" \
    "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/linux-x86_64/"
assert_not_contains "$(jq -r '.Labels | tostring' <<<"$OUT")" "$TEST_TMP" "a folder of this machine in the labels"
assert_contains "$(jq -r '.Labels["cvm.cuda.archive.cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"]' <<<"$OUT")" \
    "sha256:$(sha256sum "$R"/cuda_nvcc/linux-x86_64/*.tar.xz | cut -d' ' -f1)"
assert_contains "$(jq -r '.Labels["cvm.licence"]' <<<"$OUT")" "private registry"
expect_rc 0 skopeo inspect --config "oci:$I/one:$TAG"
ENV=$(jq -r '.config.Env[]' <<<"$OUT")
assert_contains "$ENV" "CUDA_PATH=$VIEW"
assert_contains "$ENV" "CUDA_HOME=$VIEW"
assert_contains "$ENV" "CUDNN_PATH=/opt/cvm/cudnn/9.1.0.70-cuda12"
assert_contains "$ENV" "PATH=$VIEW/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
assert_contains "$ENV" "CUDACXX=$VIEW/bin/nvcc"
assert_not_contains "$ENV" "$TEST_TMP" "a folder of this machine in the image's environment"
assert_contains "$ENV" "LD_LIBRARY_PATH=$VIEW/lib64"
assert_contains "$ENV" "NVIDIA_REQUIRE_CUDA=cuda>=12.4"
# The environment is cvm env's, for the image's folders: every variable cvm env sets is there.
NAMES=$("$CVM" env --shell bash | sed -n 's/^export \([A-Z_0-9]*\)=.*/\1/p' | grep -v '^_CVM')
(($(wc -w <<<"$NAMES") >= 7)) || fail "cvm env set only: $NAMES"
for name in $NAMES; do
    assert_contains "$ENV" "$name=" "cvm env sets $name, the image does not"
done
# skopeo copies it into a docker-archive (what enroot and docker load take).
expect_rc 0 skopeo copy "oci:$I/one:$TAG" "docker-archive:$TEST_TMP/cuda.tar:cuda:$TAG"
tar -tf "$TEST_TMP/cuda.tar" > "$TEST_TMP/archive-list"
grep -qx manifest.json "$TEST_TMP/archive-list" || fail "no manifest.json in the docker-archive"

# umoci unpacks it: real files, cuDNN inside the toolkit's tree as CUDA_PATH shows it.
umoci_unpack() { # LAYOUT:TAG BUNDLE
    local rootless=()
    [[ $(id -u) == 0 ]] || rootless=(--rootless)
    umoci unpack "${rootless[@]}" --image "$1" "$2" > /dev/null || fail "umoci unpack $1"
}
B="$TEST_TMP/bundle"
umoci_unpack "$I/one:$TAG" "$B"
root="$B/rootfs/opt/cvm/cuda/12.4.1"
[[ -f $root/bin/nvcc && ! -L $root/bin/nvcc ]] || fail "nvcc is not a file in the image"
[[ -f $B/rootfs/$VIEW/include/cudnn.h ]] || fail "cudnn.h is not visible in CUDA_PATH/include"
[[ -f $B/rootfs/$VIEW/lib64/libcudnn.so.9 ]] || fail "libcudnn.so.9 is not visible in CUDA_PATH/lib64"
[[ -f $B/rootfs/$VIEW/lib64/libcudart.so ]] || fail "libcudart.so is not visible in CUDA_PATH/lib64"
[[ $(readlink "$B/rootfs/$VIEW/lib64/libcudnn.so.9") == ../../../cudnn/* ]] || fail "the view's links are not relative"
cmp "$root/bin/nvcc" "$CVM_ROOT/cuda/12.4.1/root/bin/nvcc" || fail "nvcc differs from the store's"
assert_contains "$(jq -r '.process.env[]' "$B/config.json")" "CUDA_PATH=$VIEW"
[[ -z $(find "$B/rootfs" -newermt 1980-01-02 | head -1) ]] || fail "a file in the image is newer than 1980"

[[ -z $(find "$B/rootfs" -type l -lname '/*' | head -1) ]] || fail "absolute links in the image: $(find "$B/rootfs" -type l -lname '/*')"
[[ -z $(find "$B/rootfs" -xtype l | head -1) ]] || fail "links to nothing in the image: $(find "$B/rootfs" -xtype l)"

# An import assembled from shared folders (NVIDIA's cuDNN packages in /usr: an entry of links into
# /usr/lib/x86_64-linux-gnu): the image holds the files themselves.
make_apt_cudnn "$TEST_TMP/machine" 9.14.0.64 13
make_toolkit "$TEST_TMP/import/cuda-13.0" 13.0.2
expect_rc 0 "$CVM" import "$TEST_TMP/machine/usr"
expect_rc 0 "$CVM" import "$TEST_TMP/import/cuda-13.0"
expect_rc 0 "$CVM" export --oci "$I/apt" 13+9.14 --tag apt
umoci_unpack "$I/apt:apt" "$TEST_TMP/bundle-apt"
A="$TEST_TMP/bundle-apt/rootfs/opt/cvm"
[[ -f $A/cudnn/9.14.0.64-cuda13/lib/libcudnn.so.9.14.0 && ! -L $A/cudnn/9.14.0.64-cuda13/lib/libcudnn.so.9.14.0 ]] ||
    fail "the assembled cuDNN's library is not a file in the image: $(ls -la "$A/cudnn/9.14.0.64-cuda13/lib" 2>&1)"
cmp "$A/cudnn/9.14.0.64-cuda13/lib/libcudnn.so.9.14.0" "$TEST_TMP/machine/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0" ||
    fail "libcudnn differs from the package's"
[[ -f $A/views/13.0.2+9.14.0.64-cuda13/include/cudnn.h ]] || fail "cudnn.h is not visible in the view"
[[ -z $(find "$TEST_TMP/bundle-apt/rootfs" -type l -lname '/*' | head -1) ]] ||
    fail "absolute links in the image: $(find "$TEST_TMP/bundle-apt/rootfs" -type l -lname '/*')"

# NCCL from NVIDIA's apt packages (libnccl2, libnccl-dev: an entry of links into the shared
# /usr/lib/x86_64-linux-gnu) on the same toolkit: the image holds NCCL's files themselves, its
# variables name the image's folders, and a program built against them with the C compiler links
# -lnccl at NCCL_LIB_DIR and runs with the image's LD_LIBRARY_PATH.
nusr="$TEST_TMP/machine-nccl/usr"
mkdir -p "$nusr/lib/x86_64-linux-gnu" "$nusr/include" "$TEST_TMP/machine-nccl/var/lib/dpkg"
$MK nccl-lib "$nusr/lib/x86_64-linux-gnu/libnccl.so.2.28.3" --version 2.28.3 --cuda 13.0
ln -s libnccl.so.2.28.3 "$nusr/lib/x86_64-linux-gnu/libnccl.so.2"
ln -s libnccl.so.2 "$nusr/lib/x86_64-linux-gnu/libnccl.so"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 3\nint ncclGetVersion(int* version);\n' > "$nusr/include/nccl.h"
printf 'Package: libnccl2\nStatus: install ok installed\nVersion: 2.28.3-1+cuda13.0\n\n' > "$TEST_TMP/machine-nccl/var/lib/dpkg/status"
expect_rc 0 "$CVM" import "$nusr"
expect_rc 0 "$CVM" export --oci "$I/nccl" 13+nccl2.28 --tag nccl
expect_rc 0 skopeo inspect "oci:$I/nccl:nccl"
assert_eq "$(jq -r '.Labels["cvm.nccl"]' <<<"$OUT")" "2.28.3-cuda13.0"
assert_eq "$(jq -r '.Labels["cvm.nccl.source"]' <<<"$OUT")" "imported from Debian's packages"
expect_rc 0 skopeo inspect --config "oci:$I/nccl:nccl"
NENV=$(jq -r '.config.Env[]' <<<"$OUT")
NVIEW=/opt/cvm/views/13.0.2+nccl2.28.3-cuda13.0
assert_contains "$NENV" "NCCL_HOME=/opt/cvm/nccl/2.28.3-cuda13.0"
assert_contains "$NENV" "NCCL_ROOT=/opt/cvm/nccl/2.28.3-cuda13.0"
assert_contains "$NENV" "NCCL_INCLUDE_DIR=$NVIEW/include"
assert_contains "$NENV" "NCCL_LIB_DIR=$NVIEW/lib64"
assert_contains "$NENV" "LD_LIBRARY_PATH=$NVIEW/lib64"
assert_not_contains "$NENV" "$TEST_TMP" "a folder of this machine in the image's environment"
umoci_unpack "$I/nccl:nccl" "$TEST_TMP/bundle-nccl"
NR="$TEST_TMP/bundle-nccl/rootfs"
lib="$NR/opt/cvm/nccl/2.28.3-cuda13.0/lib/libnccl.so.2.28.3"
[[ -f $lib && ! -L $lib ]] || fail "the assembled NCCL's library is not a file in the image: $(ls -la "$(dirname "$lib")" 2>&1)"
cmp "$lib" "$nusr/lib/x86_64-linux-gnu/libnccl.so.2.28.3" || fail "libnccl differs from the package's"
[[ -z $(find "$NR" -type l -lname '/*' | head -1) ]] || fail "absolute links in the image: $(find "$NR" -type l -lname '/*')"
[[ -z $(find "$NR" -xtype l | head -1) ]] || fail "links to nothing in the image: $(find "$NR" -xtype l)"
if command -v cc > /dev/null; then
    printf '#include <nccl.h>\n#include <stdio.h>\nint main(void) { int v = 0; ncclGetVersion(&v); printf("nccl %%d\\n", v); return v == 0; }\n' > "$TEST_TMP/nccl_version.c"
    cc -o "$TEST_TMP/nccl_version" "$TEST_TMP/nccl_version.c" -I"$NR$NVIEW/include" -L"$NR$NVIEW/lib64" -lnccl ||
        fail "cc cannot build against the image's NCCL_INCLUDE_DIR and NCCL_LIB_DIR"
    expect_rc 0 env LD_LIBRARY_PATH="$NR$NVIEW/lib64" "$TEST_TMP/nccl_version"
    assert_eq "$OUT" "nccl 22803" "ncclGetVersion of the image's library"
fi

# --runtime: no compiler, headers or static libraries; the libraries stay; says how much less.
expect_rc 0 "$CVM" export --oci "$I/one" --runtime --json
RT=$(jq -r .tag <<<"$OUT")
assert_eq "$RT" "$TAG-runtime"
(($(jq -r .left_out.bytes <<<"$OUT") > 0)) || fail "--runtime left nothing out"
(($(jq -r .layer.bytes <<<"$OUT") + $(jq -r .left_out.bytes <<<"$OUT") == $(jq -r .layer.bytes <<<"$FULL_JSON"))) ||
    fail "--runtime's files and what it left out do not add up to the whole"
expect_rc 0 "$CVM" export --oci "$I/one" --runtime
assert_contains "$ERR" "--runtime left out the compiler, headers, static libraries and samples:"
assert_eq "$(jq '.manifests | length' "$I/one/index.json")" "2" "two tags in one layout"
umoci_unpack "$I/one:$RT" "$TEST_TMP/bundle-rt"
rt="$TEST_TMP/bundle-rt/rootfs/opt/cvm"
[[ ! -e $rt/cuda/12.4.1/bin && ! -e $rt/cuda/12.4.1/include && ! -e $rt/cudnn/9.1.0.70-cuda12/include ]] ||
    fail "--runtime kept the compiler or headers"
[[ -f $rt/views/12.4.1+9.1.0.70-cuda12/lib64/libcudnn.so.9 ]] || fail "--runtime lost cuDNN"
[[ -z $(find "$rt" -xtype l | head -1) ]] || fail "--runtime left links to nothing: $(find "$rt" -xtype l)"
expect_rc 0 skopeo inspect --config "oci:$I/one:$RT"
RT_ENV=$(jq -r '.config.Env[]' <<<"$OUT")
assert_contains "$RT_ENV" "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
assert_not_contains "$RT_ENV" "CUDACXX="
assert_contains "$RT_ENV" "LD_LIBRARY_PATH=$VIEW/lib64"

# A base image made with umoci (busybox), passed through skopeo's docker-archive and back, as a
# distribution image saved with `skopeo copy` would come.
umoci init --layout "$TEST_TMP/base0" > /dev/null
umoci new --image "$TEST_TMP/base0:latest" > /dev/null
umoci_unpack "$TEST_TMP/base0:latest" "$TEST_TMP/bb"
mkdir -p "$TEST_TMP/bb/rootfs/bin"
cp "$(command -v busybox)" "$TEST_TMP/bb/rootfs/bin/busybox"
for t in sh env cat ls; do ln -s busybox "$TEST_TMP/bb/rootfs/bin/$t"; done
umoci repack --image "$TEST_TMP/base0:latest" "$TEST_TMP/bb" > /dev/null
umoci config --image "$TEST_TMP/base0:latest" --config.env PATH=/usr/bin:/bin --config.env LANG=C.UTF-8 \
    --config.cmd /bin/sh > /dev/null
skopeo copy -q "oci:$TEST_TMP/base0:latest" "docker-archive:$TEST_TMP/base.tar:busybox:latest"
skopeo copy -q "docker-archive:$TEST_TMP/base.tar" "oci:$TEST_TMP/base:bookworm"
# Stand-ins imported from folders (shell-script nvcc, so it runs in the busybox image).
make_toolkit "$TEST_TMP/import/cuda-11.8" 11.8.0
make_cudnn "$TEST_TMP/import/cudnn-8.9" 8.9.7
expect_rc 0 "$CVM" import "$TEST_TMP/import/cuda-11.8"
expect_rc 0 "$CVM" import "$TEST_TMP/import/cudnn-8.9" --cuda 11.8
expect_rc 0 "$CVM" export --oci "$I/stacked" 11.8+8.9 --base "$TEST_TMP/base:bookworm" --tag cuda11.8 --json
assert_eq "$(jq -r .base.layers <<<"$OUT")" "1"
assert_eq "$(jq -r .base.tag <<<"$OUT")" "bookworm"
expect_rc 0 skopeo inspect --config "oci:$I/stacked:cuda11.8"
ENV=$(jq -r '.config.Env[]' <<<"$OUT")
assert_contains "$ENV" "PATH=/opt/cvm/views/11.8.0+8.9.7-cuda11/bin:/usr/bin:/bin"
assert_contains "$ENV" "LANG=C.UTF-8"
assert_eq "$(jq -r '.config.Cmd[0]' <<<"$OUT")" "/bin/sh"
assert_eq "$(jq -r '.rootfs.diff_ids | length' <<<"$OUT")" "2"
expect_rc 0 skopeo inspect "oci:$I/stacked:cuda11.8"
assert_eq "$(jq -r '.Labels["cvm.cuda.source"]' <<<"$OUT")" "imported from a folder"
umoci_unpack "$I/stacked:cuda11.8" "$TEST_TMP/bundle-stacked"
[[ -x $TEST_TMP/bundle-stacked/rootfs/bin/busybox ]] || fail "the base layer is not in the image"
[[ -x $TEST_TMP/bundle-stacked/rootfs/opt/cvm/cuda/11.8.0/bin/nvcc ]] || fail "the toolkit is not in the image"
# Into the base's own layout: its blobs are used where they are, its tag stays.
expect_rc 0 "$CVM" export --oci "$TEST_TMP/base" 11.8+8.9 --base "$TEST_TMP/base:bookworm" --tag cuda11.8
assert_eq "$(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"]] | sort | join(" ")' \
    "$TEST_TMP/base/index.json")" "bookworm cuda11.8"
expect_rc 0 skopeo inspect "oci:$TEST_TMP/base:cuda11.8"
expect_rc 0 skopeo inspect "oci:$TEST_TMP/base:bookworm"

# A container engine runs a command in it, where this machine lets one start: podman (vfs
# storage, lowered limits: no CAP_SYS_RESOURCE in some VMs; runc where crun cannot), else buildah
# with chroot isolation. skopeo copies the images into the engines' storage, as for
# `enroot import podman://`.
ENGINE=""
STORAGE="vfs@$TEST_TMP/containers+$TEST_TMP/containers-run"
PODMAN=(podman --storage-driver vfs --root "$TEST_TMP/containers" --runroot "$TEST_TMP/containers-run")
PODMAN_RUN=(run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
BUILDAH=(buildah --storage-driver vfs --root "$TEST_TMP/containers" --runroot "$TEST_TMP/containers-run")
skopeo copy -q "oci:$TEST_TMP/base:bookworm" "containers-storage:[$STORAGE]localhost/base:bookworm" 2> "$TEST_TMP/podman.err" || true
skopeo copy -q "oci:$I/stacked:cuda11.8" "containers-storage:[$STORAGE]localhost/cuda:11.8" 2>> "$TEST_TMP/podman.err" || true
if command -v podman > /dev/null &&
    "${PODMAN[@]}" "${PODMAN_RUN[@]}" localhost/base:bookworm /bin/sh -c : > /dev/null 2>> "$TEST_TMP/podman.err"; then
    ENGINE=podman
elif command -v podman > /dev/null && command -v runc > /dev/null &&
    "${PODMAN[@]}" --runtime runc "${PODMAN_RUN[@]}" localhost/base:bookworm /bin/sh -c : > /dev/null 2>> "$TEST_TMP/podman.err"; then
    ENGINE=podman
    PODMAN+=(--runtime runc)
elif command -v buildah > /dev/null && ctr=$("${BUILDAH[@]}" from -q localhost/base:bookworm 2> "$TEST_TMP/buildah.err") &&
    "${BUILDAH[@]}" run --isolation chroot "$ctr" -- /bin/sh -c : 2>> "$TEST_TMP/buildah.err"; then
    ENGINE=buildah
fi
case $ENGINE in
podman)
    expect_rc 0 "${PODMAN[@]}" "${PODMAN_RUN[@]}" localhost/cuda:11.8 nvcc -c x.cu
    ;;
buildah)
    ctr=$("${BUILDAH[@]}" from -q localhost/cuda:11.8)
    expect_rc 0 "${BUILDAH[@]}" run --isolation chroot "$ctr" -- nvcc -c x.cu
    ;;
*)
    echo "note: no container engine can start a container here (podman: $(tail -1 "$TEST_TMP/podman.err" 2> /dev/null); buildah: $(tail -1 "$TEST_TMP/buildah.err" 2> /dev/null)); the image was checked with skopeo and umoci only" >&2
    ;;
esac
if [[ -n $ENGINE ]]; then
    assert_contains "$OUT" "fake nvcc 11.8.0"
    assert_contains "$OUT" "self=/opt/cvm/views/11.8.0+8.9.7-cuda11/bin/nvcc"
    assert_contains "$OUT" "CUDA_PATH=/opt/cvm/views/11.8.0+8.9.7-cuda11"
    assert_contains "$OUT" "LD_LIBRARY_PATH=/opt/cvm/views/11.8.0+8.9.7-cuda11/lib64"
    assert_contains "$OUT" "args=-c x.cu"
    echo "ran nvcc in the image with $ENGINE" >&2
fi

# Refused in one line, nothing left behind.
printf 'x' > "$TEST_TMP/afile"
expect_rc 2 "$CVM" export --oci "$TEST_TMP/afile"
assert_contains "$ERR" "$TEST_TMP/afile is a file, not an OCI image layout"
assert_eq "$(cat "$TEST_TMP/afile")" "x"
mkdir -p "$TEST_TMP/src/lib"
expect_rc 2 "$CVM" export --oci "$TEST_TMP/src"
assert_contains "$ERR" "is a folder holding lib, not an OCI image layout"
assert_eq "$(ls -A "$TEST_TMP/src")" "lib"
expect_rc 1 "$CVM" export --oci "$I/none" 10.2 --json
assert_eq "$(jq -r .error.code <<<"$OUT")" "not_installed"
[[ ! -e $I/none ]] || fail "an export of nothing installed made $I/none"
expect_rc 2 "$CVM" export --oci "$I/badtag" --tag '12.4+9'
assert_contains "$ERR" "'12.4+9' is not a valid --tag"
expect_rc 2 "$CVM" export --oci "$I/nobase" --base "$TEST_TMP/base:sid"
assert_contains "$ERR" "has no image tagged 'sid' (tags: "
expect_rc 2 "$CVM" export --oci "$I/nobase" --base "$TEST_TMP/base"
assert_contains "$ERR" "holds 2 images"
expect_rc 2 "$CVM" export lmod "$TEST_TMP/modules" --runtime
assert_contains "$ERR" "go with --oci"
expect_rc 2 "$CVM" export --oci "$I/x" 12.4 extra
assert_contains "$ERR" "unexpected argument 'extra'"
[[ -z $(ls -A "$I" | grep -E '^\.|^(none|badtag|nobase|x)$') ]] || fail "refused exports left: $(ls -A "$I")"

# A full disk, at the first write and later, into a new layout and into an existing one.
command -v cc > /dev/null || skip "no C compiler for the fault-injection library"
FAULT="$TEST_TMP/write_fault.so"
cc -shared -fPIC -O1 -o "$FAULT" "$CVM_SOURCE_DIR/tests/fault/write_fault.c" -ldl
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
FULL="$TEST_TMP/full"
mkdir -p "$FULL"
for nth in 1 3; do
    expect_rc 1 env CVM_FAULT_DIR="$FULL" CVM_FAULT_NTH=$nth CVM_FAULT_ALL=1 LD_PRELOAD="$FAULT" \
        "$CVM" export --oci "$FULL/new/image" --json
    assert_eq "$(jq -r .error.code <<<"$OUT")" "no_space"
    assert_contains "$ERR" "cannot write $FULL/new/image: the disk is full ("
    assert_contains "$ERR" " MB free in $FULL); free some space"
    assert_eq "$(ls -A "$FULL")" "" "after a full disk (write $nth)"
done
# An empty folder (a mount point, say) is filled in place, and emptied again on failure.
mkdir "$FULL/empty"
for nth in 1 3; do
    expect_rc 1 env CVM_FAULT_DIR="$FULL" CVM_FAULT_NTH=$nth CVM_FAULT_ALL=1 LD_PRELOAD="$FAULT" \
        "$CVM" export --oci "$FULL/empty"
    assert_contains "$ERR" "cannot write $FULL/empty: the disk is full"
    assert_eq "$(ls -A "$FULL/empty")" "" "the empty folder after a full disk (write $nth)"
done
expect_rc 0 "$CVM" export --oci "$FULL/empty" --json
assert_eq "$(jq -r .manifest <<<"$OUT")" "$DIGEST"
expect_rc 0 skopeo inspect "oci:$FULL/empty:$TAG"
rm -rf "$FULL/empty"
cp -r "$I/one" "$FULL/layout"
snapshot() { (cd "$FULL/layout" && find . -type f -exec sha256sum {} + | sort); }
before=$(snapshot)
for nth in 1 2 4; do
    expect_rc 1 env CVM_FAULT_DIR="$FULL" CVM_FAULT_NTH=$nth CVM_FAULT_ALL=1 LD_PRELOAD="$FAULT" \
        "$CVM" export --oci "$FULL/layout" --tag other
    assert_contains "$ERR" "the disk is full"
    assert_eq "$(snapshot)" "$before" "the layout after a full disk (write $nth)"
done
expect_rc 1 env CVM_FAULT_DIR="$FULL" CVM_FAULT_NTH=2 CVM_FAULT_ERRNO=EIO LD_PRELOAD="$FAULT" \
    "$CVM" export --oci "$FULL/layout" --tag other
assert_contains "$ERR" "cannot write $FULL/layout: input/output error"
assert_eq "$(snapshot)" "$before" "the layout after an I/O error"

# A real small disk, where mounting is allowed: the layer does not fit.
SMALL="$TEST_TMP/small"
mkdir -p "$SMALL"
if mount -t tmpfs -o size=1m tmpfs "$SMALL" 2> /dev/null; then
    trap 'umount "$SMALL" 2> /dev/null || true; cleanup_test_tmp' EXIT
    make_toolkit "$TEST_TMP/import/cuda-12.0" 12.0.1
    head -c 3000000 /dev/urandom > "$TEST_TMP/import/cuda-12.0/lib64/libbig.so"
    expect_rc 0 "$CVM" import "$TEST_TMP/import/cuda-12.0"
    expect_rc 1 "$CVM" export --oci "$SMALL/image" 12.0 --json
    assert_eq "$(jq -r .error.code <<<"$OUT")" "no_space"
    assert_contains "$ERR" "cannot write $SMALL/image: the disk is full"
    assert_eq "$(ls -A "$SMALL")" "" "the tmpfs after the failure"
    umount "$SMALL"
    trap cleanup_test_tmp EXIT
else
    echo "note: cannot mount a tmpfs here; the full-disk case runs with injected faults only" >&2
fi

# Ctrl-C while the layer is written: the staging folder goes at once. The layer's first write
# waits for the test's go, given only after the signal: the export cannot end before it.
for sig in INT TERM; do
    CVM_FAULT_DIR="$FULL" CVM_FAULT_NTH=0 CVM_FAULT_HOLD="$TEST_TMP/go-$sig" LD_PRELOAD="$FAULT" \
        "$CVM_BIN/cvm-install" export --oci "$FULL/slow" 2> "$TEST_TMP/err" &
    pid=$!
    layer_begun() { [[ -n $(find "$FULL" -name '.layer.tmp*' 2> /dev/null | head -1) ]]; }
    wait_running "$pid" 300 layer_begun
    layer_begun || fail "the export never started writing: $(cat "$TEST_TMP/err")"
    kill -"$sig" "$pid"
    touch "$TEST_TMP/go-$sig"
    finish "$pid" 120 "cvm-install export after SIG$sig"
    assert_eq "$RC" "$((128 + $(kill -l "$sig")))" "exit status after SIG$sig"
    assert_eq "$(ls -A "$FULL" | grep -v '^layout$' || true)" "" "$FULL right after SIG$sig"
done
echo "image_oci: ok${ENGINE:+ (ran in $ENGINE)}"
