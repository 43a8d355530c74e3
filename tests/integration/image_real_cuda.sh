#!/usr/bin/env bash
# cvm export --oci of the real CUDA 13.0 toolkit with cuDNN 9.19 inside it (/usr/local/cuda-13.0,
# assembled from NVIDIA's wheels): the layer holds the real files (nvcc runs from it, cuDNN's
# libraries are the same bytes), skopeo reads the image, the environment names its folders.
source "$(dirname "$0")/lib.sh"
real=/usr/local/cuda-13.0
[[ -x $real/bin/nvcc ]] || skip "$real is absent"
need_tools skopeo jq
export CVM_PROGRESS=plain
unset SOURCE_DATE_EPOCH
expect_rc 0 "$CVM" import "$real"
cd "$TEST_TMP"
expect_rc 0 "$CVM" export --oci "$TEST_TMP/image" 13+9.19 --json
DOC=$OUT
TAG=$(jq -r .tag <<<"$DOC")
[[ $TAG == cuda13.0.*-cudnn9.19.0.56-cuda13 ]] || fail "tag $TAG"
id=$(jq -r '.selection | split("+")[0]' <<<"$DOC")
echo "exported $(jq -r '.layer.files' <<<"$DOC") files, $(jq -r '.layer.bytes' <<<"$DOC") bytes, layer $(jq -r '.layer.size' <<<"$DOC") bytes" >&2
expect_rc 0 skopeo inspect --config "oci:$TEST_TMP/image:$TAG"
ENV=$(jq -r '.config.Env[]' <<<"$OUT")
# cuDNN lives inside the toolkit's folder: no view, CUDA_PATH and CUDNN_PATH are the toolkit's.
assert_contains "$ENV" "CUDA_PATH=/opt/cvm/cuda/$id"
assert_contains "$ENV" "CUDNN_PATH=/opt/cvm/cuda/$id"
assert_contains "$ENV" "LD_LIBRARY_PATH=/opt/cvm/cuda/$id/lib"
assert_contains "$ENV" "CUDACXX=/opt/cvm/cuda/$id/bin/nvcc"
assert_not_contains "$ENV" "$CVM_ROOT" "a folder of this machine in the image's environment"
assert_contains "$ENV" "NVIDIA_REQUIRE_CUDA=cuda>=13.0"
assert_eq "$(jq -r '.config.Labels["cvm.cudnn.source"]' <<<"$OUT")" "imported from a folder"
assert_not_contains "$(jq -r '.config.Labels | tostring' <<<"$OUT")" "$real" "a folder of this machine in the labels"
# The layer unpacked is the toolkit itself: the same files, bytes and links.
LAYER=$(jq -r .layer.digest <<<"$DOC")
mkdir -p "$TEST_TMP/x"
gzip -dc "$TEST_TMP/image/blobs/sha256/${LAYER#sha256:}" | tar -xf - -C "$TEST_TMP/x"
diff -r --no-dereference "$real" "$TEST_TMP/x/opt/cvm/cuda/$id" > "$TEST_TMP/diff" 2>&1 ||
    fail "the layer differs from $real: $(head -5 "$TEST_TMP/diff")"
assert_eq "$(readlink "$TEST_TMP/x/opt/cvm/cuda/$id/lib64")" "lib"
expect_rc 0 "$TEST_TMP/x/opt/cvm/cuda/$id/bin/nvcc" --version
assert_contains "$OUT" "release 13.0"
if [[ $(id -u) == 0 ]]; then # tar keeps the owners only for root
    [[ -z $(find "$TEST_TMP/x" ! -user 0 -o ! -group 0 | head -1) ]] || fail "files not owned by 0:0"
fi
echo "image_real_cuda: ok ($TAG, $(jq -r .layer.size <<<"$DOC") bytes)"
