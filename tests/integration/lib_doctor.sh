# Helpers for the doctor integration tests (sourced after lib.sh): toolkits and cuDNN builds
# made of real shared objects built by the compiler, and a machine isolated from the host's
# loader cache, driver and Python through cvm doctor's override variables.

CC_BIN=${CC:-$(command -v cc || command -v gcc || command -v clang || true)}
[[ -n "$CC_BIN" ]] || skip "no C compiler to build the fake libraries"

mkdir -p "$TEST_TMP/proto"
echo 'int cvm_doctor_proto(void) { return 1; }' > "$TEST_TMP/proto/proto.c"

# so DIR LINK REAL: DIR/REAL is a real ELF shared object whose SONAME is LINK (as ldconfig
# expects), DIR/LINK a symbolic link to it. One compile per SONAME, then copies.
so() {
    local proto="$TEST_TMP/proto/$2"
    if [[ ! -f "$proto" ]]; then
        "$CC_BIN" -shared -fPIC -o "$proto" "$TEST_TMP/proto/proto.c" -Wl,-soname,"$2" \
            || fail "cannot build a shared object with $CC_BIN"
    fi
    mkdir -p "$1"
    cp "$proto" "$1/$3"
    ln -sf "$3" "$1/$2"
}

# vso DIR FILE [SYMBOL VALUE]: a shared object (SONAME FILE) exporting `const unsigned SYMBOL =
# VALUE` (the version datum of cuDNN's sub-libraries), or nothing of the kind.
vso() {
    mkdir -p "$1" "$TEST_TMP/vso"
    local c="$TEST_TMP/vso/$2.c"
    if [[ -n ${3:-} ]]; then echo "const unsigned $3 = $4;" > "$c"; else echo 'int cvm_plain(void) { return 0; }' > "$c"; fi
    "$CC_BIN" -shared -fPIC -o "$1/$2" "$c" -Wl,-soname,"$2" || fail "cannot build $2"
}

# wheel_record SITE DIST-VERSION FILE...: SITE/DIST-VERSION.dist-info/RECORD listing each FILE
# (relative to SITE) with its sha256 in urlsafe base64 and its size, as pip writes it.
wheel_record() {
    local site=$1 dist=$2
    shift 2
    mkdir -p "$site/$dist.dist-info"
    python3 - "$site" "$@" > "$site/$dist.dist-info/RECORD" <<'PY' || fail "cannot write RECORD"
import base64, hashlib, os, sys
site = sys.argv[1]
for rel in sys.argv[2:]:
    data = open(os.path.join(site, rel), "rb").read()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    print(f"{rel},sha256={digest},{len(data)}")
PY
    echo "$dist.dist-info/RECORD,," >> "$site/$dist.dist-info/RECORD"
}

# doctor_toolkit DIR VERSION CUDART_FILE_VERSION: a toolkit with nvcc, cuda.h, version.json and
# libcudart / libcublas of the right names (CUDA 11.x naming: libcudart.so.11.0, libcublas.so.11).
doctor_toolkit() {
    local dir=$1 version=$2 cudart=$3
    local major=${version%%.*} rest=${version#*.}
    local minor=${rest%%.*}
    mkdir -p "$dir/bin" "$dir/include" "$dir/lib64"
    printf '{"cuda":{"name":"CUDA SDK","version":"%s"}}\n' "$version" > "$dir/version.json"
    printf '#define CUDA_VERSION %d\n' $((major * 1000 + minor * 10)) > "$dir/include/cuda.h"
    printf '#!/bin/sh\necho "Cuda compilation tools, release %s.%s, V%s"\n' "$major" "$minor" "$cudart" \
        > "$dir/bin/nvcc"
    chmod +x "$dir/bin/nvcc"
    local soname=$major
    [[ $major == 11 ]] && soname=11.0
    so "$dir/lib64" "libcudart.so.$soname" "libcudart.so.$cudart"
    so "$dir/lib64" "libcublas.so.$major" "libcublas.so.$major.1.0"
    so "$dir/lib64" "libcublasLt.so.$major" "libcublasLt.so.$major.1.0"
}

# doctor_cudnn8 DIR HEADER_VERSION LIB_VERSION: a cuDNN 8 build (main and six sub-libraries).
doctor_cudnn8() {
    local dir=$1 header=$2 lib=$3
    IFS=. read -r ma mi pa <<<"$header"
    mkdir -p "$dir/include" "$dir/lib"
    printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n' \
        "$ma" "$mi" "$pa" > "$dir/include/cudnn_version.h"
    : > "$dir/include/cudnn.h"
    local l
    for l in libcudnn libcudnn_ops_infer libcudnn_ops_train libcudnn_cnn_infer libcudnn_cnn_train \
             libcudnn_adv_infer libcudnn_adv_train; do
        so "$dir/lib" "$l.so.8" "$l.so.$lib"
    done
}

# The machine as the doctor sees it: no loader cache, one "system" folder, a driver that fits.
export CVM_LD_SO_CACHE=""
export CVM_LD_DEFAULT_DIRS="$TEST_TMP/system/lib"
mkdir -p "$TEST_TMP/system/lib"
export CVM_PROC_DRIVER_VERSION="$TEST_TMP/proc-driver-version"
export CVM_NVIDIA_SMI="$TEST_TMP/nvidia-smi"
export CVM_LIBCUDA=""   # the machine's own libcuda.so.1 is not read
# The host compiler nvcc would use: a gcc every toolkit of the tests supports, not the machine's.
mkdir -p "$TEST_TMP/host-cc"
printf '#!/bin/sh\necho "gcc (GCC) 7.5.0"\necho "Copyright (C) 2017 Free Software Foundation, Inc."\n' > "$TEST_TMP/host-cc/gcc"
chmod +x "$TEST_TMP/host-cc/gcc"
export CVM_COMPILER_PATH="$TEST_TMP/host-cc"
export CVM_PYTHON=""
unset LD_LIBRARY_PATH || true

fake_driver 525.60.13

# fake_gpu NAME CC: nvidia-smi answers the compute capability query with CC, others with a
# 580.65.06 driver.
fake_gpu() {
    printf '#!/bin/sh\ncase "$1" in\n--query-gpu=name,compute_cap) echo "%s, %s" ;;\n*) echo "%s, 580.65.06" ;;\nesac\n' \
        "$1" "$2" "$1" > "$CVM_NVIDIA_SMI"
    chmod +x "$CVM_NVIDIA_SMI"
}

# finding_message CODE: the message of the first finding with that code.
finding_message() { json_get "[f['message'] for f in d['findings'] if f['code'] == '$1'][0]"; }
# finding_codes: the findings' "severity:code" pairs, space separated.
finding_codes() { json_get '" ".join(f["severity"] + ":" + f["code"] for f in d["findings"])'; }
