# NVIDIA's real wheels from PyPI, for tests that need their layouts (sourced after lib.sh).
# A wheel is downloaded once into $CVM_TEST_CACHE/wheels/NAME/VERSION/ and kept; a virtual
# environment with a set of wheels installed by pip, as a user installs them, is made once into
# $CVM_TEST_CACHE/venvs/KEY/ and kept (made beside and renamed into place, so a killed run leaves
# none half-made). With no registry and no cache the test skips, saying so, but fails under
# scripts/test.sh (CVM_TEST_DEPS=installed): CI reaches PyPI.

# The releases the registry served when these tests were written (2026-12): pinned, so the cache
# is reused and every run sees the same files.
NCCL_CU13=nvidia-nccl-cu13==2.32.6
NCCL_CU12=nvidia-nccl-cu12==2.32.3
CUDNN_CU13=nvidia-cudnn-cu13==9.28.1.4
CUDNN_CU12=nvidia-cudnn-cu12==9.28.0.42
CUDA_RUNTIME_13=nvidia-cuda-runtime==13.5.37
CUDA_NVCC_13=nvidia-cuda-nvcc==13.5.37
CUDA_CCCL_13=nvidia-cuda-cccl==13.3.5.0.6
CUDA_NVVM_13=nvidia-nvvm==13.5.37
CUDA_CRT_13=nvidia-cuda-crt==13.5.37
CUDA_RUNTIME_12=nvidia-cuda-runtime-cu12==12.9.79
# PyTorch with the nvidia-* wheels it pins (cuDNN 9.26.0.51, NCCL 2.30.7, CUDA 13.2's libraries).
TORCH=torch==2.15.0
# JAX with its CUDA 13 plugin (jaxlib, jax-cuda13-plugin, jax-cuda13-pjrt) and the one NVIDIA wheel
# the tests need of it, its cuDNN (a release its plugin accepts: nvidia-cudnn-cu13>=9.12.0.46), which
# brings cuBLAS and NVRTC: a 1.3 GB download, 2.6 GB installed. jax[cuda13] would add every other
# CUDA 13 library wheel (cuFFT, cuSOLVER, NCCL, nvcc, ...), which the plugin's preload skips when
# absent. jax 0.10.2: the newest PyPI serves for Python 3.11 (2026-12).
JAX=('jax[cuda13-local]==0.10.2' nvidia-cudnn-cu13==9.26.0.51)
# The same for CUDA 12 (its plugin was built with cuDNN 9.8: nvidia-cudnn-cu12<10.0,>=9.8; 1.7 GB),
# and an older cuDNN for CUDA 12 than that, which XLA refuses (0.55 GB; no cuDNN for CUDA 13 is older
# than 9.12, the CUDA 13 plugin's build).
JAX_CUDA12=('jax[cuda12-local]==0.10.2' nvidia-cudnn-cu12==9.26.0.51)
CUDNN_CU12_OLD=nvidia-cudnn-cu12==9.5.1.17

wheels_missing() {
    [[ ${CVM_TEST_DEPS:-} != installed ]] || fail "$* (scripts/test.sh runs where PyPI is reached, so this test must run)"
    skip "$*"
}

# wheel_python: a python3 with venv and pip (python3-venv on Debian), in $WHEEL_PY.
wheel_python() {
    WHEEL_PY=$(command -v python3) || wheels_missing "python3 is not installed"
    "$WHEEL_PY" -c 'import venv, ensurepip' 2> /dev/null ||
        wheels_missing "python3 cannot make a virtual environment with pip (Debian's python3-venv)"
}

# wheel_intact FILE: whether a cached wheel is a whole zip (every member's CRC checked), so a download
# cut short or a disk that failed is found before pip installs from it.
wheel_intact() { "$WHEEL_PY" -m zipfile -t "$1" > /dev/null 2>&1; }

# venv_intact VENV: whether a venv marked complete still is: its python runs and every file its
# packages' RECORDs name is there. Its first fault goes to $VENV_FAULT.
venv_intact() {
    VENV_FAULT=$("$1/bin/python" -I -c '
import glob, os, sys
site = glob.glob(os.path.join(sys.prefix, "lib", "python3*", "site-packages"))[0]
for record in glob.glob(os.path.join(site, "*.dist-info", "RECORD")):
    for line in open(record, encoding="utf-8"):
        path = line.rsplit(",", 2)[0]
        if path and not os.path.lexists(os.path.join(site, path)):
            print("%s is missing" % os.path.join(site, path))
            sys.exit(1)
' 2> /dev/null) || { VENV_FAULT=${VENV_FAULT:-its python does not run}; return 1; }
}

# wheel_file NAME==VERSION: prints the cached wheel's path, downloading it first when absent or
# damaged (a cached wheel that is not a whole zip is downloaded again, once; saying so).
wheel_file() {
    local name=${1%%==*} version=${1##*==} cached
    wheel_python
    cached=$(compgen -G "$CVM_TEST_CACHE/wheels/$name/$version/*.whl" | head -n 1)
    if [[ -n $cached ]] && ! wheel_intact "$cached"; then
        echo "note: the cached wheel $cached is damaged (not a whole zip); downloading it again" >&2
        rm -f "$cached"
    fi
    cached=$(wheel_download "$1")
    wheel_intact "$cached" || fail "the wheel $1 downloaded from PyPI into $cached is not a whole zip either; remove it and look at the disk"
    echo "$cached"
}

# wheel_download NAME==VERSION: prints the cached wheel's path, downloading it first when absent.
wheel_download() {
    local name=${1%%==*} version=${1##*==} dir tool
    dir=$CVM_TEST_CACHE/wheels/$name/$version
    if ! compgen -G "$dir/*.whl" > /dev/null; then
        wheel_python
        tool=$CVM_TEST_CACHE/pip-tool
        # One pip for downloads, kept in the cache too (a venv's own pip: no system pip needed).
        [[ -x $tool/bin/pip ]] || { rm -rf "$tool" && "$WHEEL_PY" -m venv "$tool" > /dev/null; } ||
            wheels_missing "python3 -m venv failed"
        mkdir -p "$dir"
        local part
        part=$(mktemp -d "$dir/.part.XXXXXX")
        if ! "$tool/bin/pip" download -q --no-deps --only-binary=:all: --disable-pip-version-check \
            -d "$part" "$1" > "$part.log" 2>&1; then
            rm -rf "$part"
            wheels_missing "cannot download $1 from PyPI and no copy is cached in $dir ($(tail -n 1 "$part.log"))"
        fi
        rm -f "$part.log"
        mv "$part"/*.whl "$dir/" && rm -rf "$part"
    fi
    compgen -G "$dir/*.whl" | head -n 1
}

# venv_recheck VENV: a cached venv marked complete that is no longer whole (venv_intact) loses its
# mark, saying why, so it is made again.
venv_recheck() {
    [[ -f $1/.complete ]] && ! venv_intact "$1" || return 0
    echo "note: the cached venv $1 is damaged ($VENV_FAULT); making it again" >&2
    rm -f "$1/.complete"
}

# wheel_venv KEY NAME==VERSION...: a virtual environment (made once, kept in the cache) with
# these wheels installed by its own pip; sets WHEEL_VENV and WHEEL_SITE (its site-packages).
# Tests only read it: what they change they change in a copy. A venv knows its own path, so it is
# made in place, under a lock, and marked complete last; an unmarked one is made again.
wheel_venv() {
    local key=$1 spec files=()
    shift
    WHEEL_VENV=$CVM_TEST_CACHE/venvs/$key
    mkdir -p "$CVM_TEST_CACHE/venvs"
    exec {wheel_lock}> "$CVM_TEST_CACHE/venvs/.$key.lock"
    flock "$wheel_lock"
    venv_recheck "$WHEEL_VENV"
    if [[ ! -f $WHEEL_VENV/.complete ]]; then
        for spec in "$@"; do files+=("$(wheel_file "$spec")") || exit; done
        wheel_python
        rm -rf "$WHEEL_VENV"
        "$WHEEL_PY" -m venv "$WHEEL_VENV" > /dev/null || fail "python3 -m venv $WHEEL_VENV failed"
        "$WHEEL_VENV/bin/pip" install -q --no-deps --no-index --disable-pip-version-check "${files[@]}" ||
            fail "pip could not install ${files[*]} into $WHEEL_VENV"
        chmod -R go+rX "$WHEEL_VENV"
        touch "$WHEEL_VENV/.complete"
    fi
    exec {wheel_lock}>&-
    WHEEL_SITE=$(compgen -G "$WHEEL_VENV/lib/python3*/site-packages" | head -n 1)
}

# wheel_set_venv KEY REQUIREMENT...: the REQUIREMENTs with every dependency pip picks, downloaded into
# $CVM_TEST_CACHE/wheels/sets/KEY-cpXY/ (XY: this python's version, as binary wheels are) and
# installed once into the venv $CVM_TEST_CACHE/venvs/KEY-cpXY/ with --no-index; the wheels are then
# removed (the venv is kept): no network after the first run. Sets WHEEL_VENV and WHEEL_SITE as wheel_venv does.
wheel_set_venv() {
    local key=$1 tag dir
    shift
    local req=("$@")
    wheel_python
    tag=cp$("$WHEEL_PY" -c 'import sys; print("%d%d" % sys.version_info[:2])')
    dir=$CVM_TEST_CACHE/wheels/sets/$key-$tag
    WHEEL_VENV=$CVM_TEST_CACHE/venvs/$key-$tag
    mkdir -p "$CVM_TEST_CACHE/venvs" "$CVM_TEST_CACHE/wheels/sets"
    exec {wheel_lock}> "$CVM_TEST_CACHE/venvs/.$key-$tag.lock"
    flock "$wheel_lock"
    venv_recheck "$WHEEL_VENV"
    if [[ ! -f $WHEEL_VENV/.complete ]]; then
        if [[ ! -f $dir/.complete ]]; then
            local tool=$CVM_TEST_CACHE/pip-tool
            [[ -x $tool/bin/pip ]] || { rm -rf "$tool" && "$WHEEL_PY" -m venv "$tool" > /dev/null; } ||
                wheels_missing "python3 -m venv failed"
            rm -rf "$dir.part" && mkdir -p "$dir.part"
            if ! "$tool/bin/pip" download -q --only-binary=:all: --disable-pip-version-check -d "$dir.part" "${req[@]}" \
                > "$dir.part.log" 2>&1; then
                rm -rf "$dir.part"
                wheels_missing "cannot download ${req[*]} from PyPI and no copy is cached in $dir ($(tail -n 1 "$dir.part.log"))"
            fi
            rm -f "$dir.part.log"
            rm -rf "$dir" && mv "$dir.part" "$dir" && touch "$dir/.complete"
        fi
        rm -rf "$WHEEL_VENV"
        "$WHEEL_PY" -m venv "$WHEEL_VENV" > /dev/null || fail "python3 -m venv $WHEEL_VENV failed"
        "$WHEEL_VENV/bin/pip" install -q --no-index --find-links "$dir" --disable-pip-version-check "${req[@]}" ||
            fail "pip could not install ${req[*]} from $dir into $WHEEL_VENV"
        chmod -R go+rX "$WHEEL_VENV"
        touch "$WHEEL_VENV/.complete"
        # The venv is the cache from now on: its 2.8 GB of wheels (torch's) are not kept beside it.
        rm -rf "$dir"
    fi
    exec {wheel_lock}>&-
    WHEEL_SITE=$(compgen -G "$WHEEL_VENV/lib/python3*/site-packages" | head -n 1)
}

# wheel_venv_cuda13: the one venv of CUDA 13's wheels the tests share (NCCL, cuDNN, and a toolkit
# from the runtime, nvcc, CRT, NVVM and CCCL wheels, which share nvidia/cu13/; without the CRT
# wheel nvcc 13.5 takes another CUDA's crt/host_runtime.h from /usr/include): WHEEL_SITE as wheel_venv.
wheel_venv_cuda13() {
    wheel_venv cuda13-v3 "$NCCL_CU13" "$CUDNN_CU13" "$CUDA_RUNTIME_13" "$CUDA_NVCC_13" "$CUDA_CCCL_13" "$CUDA_NVVM_13" \
        "$CUDA_CRT_13"
}

# wheel_venv_cuda12: the venv of CUDA 12's wheels the tests share (CUDA 12.9's runtime, NCCL and
# cuDNN for CUDA 12; `cvm import` of its site-packages gives a toolkit 12.9): WHEEL_SITE as wheel_venv.
wheel_venv_cuda12() {
    wheel_venv cuda12 "$NCCL_CU12" "$CUDNN_CU12" "$CUDA_RUNTIME_12"
}

# cuda13_store: the setting the real-framework tests share: the real CUDA 13.0 (its cuDNN 9.19 and
# NCCL 2.28.9; the test skips without it) and the CUDA 13 wheels' cuDNN 9.28 (cudnn928) imported into
# a store and HOME of the test's own.
cuda13_store() {
    need_tools jq patchelf readelf
    unset CONDA_PREFIX VIRTUAL_ENV CVM_VERSION || true
    cuda130=/usr/local/cuda-13.0
    [[ -f $cuda130/lib/libcudnn.so.9 ]] || skip "$cuda130 with its cuDNN 9.19 is absent"
    export HOME="$TEST_TMP/home" CVM_ROOT="$TEST_TMP/root"
    mkdir -p "$HOME"
    wheel_venv_cuda13
    cudnn928=$WHEEL_SITE/nvidia/cudnn
    expect_rc 0 "$CVM" import "$cuda130"
    expect_rc 0 "$CVM" import "$cudnn928"
}

# torch_real_store: cuda13_store with the torch 2.15.0 venv (torch_venv, torch_site, its own cuDNN
# wheel `own`, not imported).
torch_real_store() {
    cuda13_store
    wheel_set_venv torch-2.15.0 "$TORCH"
    torch_venv=$WHEEL_VENV torch_site=$WHEEL_SITE
    own=$torch_site/nvidia/cudnn
}

# use_says SPEC: `cvm use SPEC` in a project folder of its own; its stderr in $ERR.
use_says() { mkdir -p "$TEST_TMP/p" && cd "$TEST_TMP/p" && expect_rc 0 "$CVM" use "$1" && cd "$TEST_TMP"; }

# doctor_code SPEC: the framework cuDNN findings doctor gives for SPEC ("note:framework-own-cudnn",
# "warning:framework-cudnn-mixed", ...) in $DOCTOR_CODE; its whole document in $OUT.
doctor_code() {
    local rc=0
    OUT=$(CVM_VERSION=$1 "$CVM" doctor --json 2> /dev/null) || rc=$? # 1: it found something
    DOCTOR_CODE=$(jq -r '[.findings[] | select(.code | test("^framework-(own-cudnn|cudnn-)")) | "\(.severity):\(.code)"] | join(",")' <<< "$OUT")
}

# runpath_venv VENV COPY: COPY, a copy of the cached VENV (hard links) whose cuDNN front library
# carries DT_RUNPATH $ORIGIN (set with patchelf on a copy of the file), as cuDNN 9.19's wheel has it,
# in place of 9.2x's DT_RPATH: the selection's sub-libraries then come first. Sets site (its
# site-packages), lib (its nvidia/cudnn/lib) and CVM_PYTHON (its python).
runpath_venv() {
    cp -al "$1" "$2"
    site=$(compgen -G "$2/lib/python3*/site-packages")
    lib=$site/nvidia/cudnn/lib
    cp --remove-destination "$lib/libcudnn.so.9" "$lib/libcudnn.so.9.copy"
    mv "$lib/libcudnn.so.9.copy" "$lib/libcudnn.so.9"
    patchelf --set-rpath '$ORIGIN' "$lib/libcudnn.so.9"
    readelf -d "$lib/libcudnn.so.9" | grep -q 'RUNPATH.*\$ORIGIN' || fail "patchelf made no RUNPATH in $lib/libcudnn.so.9"
    export CVM_PYTHON=$2/bin/python
}
