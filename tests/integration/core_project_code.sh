#!/usr/bin/env bash
# A cloned repository never runs its code through cvm: `cvm doctor`, `cvm use --for .` and
# `cvm import --detect` run in a folder holding a hostile json.py, sysconfig.py, torch/, and
# python3, gcc, nvidia-smi and bin/nvcc programs (PATH starting with `.`, CUDA_PATH=.), each of
# which would leave a marker file. The real python3 is run isolated, outside the folder.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))') || skip "python3 is not installed"
MARKS="$T/marks"
mkdir -p "$MARKS" "$T/repo/bin" "$T/repo/torch" "$T/repo/lib64"
R="$T/repo"
for m in json sysconfig torch; do
    printf 'open(%s, "w").write("ran")\n' "'$MARKS/$m'" > "$R/$m.py"
done
mv "$R/torch.py" "$R/torch/__init__.py"
for p in python3 python gcc g++ nvidia-smi bin/nvcc; do
    printf '#!/bin/sh\necho ran > "%s/%s"\n' "$MARKS" "${p##*/}" > "$R/$p"
    chmod +x "$R/$p"
done
no_marks() {
    local left
    left=$(ls "$MARKS")
    [[ -z $left ]] || fail "$1 ran the project's code: $left"
}

# A toolkit selected in the project, so that doctor looks at its host compiler.
make_toolkit "$T/cuda-12.4" 12.4.1
"$CVM" import "$T/cuda-12.4" 2>/dev/null || fail "import"
cd "$R"
unset CVM_PYTHON VIRTUAL_ENV CVM_NVIDIA_SMI CVM_COMPILER_PATH PYTHONPATH || true
export PATH=".:$PATH" CUDA_PATH=.
"$CVM" use 12.4 2>/dev/null || fail "use"
no_marks "cvm use"
"$CVM" doctor --json > "$T/doctor.json" 2>/dev/null || true
no_marks "cvm doctor"
# The interpreter found is the machine's, not the project's (which is skipped, not refused).
got=$("$PY" -I -c 'import json, sys; print(json.load(open(sys.argv[1]))["python"]["executable"])' "$T/doctor.json" 2>/dev/null) || true
[[ $got == /* ]] || fail "doctor's python is not an absolute path: [$got]"
"$CVM" use --for . > /dev/null 2>&1 || true
no_marks "cvm use --for ."
"$CVM" import --detect > /dev/null 2>&1 || true
no_marks "cvm import --detect"
expect_rc 0 "$CVM" list --json
assert_not_contains "$OUT" "\"$R\"" "the project folder (CUDA_PATH=.) was imported"

# torch.cuda.get_arch_list() of the active Python, with a GPU there: torch is imported from the
# environment's site-packages, never from the project's torch/.
V="$T/venv"
make_venv "$V"
SITE=$VENV_SITE
mkdir -p "$SITE/torch/cuda"
printf "__version__ = '2.1.2+cu121'\ncuda = '12.1'\n" > "$SITE/torch/version.py"
printf 'from . import version, cuda\n__version__ = version.__version__\n' > "$SITE/torch/__init__.py"
printf 'def get_arch_list():\n    return ["sm_50"]\n' > "$SITE/torch/cuda/__init__.py"
printf '#!/bin/sh\ncase "$1" in\n--query-gpu=name,compute_cap) echo "NVIDIA H200, 9.0" ;;\n*) echo "NVIDIA H200, 580.65.06" ;;\nesac\n' \
    > "$T/smi"
chmod +x "$T/smi"
export VIRTUAL_ENV="$V" CVM_NVIDIA_SMI="$T/smi"
OUT=$("$CVM" doctor --json 2>/dev/null) || true
no_marks "cvm doctor (torch's architectures)"
# The site-packages' torch was asked (sm_50 only: no kernels for the H200).
assert_contains "$OUT" "torch-arch-unsupported" "the environment's torch was not imported"
