#!/usr/bin/env bash
# Issue 40, the way out in one command: `cvm use --for .` with the real PyTorch 2.15.0 wheel and
# the wheels it pins (lib_wheels.sh's cached venv) imports torch's own cuDNN (nvidia/cudnn) and
# NCCL (nvidia/nccl) as `cvm import FOLDER` does and selects exactly those builds; under
# `cvm exec`, PyTorch then reports its own cuDNN release and maps only the wheels' cuDNN and NCCL
# files (/proc/self/maps; no GPU needed). The real CUDA 13.0 is imported too: its cuDNN 9.19 and
# NCCL 2.28.9 are other releases of the same major that must not be selected. A copy of the venv
# whose cuDNN (or NCCL) wheel pip left half-installed is refused in one line, and nothing is
# written or registered.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
need_tools jq
unset CONDA_PREFIX VIRTUAL_ENV CVM_VERSION || true
cuda130=/usr/local/cuda-13.0
[[ -x $cuda130/bin/nvcc ]] || skip "$cuda130 is absent"
export HOME="$TEST_TMP/home" CVM_ROOT="$TEST_TMP/root"
# The machine: no driver and no GPU (the host's driver library may be older than CUDA 13 needs;
# PyTorch reads its cuDNN's release without either), as compat_use_for describes it.
export CVM_PROC_DRIVER_VERSION="$TEST_TMP/none" CVM_NVIDIA_SMI="$TEST_TMP/none" CVM_LIBCUDA=""
mkdir -p "$HOME"

wheel_set_venv torch-2.15.0 "$TORCH"
venv=$WHEEL_VENV site=$WHEEL_SITE
cudnn_dir=$site/nvidia/cudnn nccl_dir=$site/nvidia/nccl
# The releases pip installed, from the dist-info folders' names.
cudnn_release=$(basename "$(compgen -G "$site/nvidia_cudnn_cu13-*.dist-info")" .dist-info) && cudnn_release=${cudnn_release#*-}
nccl_release=$(basename "$(compgen -G "$site/nvidia_nccl_cu13-*.dist-info")" .dist-info) && nccl_release=${nccl_release#*-}
# What `cvm import FOLDER` registers for each wheel, in a store of its own: the builds the spec
# must name.
import_id() { CVM_ROOT="$TEST_TMP/ref" expect_rc 0 "$CVM" import --json "$1" && jq -r ".imported[] | select(.kind == \"$2\") | .id" <<< "$OUT"; }
cudnn_id=$(import_id "$cudnn_dir" cudnn)
nccl_id=$(import_id "$nccl_dir" nccl)
assert_eq "${cudnn_id%-cuda*}" "$cudnn_release" "the cuDNN wheel's build"
assert_eq "${nccl_id%-cuda*}" "$nccl_release" "the NCCL wheel's build"

# The toolkits: the real 13.0 (with its own cuDNN and NCCL) and the CUDA 13 libraries torch pins
# (nvidia/cu13, the CUDA torch.version.cuda names, which `--for .` picks).
expect_rc 0 "$CVM" import "$cuda130"
expect_rc 0 "$CVM" import --json "$site/nvidia/cu13"
toolkit=$(jq -r '.imported[] | select(.kind == "cuda") | .id' <<< "$OUT")
expect_rc 0 "$CVM" list --json
assert_contains "$(jq -r '.cudnn[].id' <<< "$OUT")" "-cuda13" "the real 13.0 brings a cuDNN of CUDA 13"
assert_not_contains "$(jq -r '.cudnn[].id' <<< "$OUT")" "$cudnn_id" "the 13.0's cuDNN is another release"

# store_ids: every registered kind/id, one a line, sorted.
store_ids() { "$CVM" list --json | jq -r '.[][]? | "\(.kind)/\(.id)"' | sort; }

export CVM_PYTHON=$venv/bin/python
mkdir -p "$TEST_TMP/p" && cd "$TEST_TMP/p"
expect_rc 0 "$CVM" use --for .
spec="$toolkit+$cudnn_id+nccl$nccl_id"
assert_eq "$(cat .cudaversion)" "$spec" "the spec written"
assert_contains "$ERR" "imported cudnn $cudnn_id from $cudnn_dir"
assert_contains "$ERR" "imported nccl $nccl_id from $nccl_dir"
assert_contains "$ERR" "cuDNN $cudnn_id and NCCL $nccl_id: the own wheels of torch 2.15.0"
assert_contains "$ERR" "($cudnn_dir, $nccl_dir), imported and selected: cvm puts the selection's cuDNN and NCCL first"
assert_contains "$ERR" "selected $spec in $TEST_TMP/p/.cudaversion"
expect_rc 0 "$CVM" list --json
assert_eq "$(jq -r ".cudnn[] | select(.id == \"$cudnn_id\") | \"\(.path) \(.source) \(.active)\"" <<< "$OUT")" "$cudnn_dir imported true" "cvm list: the cuDNN wheel"
assert_eq "$(jq -r ".nccl[] | select(.id == \"$nccl_id\") | \"\(.path) \(.source) \(.active)\"" <<< "$OUT")" "$nccl_dir imported true" "cvm list: the NCCL wheel"
expect_rc 0 "$CVM" list
assert_contains "$OUT" "$cudnn_dir"
assert_contains "$OUT" "$nccl_dir"
before=$(store_ids) projects=$(cat "$CVM_ROOT/projects")

# The real proof: what PyTorch reports and maps under cvm exec.
expect_rc 0 "$CVM" exec -- "$CVM_PYTHON" -I -W ignore -c '
import torch, os
print("version", torch.backends.cudnn.version())
files = {l.split()[-1] for l in open("/proc/self/maps") if "/libcudnn" in l or "/libnccl" in l}
print("maps", " ".join(sorted(files)))'
IFS=. read -r major minor patch _ <<< "$cudnn_release"
assert_eq "$(sed -n 's/^version //p' <<< "$OUT")" "$((major * 10000 + minor * 100 + patch))" "torch.backends.cudnn.version() under cvm exec"
maps=$(sed -n 's/^maps //p' <<< "$OUT")
assert_contains "$maps" "$cudnn_dir/lib/libcudnn.so.9" "the wheel's libcudnn.so.9 is mapped"
assert_contains "$maps" "$nccl_dir/lib/libnccl.so.2" "the wheel's libnccl.so.2 is mapped"
for f in $maps; do
    [[ $f == "$cudnn_dir/lib/"* || $f == "$nccl_dir/lib/"* ]] || fail "torch under cvm exec maps $f, not a file of its own wheels ($maps)"
done

# Twice: the same spec, nothing registered again.
expect_rc 0 "$CVM" use --for . --json
assert_eq "$(jq -r .spec <<< "$OUT")" "$spec"
assert_eq "$(jq -c '[.imported[] | "\(.kind) \(.id) \(.status)"]' <<< "$OUT")" "[\"cudnn $cudnn_id already_registered\",\"nccl $nccl_id already_registered\"]" "--json's imported"
assert_eq "$(jq -c '[.cudnn.id, .cudnn.own, .nccl.id, .nccl.own]' <<< "$OUT")" "[\"$cudnn_id\",true,\"$nccl_id\",true]" "--json's cudnn and nccl"
assert_eq "$(store_ids)" "$before" "the store after a second cvm use --for ."
assert_eq "$(grep -c . "$CVM_ROOT/projects")" 1 "the project recorded once"
echo "use_for_own_wheels: the own wheels are imported once and are what PyTorch loads under cvm"

# --- Half-installed wheels: one line naming the folder and the fix, exit 2, nothing written ---
# refused VENV WHAT FOLDER DIST: `cvm use --for .` with VENV's python in a fresh project folder.
refused() {
    mkdir -p "$TEST_TMP/q" && cd "$TEST_TMP/q"
    CVM_PYTHON=$1/bin/python expect_refused "cvm: use --for .: the $2 $3 of torch 2.15.0" "$CVM" use --for .
    assert_contains "$ERR" "is half-installed"
    assert_contains "$ERR" "pip install --force-reinstall $4"
    [[ ! -e .cudaversion ]] || fail "a .cudaversion was written: $(cat .cudaversion)"
    assert_eq "$(store_ids)" "$before" "the store after the refusal"
    assert_eq "$(cat "$CVM_ROOT/projects" 2> /dev/null)" "$projects" "the projects cvm use recorded"
    CVM_PYTHON=$1/bin/python expect_rc 2 "$CVM" use --for . --json
    assert_eq "$(jq -r .error.code <<< "$OUT")" "invalid_input"
    cd "$TEST_TMP"
}
# Copies of the venv, each with one wheel damaged: first in the store above, then in an empty one.
cp -al "$venv" "$TEST_TMP/v1"
s1=$(compgen -G "$TEST_TMP/v1/lib/python3*/site-packages")
rm "$s1/nvidia_cudnn_cu13-$cudnn_release.dist-info/RECORD"
refused "$TEST_TMP/v1" "cuDNN wheel" "$s1/nvidia/cudnn" "nvidia-cudnn-cu13==$cudnn_release"
# The NCCL wheel is read after the cuDNN one: its damage leaves the whole cuDNN wheel unregistered too
# (a file its RECORD names is missing).
cp -al "$venv" "$TEST_TMP/v2"
s2=$(compgen -G "$TEST_TMP/v2/lib/python3*/site-packages")
rm "$s2/nvidia/nccl/lib/libnccl_device.bc"
refused "$TEST_TMP/v2" "NCCL wheel" "$s2/nvidia/nccl" "nvidia-nccl-cu13==$nccl_release"
export CVM_ROOT="$TEST_TMP/root2"
before=$(store_ids) projects=
refused "$TEST_TMP/v1" "cuDNN wheel" "$s1/nvidia/cudnn" "nvidia-cudnn-cu13==$cudnn_release"
refused "$TEST_TMP/v2" "NCCL wheel" "$s2/nvidia/nccl" "nvidia-nccl-cu13==$nccl_release"
# The same cuDNN build registered from another folder (another venv's copy of the wheel): the
# store holds one entry per id, and selecting that one would map files of two folders; refused.
export CVM_ROOT="$TEST_TMP/root3"
cp -al "$venv" "$TEST_TMP/v3"
s3=$(compgen -G "$TEST_TMP/v3/lib/python3*/site-packages")
expect_rc 0 "$CVM" import "$s3/nvidia/cudnn"
before=$(store_ids) projects=
cd "$TEST_TMP/q"
CVM_PYTHON=$venv/bin/python expect_rc 1 "$CVM" use --for .
assert_eq "$(wc -l <<< "$ERR")" 1 "one line"
assert_contains "$ERR" "cvm: use --for .: cudnn $cudnn_id is already registered from $s3/nvidia/cudnn, not from $cudnn_dir; run \`cvm uninstall $cudnn_id\`, then \`cvm use --for .\` again"
[[ ! -e .cudaversion ]] || fail "a .cudaversion was written: $(cat .cudaversion)"
assert_eq "$(store_ids)" "$before" "the store after the refusal"

# A selection that cannot be written (a folder named .cudaversion): what was imported for it is
# forgotten again.
export CVM_ROOT="$TEST_TMP/root4"
mkdir -p "$TEST_TMP/r/.cudaversion" && cd "$TEST_TMP/r"
expect_rc 0 "$CVM" import "$site/nvidia/cu13"
before=$(store_ids)
CVM_PYTHON=$venv/bin/python expect_rc 1 "$CVM" use --for .
assert_contains "$ERR" "cannot write $TEST_TMP/r/.cudaversion"
assert_contains "$ERR" "forgot cudnn $cudnn_id again: nothing was selected"
assert_eq "$(store_ids)" "$before" "the store after a selection that could not be written"
echo "use_for_own_wheels: half-installed wheels are refused in one line; nothing is written or left registered"
echo PASS
