#!/usr/bin/env bash
# The GPUs against the selected cuDNN build (registry/cudnn_archs.toml) and against the PyTorch
# of the active Python (VIRTUAL_ENV's interpreter, which really runs `import torch` and
# torch.cuda.get_arch_list(); the torch package is a small stand-in with a real wheel's files).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
T=$TEST_TMP
# The interpreter itself (python3 on PATH may be a launcher script, such as pyenv's shim).
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))') || skip "python3 is not installed"

fake_driver 580.65.06
doctor_toolkit "$T/cuda-11.2" 11.2.2 11.2.152
doctor_cudnn8 "$T/cudnn-8.1.0" 8.1.0 8.1.0
expect_rc 0 "$CVM" import "$T/cuda-11.2"
expect_rc 0 "$CVM" import --cuda 11.2 "$T/cudnn-8.1.0"
mkdir -p "$T/p"
cd "$T/p"
"$CVM" use 11.2+8.1.0 2>/dev/null

# cuDNN 8.1.0 predates Hopper: an error naming the releases that support it.
fake_gpu "NVIDIA H200" 9.0
OUT=$("$CVM" doctor --json) || true
assert_contains "$(finding_codes)" "error:cudnn-arch-unsupported"
msg=$(finding_message cudnn-arch-unsupported)
assert_contains "$msg" "cuDNN 8.1.0 does not support sm_90 (NVIDIA H200, compute capability 9.0): its build supports compute capability 3.5 to 8.6; cuDNN 8.6 to"
assert_contains "$(finding_codes)" "note:gpu-arch-jit"
# A V100 is fine for both.
fake_gpu "Tesla V100-SXM2-16GB" 7.0
OUT=$("$CVM" doctor --json) || true
assert_not_contains "$(finding_codes)" "arch"

# A venv-like folder around the real interpreter, holding a torch package.
V="$T/venv"
make_venv "$V"
SITE=$VENV_SITE
mkdir -p "$SITE/torch/cuda"
printf "__version__ = '2.1.2+cu121'\ndebug = False\ncuda = '12.1'\ngit_version = 'a8e7c98cb95ff97bb30a728c6b2a1ce6bff946eb'\nhip = None\n" \
    > "$SITE/torch/version.py"
printf 'from . import version, cuda, _C\n__version__ = version.__version__\n' > "$SITE/torch/__init__.py"
# archs LIST [usable]: what the build was compiled for; get_arch_list() answers [] unless CUDA is
# usable, as the real one does on a machine where it cannot start CUDA.
archs() {
    printf 'def _cuda_getArchFlags():\n    return %s\n' "'$1'" > "$SITE/torch/_C.py"
    printf 'from .. import _C\ndef is_available():\n    return %s\ndef get_arch_list():\n    if not is_available():\n        return []\n    return _C._cuda_getArchFlags().split()\n' \
        "${2:-True}" > "$SITE/torch/cuda/__init__.py"
}
unset CVM_PYTHON
export VIRTUAL_ENV="$V"

archs "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"
fake_gpu "NVIDIA GeForce RTX 5090" 12.0
OUT=$("$CVM" doctor --json) || true
assert_eq "$(json_get 'd["python"]["executable"]')" "$V/bin/python3" "VIRTUAL_ENV's interpreter"
assert_contains "$(finding_codes)" "error:torch-arch-unsupported"
msg=$(finding_message torch-arch-unsupported)
assert_contains "$msg" "PyTorch 2.1.2+cu121 cannot run on sm_120 (NVIDIA GeForce RTX 5090, compute capability 12.0): it has kernels for sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 and no PTX"
assert_contains "$msg" "$V/bin/python3"

fake_gpu "NVIDIA H200" 9.0
OUT=$("$CVM" doctor --json) || true
assert_not_contains "$(finding_codes)" "torch-arch"
# CUDA not usable here: the compiled list answers instead of get_arch_list()'s [].
archs "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 compute_86" False
OUT=$("$CVM" doctor --json) || true
assert_contains "$(finding_codes)" "note:torch-arch-jit"
msg=$(finding_message torch-arch-jit)
assert_contains "$msg" "its PTX, compute_86, will be JIT-compiled"

# A torch that fails to import says nothing about architectures.
printf 'raise ImportError("libcudnn.so.8: cannot open shared object file")\n' > "$SITE/torch/__init__.py"
OUT=$("$CVM" doctor --json) || true
assert_not_contains "$(finding_codes)" "torch-arch"
echo "compat_gpu_frameworks: ok"
