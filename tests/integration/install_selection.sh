#!/usr/bin/env bash
# The install flow around the selection: bare `cvm install` installs what .cudaversion selects,
# `cvm use SPEC --install` installs then writes, the registry answers before the network
# (nothing requested from the mirror), partial versions get the full version's answer, and
# failures under --json name their code (network, checksum) with a real NVIDIA manifest.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
requests() { grep -c . "$HTTP_LOG" || true; }

M="$TEST_TMP/mirror"
R="$M/cuda/redist"
entries=()
for c in "cuda_nvcc 12.4.131 --tool bin/nvcc" "cuda_cudart 12.4.127 --lib libcudart.so --cuda-h 12.4"; do
    read -r key version args <<<"$c"
    top="$key-linux-x86_64-$version-archive"
    mkdir -p "$R/$key/linux-x86_64"
    # shellcheck disable=SC2086
    $MK component "$R/$key/linux-x86_64/$top.tar.xz" --folder "$top" $args
    entries+=(--entry "$key=$version=$key/linux-x86_64/$top.tar.xz")
done
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${entries[@]}"
D="$M/cudnn/redist"
mkdir -p "$D/cudnn/linux-x86_64"
$MK cudnn-redist "$D/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz" --version 9.1.0
$MK manifest "$D/redistrib_9.1.0.json" --product cudnn --base "$D" \
    --entry "cudnn=9.1.0.70=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz=12"
# NVIDIA's own cuDNN 8.9.7 manifest, with an archive of our own where it points: not its sum.
cp "$CVM_SOURCE_DIR/tests/fixtures/redist/cudnn/redistrib_8.9.7.json" "$D/"
$MK cudnn-redist "$D/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz" --version 8.9.7
start_server "$M"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=1

# ---- the registry answers first: RC|CODE|message contains|ARGS..., no request made ---------
S=$'\x1f'
refused=(
    "2${S}not_found${S}cuDNN 8.9.7.29 has no build for CUDA 13${S}cudnn${S}8.9${S}--cuda${S}13"
    "2${S}not_found${S}no cuDNN 8.9 in cvm's release list supports CUDA 13${S}13+8.9"
    "2${S}not_found${S}no cuDNN 8.1 in cvm's release list supports CUDA 12.4.1${S}12.4+8.1"
    "2${S}not_installable${S}CUDA 10.1.168 has no redistributable manifest${S}10.1.168+7.6.5"
    "2${S}not_installable${S}CUDA 10.1.168 has no redistributable manifest${S}cuda${S}10.1.168"
    "2${S}not_found${S}cuDNN 8.1.1.33 has no build for CUDA 12 (its builds are for CUDA 10.2, 11.2)${S}cudnn${S}8.1${S}--cuda${S}12"
    "2${S}not_found${S}CUDA 12.99 is not in cvm's release list${S}12.99"
)
for row in "${refused[@]}"; do
    IFS=$S read -r -a f <<<"$row"
    expect_rc "${f[0]}" "$CVM" install "${f[@]:3}" --json
    assert_eq "$(json_get 'd["error"]["code"]')" "${f[1]}" "code of cvm install ${f[*]:3}"
    assert_contains "$(json_get 'd["error"]["message"]')" "${f[2]}" "cvm install ${f[*]:3}"
    assert_eq "$(requests)" 0 "cvm install ${f[*]:3} went to the mirror: $(cat "$HTTP_LOG")"
done
assert_store cuda ""

# ---- bare `cvm install`: what the selection here names ---------------------------------------
proj=$TEST_TMP/proj
mkdir -p "$proj/sub"
cd "$proj/sub"
expect_rc 2 "$CVM" install
assert_contains "$ERR" "nothing is selected here to install"
echo "12.4+9.1.0 # the project's toolchain" > "$proj/.cudaversion"
expect_rc 0 "$CVM" install --json
assert_eq "$(json_get '[(e["kind"], e["id"], e["already_installed"]) for e in d["installed"]]')" \
    "[('cuda', '12.4.1', False), ('cudnn', '9.1.0.70-cuda12', False)]"
assert_store cuda "12.4.1"
assert_store cudnn "9.1.0.70-cuda12"
expect_rc 0 "$CVM" install --json
assert_eq "$(json_get 'd["installed"]')" "[]"
assert_contains "$ERR" "already installed"
expect_rc 0 "$CVM" current
assert_contains "$OUT" "12.4.1+9.1.0.70-cuda12"
echo system > "$proj/.cudaversion"
expect_rc 0 "$CVM" install
assert_contains "$ERR" "nothing to install"

# ---- use --install: installs what is missing, then writes ------------------------------------
expect_rc 0 "$CVM" uninstall 9.1.0.70-cuda12
expect_rc 0 "$CVM" uninstall 12.4.1
cd "$proj"
expect_rc 0 "$CVM" use 12.4+9.1.0 --install --json
assert_eq "$(json_get '(d["spec"], d["active"], [e["id"] for e in d["installed"]])')" \
    "('12.4+9.1.0', '12.4.1+9.1.0.70-cuda12', ['12.4.1', '9.1.0.70-cuda12'])"
assert_eq "$(cat .cudaversion)" "12.4+9.1.0"
expect_rc 0 "$CVM" use -g 12 --install
assert_eq "$(cat "$CVM_ROOT/version")" "12"
assert_contains "$ERR" "already installed"
# A failed install writes nothing: the mirror has no cuDNN 9.2.
expect_rc 1 "$CVM" use 12.4+9.2 --install --json
assert_eq "$(json_get 'd["error"]["code"]')" "network"
assert_contains "$(json_get 'd["error"]["message"]')" "redistrib_9.2."
assert_eq "$(cat .cudaversion)" "12.4+9.1.0" ".cudaversion after a failed use --install"
assert_store cudnn "9.1.0.70-cuda12"
expect_rc 2 "$CVM" use --install
assert_contains "$ERR" "--install needs a SPEC"

# ---- failures named by their code -------------------------------------------------------------
expect_rc 1 "$CVM" install cudnn 8.9.7 --cuda 12 --json
assert_eq "$(json_get 'd["error"]["code"]')" "checksum"
stop_server
expect_rc 1 "$CVM" install cudnn 8.9.7 --cuda 11 --json
assert_eq "$(json_get 'd["error"]["code"]')" "network"
assert_store cudnn "9.1.0.70-cuda12"
echo ok
