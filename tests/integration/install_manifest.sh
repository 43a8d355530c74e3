#!/usr/bin/env bash
# cvm install cuda/cudnn/SPEC from NVIDIA-style manifests served over HTTP on loopback
# (CVM_MIRROR): components merged into one toolkit, checksums, 404, a server that dies
# mid-file (resumed with Range), a stalled server (timeout), unknown components.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
M="$TEST_TMP/mirror"
R="$M/cuda/redist"
mkdir -p "$R" "$M/cudnn/redist"
comp() { redist_component "$R" "$@"; }
ENTRIES=()
comp cuda_nvcc 12.4.131 --tool bin/nvcc --tool bin/ptxas --header crt/host_defines.h --big 2
comp cuda_cudart 12.4.127 --lib libcudart.so --header cuda_runtime.h --cuda-h 12.4
comp cuda_cccl 12.4.127 --header thrust/version.h
comp libcublas 12.4.5.8 --lib libcublas.so --header cublas_v2.h
comp cuda_gdb 12.4.127 --tool bin/cuda-gdb
$MK manifest "$R/redistrib_12.4.1.json" --product cuda --base "$R" "${ENTRIES[@]}"
# cuDNN 9.1.0 for CUDA 11 and 12.
mkdir -p "$M/cudnn/redist/cudnn/linux-x86_64"
for v in 11 12; do
    $MK cudnn-redist "$M/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda$v-archive.tar.xz" --version 9.1.0
done
$MK manifest "$M/cudnn/redist/redistrib_9.1.0.json" --product cudnn --base "$M/cudnn/redist" \
    --entry "cudnn=9.1.0.70=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz=11" \
    --entry "cudnn=9.1.0.70=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz=12"

# The nvcc archive dies twice mid-file, then is resumed with Range.
start_server "$M" "/cuda/redist/cuda_nvcc/*=die:300000,times=2"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" CVM_RETRY_DELAY_MS=50
expect_rc 0 "$CVM" install cuda 12.4.1
root="$CVM_ROOT/cuda/12.4.1/root"
for f in bin/nvcc bin/ptxas lib/libcudart.so include/thrust/version.h include/cublas_v2.h include/cuda.h version.json; do
    [[ -e $root/$f ]] || fail "toolkit lacks $f"
done
[[ ! -e $root/bin/cuda-gdb ]] || fail "cuda_gdb is not a default component"
[[ -L $root/lib64 ]] || fail "no lib64 link"
[[ -f $root/licenses/cuda_nvcc/LICENSE ]] || fail "licenses not kept per component"
assert_contains "$(cat "$root/version.json")" '"version": "12.4.1"'
grep -q "bytes=300000-" "$HTTP_LOG" || fail "nvcc was not resumed with Range: $(cat "$HTTP_LOG")"
assert_contains "$(cat "$CVM_ROOT/cuda/12.4.1/entry")" "component=libcublas"
CVM_VERSION=12.4.1 expect_rc 0 "$CVM" which nvcc
assert_contains "$OUT" "$root/bin/nvcc"

# Unknown component: named, with what exists.
expect_rc 0 "$CVM" install cuda 12.4.1
assert_contains "$ERR" "already installed"
expect_rc 0 "$CVM" uninstall 12.4.1
expect_rc 2 "$CVM" install cuda 12.4.1 --components cuda_nvcc,cublas
assert_contains "$ERR" '"cublas"'
assert_contains "$ERR" "libcublas"
expect_rc 0 "$CVM" install cuda 12.4.1 --components cuda_nvcc,cuda_gdb
[[ -e $CVM_ROOT/cuda/12.4.1/root/bin/cuda-gdb ]] || fail "--components ignored"
[[ ! -e $CVM_ROOT/cuda/12.4.1/root/include/cublas_v2.h ]] || fail "--components ignored"
expect_rc 0 "$CVM" uninstall 12.4.1

# cuDNN by version for a CUDA major; then a spec installs what is missing.
expect_rc 0 "$CVM" install cudnn 9.1.0 --cuda 12
assert_store cudnn "9.1.0.70-cuda12"
expect_rc 0 "$CVM" install 12.4+9.1
assert_store cuda "12.4.1"
assert_store cudnn "9.1.0.70-cuda12"
expect_rc 0 "$CVM" install 12.4+9.1
expect_rc 2 "$CVM" install cudnn 9.1.0 --cuda 10
assert_contains "$ERR" "its builds are for CUDA 11, 12"

# A wrong checksum in the manifest: refused before extraction, store unchanged.
cp "$R/redistrib_12.4.1.json" "$TEST_TMP/good.json"
python3 - "$R/redistrib_12.4.1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["cuda_cccl"]["linux-x86_64"]["sha256"] = "0" * 64
json.dump(d, open(sys.argv[1], "w"))
PY
python3 - "$R" <<'PY'
import json, os, sys
src = os.path.join(sys.argv[1], "redistrib_12.4.1.json")
d = json.load(open(src))
d["release_label"] = "12.5.0"
json.dump(d, open(os.path.join(sys.argv[1], "redistrib_12.5.0.json"), "w"))
PY
rm -rf "$CVM_ROOT/cache"
expect_rc 1 "$CVM" install cuda 12.5.0
assert_contains "$ERR" "checksum mismatch"
assert_store cuda "12.4.1"
[[ ! -e $CVM_ROOT/cache/downloads/cuda_cccl-linux-x86_64-12.4.127-archive.tar.xz ]] || fail "bad file kept in the cache"
cp "$TEST_TMP/good.json" "$R/redistrib_12.4.1.json"

# A version the mirror does not have: 404 named.
expect_rc 1 "$CVM" install cuda 12.9.9
assert_contains "$ERR" "404"
assert_contains "$ERR" "redistrib_12.9.9.json"

# nvcc's build number (`nvcc --version`: "release 11.8, V11.8.89") is no toolkit release: one line
# naming the release, exit 2, and no manifest is asked for (issue 35). A small update number cvm
# does not know (12.9.9 above) is still tried: it may be a release.
: > "$HTTP_LOG"
expect_rc 2 "$CVM" install 11.8.89
assert_eq "$ERR" "cvm: 11.8.89 is nvcc's build number of CUDA 11.8; run \`cvm install 11.8\`"
expect_rc 2 "$CVM" install cuda 11.8.89
assert_eq "$ERR" "cvm: 11.8.89 is nvcc's build number of CUDA 11.8; run \`cvm install 11.8\`"
expect_rc 2 "$CVM" install 12.4.131+9.1
assert_eq "$ERR" "cvm: 12.4.131 is nvcc's build number of CUDA 12.4; run \`cvm install 12.4\`"
# The nvcc of an update that is not the newest of its minor: that update, in full.
expect_rc 2 "$CVM" install 12.4.99
assert_eq "$ERR" "cvm: 12.4.99 is nvcc's build number of CUDA 12.4.0; run \`cvm install 12.4.0\`"
# A build number of a minor the registry does not know: by NVIDIA's numbering.
expect_rc 2 "$CVM" install --json 13.7.40
assert_contains "$OUT" '"code": "invalid_input"'
assert_contains "$ERR" "13.7.40 looks like nvcc's build number of CUDA 13.7"
assert_contains "$ERR" "\`cvm update\` (cvm knows no CUDA 13.7 yet), then \`cvm install 13.7\`"
# From .cudaversion (a bare `cvm install`) too; `cvm use` names the spec to write instead.
mkdir -p "$TEST_TMP/nvccproj"
printf '11.8.89\n' > "$TEST_TMP/nvccproj/.cudaversion"
(cd "$TEST_TMP/nvccproj" && expect_rc 2 "$CVM" install && assert_contains "$ERR" "11.8.89 is nvcc's build number of CUDA 11.8" &&
    expect_rc 2 "$CVM" use 11.8.89+9.1 &&
    assert_eq "$ERR" "cvm use: 11.8.89 is nvcc's build number of CUDA 11.8; nothing written; run \`cvm use 11.8+9.1\`" &&
    assert_eq "$(cat .cudaversion)" "11.8.89")
assert_store cuda "12.4.1"
assert_eq "$(grep -c redistrib_ "$HTTP_LOG")" 0 "manifests asked for an nvcc build number: $(cat "$HTTP_LOG")"
# Before 11.0 a toolkit took nvcc's number: 10.2.89 is a release, its installer looked for.
expect_rc 1 "$CVM" install 10.2.89
assert_contains "$ERR" "NVIDIA's checksums of CUDA 10.2.89"
assert_not_contains "$ERR" "nvcc's build number"

# A stalled server: the stall timeout ends it (the stall outlasts the server, which exits after
# 300 s: only the stall timeout says "stalled").
stop_server
start_server "$M" "/cudnn/redist/cudnn/*=stall:1000:3600"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
CVM_STALL_TIMEOUT=1 CVM_RETRIES=0 expect_rc 1 "$CVM" install cudnn 9.1.0 --cuda 11
assert_contains "$ERR" "stalled"
assert_store cudnn "9.1.0.70-cuda12"

# Plain http to another host is refused.
CVM_MIRROR="http://example.invalid/compute" expect_rc 2 "$CVM" install cuda 12.5.0
assert_contains "$ERR" "only used for this machine"
# An archive by URL: the checksum given is checked before extraction.
stop_server
start_server "$M"
url="http://127.0.0.1:$HTTP_PORT/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz"
expect_rc 1 "$CVM" install "$url" --sha256 "$(printf '0%.0s' {1..64})"
assert_contains "$ERR" "checksum mismatch"
assert_store cudnn "9.1.0.70-cuda12"
sum=$(sha256sum "$M/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda11-archive.tar.xz" | cut -c1-64)
expect_rc 0 "$CVM" install "$url" --sha256 "$sum"
assert_store cudnn "9.1.0.70-cuda11 9.1.0.70-cuda12"

# A folder mirror (file://): no copy into the cache, checksums still checked.
expect_rc 0 "$CVM" uninstall 9.1.0.70-cuda12
rm -rf "$CVM_ROOT/cache"
CVM_MIRROR="file://$M" expect_rc 0 "$CVM" install cudnn 9.1.0 --cuda 12
assert_store cudnn "9.1.0.70-cuda11 9.1.0.70-cuda12"
[[ -z $(ls -A "$CVM_ROOT/cache/downloads" 2>/dev/null | grep -v '\.lock$') ]] || fail "a file:// mirror was copied into the cache"

# Two components whose archives have one file name (in different folders) would overwrite each
# other in the download cache: the manifest is refused before anything is downloaded.
ENTRIES=()
D="$M/cuda/redist/dup"
redist_component "$D" cuda_nvcc 12.6.77 --tool bin/nvcc
redist_component "$D" cuda_cudart 12.6.77 --lib libcudart.so --cuda-h 12.6
mkdir -p "$M/cuda/redist/other/linux-x86_64"
cp "$D/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.6.77-archive.tar.xz" \
    "$M/cuda/redist/other/linux-x86_64/cuda_cudart-linux-x86_64-12.6.77-archive.tar.xz"
$MK manifest "$M/cuda/redist/redistrib_12.6.2.json" --product cuda --base "$M/cuda/redist" \
    --entry "cuda_nvcc=12.6.77=dup/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.6.77-archive.tar.xz" \
    --entry "cuda_cudart=12.6.77=other/linux-x86_64/cuda_cudart-linux-x86_64-12.6.77-archive.tar.xz" \
    --entry "cuda_cccl=12.6.77=dup/cuda_cudart/linux-x86_64/cuda_cudart-linux-x86_64-12.6.77-archive.tar.xz"
rm -rf "$CVM_ROOT/cache"
CVM_MIRROR="file://$M" expect_rc 2 "$CVM" install cuda 12.6.2 --components cuda_nvcc,cuda_cudart,cuda_cccl
assert_contains "$ERR" "names two archives of one file name"
[[ ! -e $CVM_ROOT/cuda/12.6.2 ]] || fail "a manifest with colliding names was installed"
[[ -z $(ls -A "$CVM_ROOT/cache/downloads" 2>/dev/null | grep -v '\.lock$') ]] || fail "colliding archives were downloaded"
echo PASS
