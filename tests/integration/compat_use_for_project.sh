#!/usr/bin/env bash
# `cvm use --for .` / `--for DIR` where the active Python has no framework: the pins of the
# project's requirements*.txt, pyproject.toml (PEP 621, Poetry), environment.yml, pixi.toml and
# Pipfile, read as text; a range or a bare name takes the newest release this machine's driver
# runs, naming the newer ones passed over; bad files, unknown releases and conflicting pins are
# one line with file:line, exit 2, nothing written. The machine: a fake nvidia-smi and
# /proc/driver/nvidia/version text, no host compiler.
# Nothing is installed: each choice is written with --force (without it, `cvm use` refuses what is
# not installed, exit 1, as tests/integration/cli_use_truth.sh checks).
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP

export CVM_PROC_DRIVER_VERSION="$T/proc-driver-version" CVM_NVIDIA_SMI="$T/nvidia-smi" CVM_LIBCUDA=""
export CVM_COMPILER_PATH="$T/cc"
mkdir -p "$T/cc"
unset VIRTUAL_ENV || true
# No Python at all first: the project's files are what is read.
export CVM_PYTHON="$T/no-python"
no_driver() { rm -f "$CVM_PROC_DRIVER_VERSION" "$CVM_NVIDIA_SMI"; }
# project NAME: a fresh project folder $T/NAME, the current folder.
project() { rm -rf "$T/$1" && mkdir -p "$T/$1" && cd "$T/$1"; }
selected() { cat .cudaversion; }

# --- requirements.txt: an exact pin among other packages, comments and options.
no_driver
project req
cat > requirements.txt <<'EOF'
--extra-index-url https://download.pytorch.org/whl/cu124
numpy>=1.26  # arrays
torch==2.4.1 ; sys_platform == "linux"
torchvision==0.19.1
EOF
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.4.1" "$ERR"
assert_contains "$ERR" "torch==2.4.1 from requirements.txt:3 ships builds for CUDA 11.8, 12.1, 12.4"
assert_contains "$ERR" "note: $T/no-python could not be started; the project's files are read instead"
# torch's +cu121 says the CUDA itself.
sed -i 's/torch==2.4.1 /torch==2.4.1+cu121 /' requirements.txt
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.1.1"
assert_contains "$ERR" "torch==2.4.1+cu121 from requirements.txt:3 was built with CUDA 12.1 (its +cu121)"

# --- A range, through a -r include, with a driver too old for CUDA 13: torch 2.11 (CUDA 13.0 only)
# is passed over, saying why, for 2.10.
fake_driver 535.104.05 "NVIDIA A100-SXM4-80GB" 8.0
project range
printf -- '-r requirements/base.txt\npytest\n' > requirements-dev.txt
mkdir requirements && printf 'torch>=2.4\n' > requirements/base.txt
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.8.1"
assert_contains "$ERR" "torch>=2.4 from requirements/base.txt:1: took torch 2.10, the newest release it admits that this machine can run; passed over 2.11 (the driver rules it out: driver 535.104.05 is too old for CUDA 13.0"
expect_rc 0 "$CVM" use --for . --json --force
py_json() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($1)" "$OUT"; }
if command -v python3 >/dev/null; then
    assert_eq "$(py_json 'd["for"][0]["version"], d["for"][0]["from"], d["passed_over"][0]["version"]')" \
        "2.10 requirements/base.txt:1 2.11"
fi
# The bare name on the command line: the newest release this driver runs, the same line.
expect_rc 0 "$CVM" use --for torch --force
assert_eq "$(selected)" "12.8.1"
assert_contains "$ERR" "--for torch: took torch 2.10, the newest release cvm knows that this machine can run; passed over 2.11 (the driver rules it out"
# A range on the command line.
expect_rc 0 "$CVM" use --for 'torch>=2.4,<2.6' --force
# (12.1 of its 11.8, 12.1 and 12.4: the newest this driver runs without minor-version compatibility)
assert_eq "$(selected)" "12.1.1"
assert_contains "$ERR" "torch>=2.4,<2.6: took torch 2.5, the newest release it admits that this machine can run"
no_driver

# --- pyproject.toml: PEP 621, then Poetry's caret.
project pep621
cat > pyproject.toml <<'EOF'
[project]
name = "model"
dependencies = [
    "numpy",
    "tensorflow[and-cuda]==2.15.1",
]
EOF
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.2.2+8.9.7.29"
assert_contains "$ERR" "tensorflow[and-cuda]==2.15.1 from pyproject.toml:5 was tested with CUDA 12.2"
project poetry
cat > pyproject.toml <<'EOF'
[tool.poetry]
name = "model"

[tool.poetry.dependencies]
python = "^3.10"
torch = { version = "~2.3.1", source = "pytorch" }
EOF
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.1.1"
assert_contains "$ERR" "torch 2.3 (torch = \"~2.3.1\" from pyproject.toml:6) ships builds for CUDA 11.8, 12.1"

# --- environment.yml: conda's pytorch with pytorch-cuda, and a pip: list.
project conda
cat > environment.yml <<'EOF'
name: model
channels:
  - pytorch
  - nvidia
dependencies:
  - python=3.11
  - pytorch=2.4.1    # the model's
  - pytorch-cuda=11.8
  - pip
  - pip:
      - einops
EOF
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "11.8.0"
assert_contains "$ERR" "torch 2.4 (pytorch=2.4.1 from environment.yml:7) was built with CUDA 11.8 (pytorch-cuda=11.8 from environment.yml:8)"
project conda-pip
printf 'dependencies:\n- python\n- pip:\n  - "torch==2.2.2"\n' > environment.yml
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.1.1"
assert_contains "$ERR" "torch==2.2.2 from environment.yml:4 ships builds"

# --- pixi.toml and Pipfile.
project pixi
printf '[project]\nname = "m"\nchannels = ["pytorch"]\nplatforms = ["linux-64"]\n\n[dependencies]\npytorch = "2.5.*"\n' > pixi.toml
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.4.1"
assert_contains "$ERR" "pytorch = \"2.5.*\" from pixi.toml:7"
project pipenv
printf '[[source]]\nurl = "https://pypi.org/simple"\nname = "pypi"\n\n[packages]\ntorch = "==2.3.1"\n' > Pipfile
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.1.1"
assert_contains "$ERR" "torch = \"==2.3.1\" from Pipfile:6 ships builds for CUDA 11.8, 12.1"

# --- --for DIR from elsewhere: DIR's pins, DIR/.cudaversion.
cd "$T"
expect_rc 0 "$CVM" use --for pipenv/ --force
assert_eq "$(cat "$T/pipenv/.cudaversion")" "12.1.1"
assert_contains "$ERR" "in $T/pipenv/.cudaversion"
[[ ! -e $T/.cudaversion ]] || fail "--for DIR wrote .cudaversion outside DIR"
expect_rc 2 "$CVM" use --for ./missing
assert_contains "$ERR" "use --for ./missing: no such folder"

# --- Bad input: one line naming file:line, exit 2, nothing written.
project bad
echo 11.8 > .cudaversion
printf '[project]\ndependencies = ["torch>=2.4"\n' > pyproject.toml
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "cvm: use --for .: pyproject.toml:"
rm pyproject.toml
printf 'dependencies:\n  - python\n\t- pytorch\n' > environment.yml
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "use --for .: environment.yml:3: a tab in the indentation (YAML indents with spaces only)"
rm environment.yml
printf 'torch==two\n' > requirements.txt
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "use --for .: requirements.txt:1: cannot read the version range of torch==two"
# A release the registry does not know: the releases it knows.
printf 'numpy\ntorch==3.1.0\n' > requirements.txt
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "use --for .: torch==3.1.0 from requirements.txt:2: torch 3.1.0 is not in cvm's registry"
assert_contains "$ERR" "(it knows 1.7 to 2.11: cvm list --available)"
printf 'torch>=3\n' > requirements.txt
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "torch>=3 from requirements.txt:1: cvm's registry knows no torch release in this range (it knows 1.7 to 2.11"
# Two files that disagree: both named.
printf 'torch==2.4.1\n' > requirements.txt
printf '[packages]\ntorch = "==2.5.0"\n' > Pipfile
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "use --for .: torch==2.4.1 from requirements.txt:1 and torch = \"==2.5.0\" from Pipfile:2 admit no common release; make them agree"
printf '[packages]\ntorch = "==2.4.1+cu118"\n' > Pipfile
printf 'torch==2.4.1+cu121\n' > requirements.txt
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "torch==2.4.1+cu121 from requirements.txt:1 asks for CUDA 12.1 and torch = \"==2.4.1+cu118\" from Pipfile:2 for CUDA 11.8"
rm Pipfile
# JAX alone: cvm's registry has none of its releases.
printf 'jax[cuda12]==0.4.30\n' > requirements.txt
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "jax[cuda12]==0.4.30 from requirements.txt:1: cvm's registry has no JAX releases"
assert_eq "$(selected)" "11.8" "bad input changed .cudaversion"
# Nothing pinned: the reason names the files read.
printf 'numpy\n' > requirements.txt
expect_rc 1 "$CVM" use --for .
assert_contains "$ERR" "no torch, tensorflow or jax is pinned in $T/bad's requirements.txt"

# --- The active Python's frameworks stay first: they are what will run.
command -v python3 >/dev/null || skip "python3 is absent (the project files' part passed)"
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
make_venv "$T/venv" python
"$T/venv/bin/python" -c 'import sys; sys.exit(0 if sys.argv[1] in sys.path else 1)' "$VENV_SITE" \
    || skip "$PY does not read pyvenv.cfg as a virtual environment (the project files' part passed)"
unset CVM_PYTHON
export VIRTUAL_ENV=$T/venv
project both
printf 'torch==2.4.1+cu121\n' > requirements.txt
# A venv without torch or tensorflow: the project's pin.
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.1.1"
mkdir -p "$VENV_SITE/torch" "$VENV_SITE/torch-2.5.1+cu124.dist-info"
printf "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n" > "$VENV_SITE/torch/version.py"
expect_rc 0 "$CVM" use --for . --force
assert_eq "$(selected)" "12.4.1"
assert_contains "$ERR" "torch 2.5.1+cu124 in $VENV_SITE/torch was built with CUDA 12.4 (torch.version.cuda)"
assert_not_contains "$ERR" "requirements.txt"
# Neither the venv nor the folder: the venv's reason and the folder's.
rm -rf "$VENV_SITE/torch" "$VENV_SITE"/torch-* requirements.txt
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "has neither torch nor tensorflow installed, and there is no requirements*.txt, pyproject.toml, environment.yml, pixi.toml, Pipfile in $T/both; install one, or name it: --for torch==2.5"
echo "compat_use_for_project: ok"
