#!/usr/bin/env bash
# `cvm use --for FRAMEWORK`: a real virtual environment (the machine's Python, a pyvenv.cfg and a
# site-packages holding the frameworks' real metadata files: TensorFlow's build_info.py in both
# of its forms, torch/version.py), a machine described through fake nvidia-smi and compilers
# printing real banners, and the real Debian CUDA 11.8 and /usr/local/cuda-13.0 where present.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
command -v python3 >/dev/null || skip "python3 is absent"
# The interpreter itself (python3 on PATH may be a launcher such as pyenv's shim).
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')

# The machine: no driver and no GPU unless a test says; compilers from $T/cc only.
export CVM_PROC_DRIVER_VERSION="$T/proc-driver-version" CVM_NVIDIA_SMI="$T/nvidia-smi" CVM_LIBCUDA=""
export CVM_COMPILER_PATH="$T/cc"
unset CVM_PYTHON VIRTUAL_ENV || true
mkdir -p "$T/cc"
fake_cc() { # fake_cc NAME BANNER...
    local name=$1; shift
    { echo '#!/bin/sh'; echo '[ "$1" = --version ] || exit 3'; echo "cat <<'EOS'"; printf '%s\n' "$@"; echo EOS; } > "$T/cc/$name"
    chmod +x "$T/cc/$name"
}
fake_cc g++-10 "g++-10 (Debian 10.2.1-6) 10.2.1 20210110" "Copyright (C) 2020 Free Software Foundation, Inc."
fake_cc g++ "g++ (Debian 12.2.0-14) 12.2.0" "Copyright (C) 2022 Free Software Foundation, Inc."

# A virtual environment as `python -m venv` makes it: bin/python and pyvenv.cfg; the machine's
# Python then puts lib/pythonX.Y/site-packages on sys.path.
venv=$T/venv
make_venv "$venv" python
site=$VENV_SITE
"$venv/bin/python" -c 'import sys; sys.exit(0 if sys.argv[1] in sys.path else 1)' "$site" \
    || skip "$PY does not read pyvenv.cfg as a virtual environment"
export VIRTUAL_ENV=$venv

# tensorflow_gpu 2.10.0 as its wheel writes build_info.py (the form since 2.4).
tensorflow_210() {
    rm -rf "$site"/tensorflow* && mkdir -p "$site/tensorflow/python/platform" "$site/tensorflow_gpu-2.10.0.dist-info"
    cat > "$site/tensorflow/python/platform/build_info.py" <<'EOF'
# Copyright 2020 The TensorFlow Authors. All Rights Reserved.
"""Auto-generated module providing information about the build."""
import collections

build_info = collections.OrderedDict([('cpu_compiler', '/dt9/usr/bin/gcc'), ('cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']), ('cuda_version', '11.2'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])
EOF
}
# tensorflow 2.3.1 as its wheel writes build_info.py (module-level names, before 2.4).
tensorflow_23() {
    rm -rf "$site"/tensorflow* && mkdir -p "$site/tensorflow/python/platform" "$site/tensorflow-2.3.1.dist-info"
    cat > "$site/tensorflow/python/platform/build_info.py" <<'EOF'
# Copyright 2017 The TensorFlow Authors. All Rights Reserved.
"""Generates a Python module containing information about the build."""
is_rocm_build = False
is_cuda_build = True
cuda_version_number = '10.1'
cudnn_version_number = '7'
EOF
}
# torch VERSION CUDA: torch/version.py as the wheel writes it, with the nvidia-cudnn wheel beside.
torch_wheel() {
    rm -rf "$site"/torch* "$site/nvidia" "$site"/nvidia_cudnn* && mkdir -p "$site/torch" "$site/torch-$1.dist-info"
    cat > "$site/torch/version.py" <<EOF
from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']
__version__ = '$1'
debug = False
cuda: Optional[str] = $2
git_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'
hip: Optional[str] = None
EOF
    if [[ $2 != None ]]; then
        mkdir -p "$site/nvidia/cudnn/lib" "$site/nvidia_cudnn_cu12-9.1.0.70.dist-info"
        : > "$site/nvidia/cudnn/lib/libcudnn.so.9"
        echo "nvidia/cudnn/lib/libcudnn.so.9,sha256=x,0" > "$site/nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD"
    fi
}

mkdir -p "$T/p" && cd "$T/p"

# --- TensorFlow 2.10 in the venv: CUDA 11.2 and cuDNN 8.1, driver and GPU checks skipped.
tensorflow_210
# Not installed: explained, then refused, nothing written (as `cvm use SPEC`); --force writes it.
expect_rc 1 "$CVM" use --for .
[[ ! -e .cudaversion ]] || fail "use --for . wrote a choice that is not installed"
assert_contains "$ERR" "nothing written: 11.2.2+8.1.1.33 is the choice, and CUDA 11.2.2 and cuDNN 8.1.1.33-cuda11.2 are not installed"
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(cat .cudaversion)" "11.2.2+8.1.1.33"
assert_contains "$ERR" "tensorflow 2.10.0 in $site/tensorflow was built with CUDA 11.2 and cuDNN 8.1 (its build_info.py)"
assert_contains "$ERR" "no NVIDIA driver found: the driver check is skipped"
assert_contains "$ERR" "no GPU seen: the GPU architecture check is skipped"
assert_contains "$ERR" "host compiler: gcc 10.2.1 is one CUDA 11.2.2 accepts"
assert_contains "$ERR" "cuDNN 8.1.1.33-cuda11.2, not installed yet"
assert_contains "$ERR" "cvm use --for . --install"
# The same as the argument, with --json for tools.
rm .cudaversion
expect_rc 0 "$CVM" use --for tensorflow==2.10 --json --force
assert_eq "$(cat .cudaversion)" "11.2.2+8.1.1.33"
py_json() { "$PY" -c "import json,sys; d=json.loads(sys.argv[1]); print($1)" "$OUT"; }
assert_eq "$(py_json 'd["spec"], d["toolkit"]["version"], d["toolkit"]["installed"], d["cudnn"]["id"], d["cudnn"]["installed"], d["global"]')" \
    "11.2.2+8.1.1.33 11.2.2 False 8.1.1.33-cuda11.2 False False"
assert_eq "$(py_json 'sorted({r["constraint"] for r in d["reasons"]})')" "['cudnn', 'framework', 'host_compiler']"
assert_eq "$(py_json 'd["for"][0]["framework"], d["for"][0]["version"], d["for"][0]["installed"]')" "tensorflow 2.10 False"
assert_eq "$(py_json 'len(d["notes"])')" "2"

# Only gcc 12: CUDA 11.2 takes gcc up to 10. TensorFlow's wheels need no nvcc, so the choice stands,
# with a note saying what to install for builds that will need one: packages the distribution has
# (apt-cache policy, here a stand-in answering as Debian 12 would), else the versions only.
rm "$T/cc/g++-10"
cat > "$T/apt-cache" <<'EOS'
#!/bin/sh
[ "$1" = policy ] || exit 100
shift
for p in "$@"; do
    case $p in clang-13|clang-14|g++-11|g++-12) c=1:14.0.6-12 ;; *) c='(none)' ;; esac
    printf '%s:\n  Installed: (none)\n  Candidate: %s\n' "$p" "$c"
done
EOS
chmod +x "$T/apt-cache"
rm -f .cudaversion
expect_rc 0 env CVM_APT_CACHE="$T/apt-cache" "$CVM" use --for . --force
assert_eq "$(cat .cudaversion)" "11.2.2+8.1.1.33"
assert_contains "$ERR" "no installed host compiler is one CUDA 11.2.2 accepts"
assert_contains "$ERR" "the framework's wheels need none"
assert_contains "$ERR" "this machine's distribution packages none of them"
assert_not_contains "$ERR" "apt install g++-10"
printf '#!/bin/sh\nprintf "g++-10:\\n  Candidate: 10.2.1-6\\n"\n' > "$T/apt-cache"
expect_rc 0 env CVM_APT_CACHE="$T/apt-cache" "$CVM" use --for . --json --force
assert_eq "$(py_json 'd["spec"]')" "11.2.2+8.1.1.33"
assert_contains "$(py_json '[r["text"] for r in d["reasons"] if r["constraint"] == "host_compiler"][0]')" "e.g. g++-10 (apt install g++-10)"
expect_rc 0 env CVM_APT_CACHE=/nowhere "$CVM" use --for . --force
assert_contains "$ERR" "install a compiler CUDA 11.2"
assert_not_contains "$ERR" "apt install"
fake_cc g++-10 "g++-10 (Debian 10.2.1-6) 10.2.1 20210110" "Copyright (C) 2020 Free Software Foundation, Inc."

# --- TensorFlow 2.3 (build_info.py before 2.4): CUDA 10.1 and cuDNN 7.6.
tensorflow_23
fake_cc g++-8 "g++-8 (Debian 8.3.0-6) 8.3.0" "Copyright (C) 2018 Free Software Foundation, Inc."
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(cat .cudaversion)" "10.1.243+7.6.5.32"
assert_contains "$ERR" "tensorflow 2.3.1 in $site/tensorflow was built with CUDA 10.1 and cuDNN 7.6 (its build_info.py)"

# --- A driver too old for TensorFlow 2.15's CUDA 12.2; a GPU CUDA 13 cannot build for.
fake_driver 470.82.01 "NVIDIA A100-SXM4-80GB" 8.0
expect_rc 1 "$CVM" use --for tensorflow==2.15
assert_contains "$ERR" "the driver rules out every choice: driver 470.82.01 is too old for CUDA 12.2"
fake_driver 580.95.05 "Tesla V100-SXM2-16GB" 7.0
fake_cc g++-13 "g++-13 (Debian 13.3.0-1) 13.3.0" "Copyright (C) 2023 Free Software Foundation, Inc."
expect_rc 1 "$CVM" use --for torch==2.11
assert_contains "$ERR" "the GPU rules out every choice: CUDA 13.0 cannot build for sm_70 (Tesla V100-SXM2-16GB, compute capability 7.0)"
expect_rc 0 "$CVM" use --for torch==2.5 --force
assert_eq "$(cat .cudaversion)" "12.4.1"
assert_contains "$ERR" "driver 580.95.05 runs CUDA 12.4.1"
assert_contains "$ERR" "GPU: CUDA 12.4.1 builds for sm_70 (Tesla V100-SXM2-16GB)"
assert_contains "$ERR" "cuDNN: none paired: PyTorch brings its own (the nvidia-cudnn wheel it depends on)"
rm -f "$CVM_PROC_DRIVER_VERSION" "$CVM_NVIDIA_SMI"

# --- Bad input: exit 2, with a did-you-mean where one is close; nothing written.
before=$(cat .cudaversion)
expect_rc 2 "$CVM" use --for tensorflw==2.10
assert_contains "$ERR" "unknown framework tensorflw; did you mean tensorflow?"
expect_rc 2 "$CVM" use --for torch==2.50
assert_contains "$ERR" "did you mean torch==2.5?"
expect_rc 2 "$CVM" use --for torch==2.5 12.4
assert_contains "$ERR" "--for picks the SPEC itself"
expect_rc 2 "$CVM" use --for tensorflow==2.10 --json --unset
assert_eq "$(py_json 'd["error"]["code"]')" "invalid_input"
assert_eq "$(cat .cudaversion)" "$before" "bad input changed .cudaversion"

# --- torch and TensorFlow in one venv that share no CUDA: the framework rules everything out.
tensorflow_210
torch_wheel 2.5.1+cu124 "'12.4'"
expect_rc 1 "$CVM" use --for .
assert_contains "$ERR" "the framework rules out every choice: torch 2.5.1+cu124 in $site/torch (CUDA 12.4) and tensorflow 2.10.0 in $site/tensorflow (CUDA 11.2) share no CUDA version"
rm -rf "$site"/tensorflow*
# A CPU build of torch: no CUDA to match.
torch_wheel 2.5.1+cpu None
expect_rc 1 "$CVM" use --for .
assert_contains "$ERR" "torch 2.5.1+cpu in $site/torch is a CPU build (torch.version.cuda is None)"
# No framework at all.
rm -rf "$site"/torch*
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "has neither torch nor tensorflow installed"
# --global writes the global default.
torch_wheel 2.5.1+cu124 "'12.4'"
expect_rc 0 "$CVM" use --for . --global --force
assert_eq "$(cat "$CVM_ROOT/version")" "12.4.1"
assert_contains "$ERR" "torch 2.5.1+cu124 in $site/torch was built with CUDA 12.4 (torch.version.cuda)"
assert_contains "$ERR" "PyTorch brings its own ($site/nvidia/cudnn/lib, cuDNN 9.1.0.70)"
# Completion, help and the man page know the option and its values.
expect_rc 0 "$CVM" __complete use --
assert_contains "$OUT" "--for"
expect_rc 0 "$CVM" __complete use --for tensorflow==2.1
assert_contains "$OUT" "tensorflow==2.10"
assert_not_contains "$OUT" "torch=="
expect_rc 0 "$CVM" __complete use --for ""
assert_contains "$OUT" "."$'\t'"the frameworks of the active Python"
assert_contains "$OUT" "torch==2.5"
expect_rc 0 "$CVM" use --help
assert_contains "$OUT" "--for"
expect_rc 0 "$CVM" __man
assert_contains "$OUT" "tensorflow==2.10, torch==2.5"
echo "compat_use_for: venv ok"

# --- The real toolkits: torch built for 11.8 picks the imported Debian CUDA 11.8 (its own
# host_config.h accepts the machine's clang 14), and one built for 13.0 the real 13.0.
deb=/usr/lib/nvidia-cuda-toolkit
need_debian_cuda
export CVM_COMPILER_PATH=/usr/bin
expect_rc 0 "$CVM" import /usr
torch_wheel 2.5.1+cu118 "'11.8'"
expect_rc 0 "$CVM" use --for .
assert_eq "$(cat .cudaversion)" "11.8.0"
assert_contains "$ERR" "toolkit: CUDA 11.8.0, installed"
assert_contains "$ERR" "selected 11.8.0 in $T/p/.cudaversion"
expect_rc 0 "$CVM" exec -- nvcc --version
assert_contains "$OUT" "release 11.8"
real13=/usr/local/cuda-13.0
[[ -x $real13/bin/nvcc ]] || skip "$real13 is absent (CUDA 11.8 half passed)"
expect_rc 0 "$CVM" import "$real13"
torch_wheel 2.9.0+cu130 "'13.0'"
expect_rc 0 "$CVM" use --for . --json
assert_eq "$(py_json 'd["toolkit"]["installed"], d["spec"].startswith("13.0."), d["cudnn"]')" "True True None"
expect_rc 0 "$CVM" exec -- nvcc --version
assert_contains "$OUT" "release 13.0"
echo "compat_use_for: real toolkits ok"
