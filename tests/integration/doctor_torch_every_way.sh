#!/usr/bin/env bash
# Issue 40: what `cvm use` and `cvm doctor` predict for a framework holds under every way cvm starts
# programs, not only `cvm exec`. The real torch 2.15.0 wheel with its cuDNN front library given
# DT_RUNPATH (as cuDNN 9.19's wheel has it; lib_wheels' runpath_venv), the real CUDA 13.0's cuDNN 9.19
# selected: cvm use says "error ahead", and PyTorch then refuses the mixed set under `cvm exec`,
# `eval "$(cvm env)"`, the prompt hook, `cvm shell`, an activation script and Lmod modules alike.
# With its own cuDNN selected (the way out cvm names), it answers its own release under each.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
source "$(dirname "$0")/lib_teams.sh"
torch_real_store
runpath_venv "$torch_venv" "$TEST_TMP/venv"
project=$TEST_TMP/project
mkdir -p "$project" "$TEST_TMP/elsewhere"
check='import torch
try:
    print("version", torch.backends.cudnn.version())
except RuntimeError as e:
    print("RAISED", str(e).splitlines()[0][:60])'
printf '%s\n' "$check" > "$TEST_TMP/check.py"
LMOD_INIT=$(lmod_init)
[[ -n $LMOD_INIT || ${CVM_TEST_DEPS:-} != installed ]] || fail "Lmod is not installed, and scripts/test.sh installs it"

# every_way SPEC WANT: selects SPEC in the project with `cvm use`, then runs PyTorch's check under
# each way cvm starts programs; each must print WANT.
every_way() {
    local spec=$1 want=$2 way got cudnn_id
    (cd "$project" && rm -f .cudaversion && "$CVM" use "$spec" 2> /dev/null) || fail "cvm use $spec"
    local py="'$CVM_PYTHON' -I '$TEST_TMP/check.py'"
    local -A ways=(
        [exec]="cd '$project' && '$CVM' exec -- $py"
        [env]="cd '$project' && eval \"\$('$CVM' env --shell bash)\" && cd '$TEST_TMP/elsewhere' && $py"
        [hook]="cd '$project' && eval \"\$('$CVM' init bash)\" && $py"
        [shell]="cd '$TEST_TMP/elsewhere' && eval \"\$('$CVM' init bash)\" && cvm shell '$spec' && $py"
        [script]="cd '$project' && '$CVM' script --shell bash -o '$TEST_TMP/activate.sh' 2> /dev/null && cd '$TEST_TMP/elsewhere' && . '$TEST_TMP/activate.sh' && $py"
    )
    for way in exec env hook shell script; do
        got=$(env -u CVM_VERSION HOME="$HOME" bash --noprofile --norc -c "set -e; ${ways[$way]}" 2> /dev/null | grep -E '^(version|RAISED)') ||
            fail "$spec, $way: PyTorch's check printed nothing"
        assert_eq "$got" "$want" "$spec under $way"
    done
    if [[ -n $LMOD_INIT ]]; then
        rm -rf "$TEST_TMP/modules" && expect_rc 0 "$CVM" export lmod "$TEST_TMP/modules"
        cudnn_id=$("$CVM" list --json | jq -r --arg v "${spec#*+}" '[.cudnn[] | select(.version | startswith($v)) | .id][0]')
        got=$(cd "$TEST_TMP/elsewhere" && in_lmod "$TEST_TMP/modules" "module load cuda/13.0.2 cudnn/$cudnn_id; $py" 2> /dev/null |
            grep -E '^(version|RAISED)') || fail "$spec, lmod: PyTorch's check printed nothing"
        assert_eq "$got" "$want" "$spec under Lmod modules"
    fi
}

# Another release than its own, older than its build: refused under every way, as predicted.
cd "$project" && expect_rc 0 "$CVM" use 13.0+9.19 && cd "$TEST_TMP"
assert_contains "$ERR" "error ahead: PyTorch 2.15.0+cu132 in $CVM_PYTHON would load a mixed cuDNN"
every_way 13.0+9.19 "RAISED cuDNN version incompatibility: PyTorch was compiled  against"
# The way out cvm names: its own cuDNN imported and selected; its own release under every way.
expect_rc 0 "$CVM" import "$site/nvidia/cudnn"
every_way 13.0+9.26 "version 92600"
echo PASS
