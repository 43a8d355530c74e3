#!/usr/bin/env bash
# Issue 40, first step: what the real PyTorch wheel loads under cvm, predicted from files by
# `cvm use` and `cvm doctor`, then compared with what PyTorch does under `cvm exec`
# (torch.backends.cudnn.version() and the cuDNN files the process maps, /proc/self/maps; no GPU
# is needed: PyTorch reads and checks cuDNN's version without one).
#  - torch 2.15.0 from PyPI with the wheels it pins (cuDNN 9.26.0.51), in a venv cached outside the
#    checkout (lib_wheels.sh). Its libcudnn.so.9 carries DT_RPATH $ORIGIN: it finds its own
#    sub-libraries before LD_LIBRARY_PATH, so no selected cuDNN (the real 13.0's 9.19, the 9.28
#    wheel) mixes in; cvm must say so and warn of nothing.
#  - The same venv with its libcudnn.so.9 carrying DT_RUNPATH $ORIGIN instead, as cuDNN 9.19's
#    wheel does (set with patchelf on a copy): the selection's sub-libraries come first; a newer
#    selection gives a mixed set PyTorch accepts (a warning), an older one a release PyTorch refuses
#    (an error before it raises), its own release nothing.
# The first run downloads about 2.8 GB into CVM_TEST_CACHE; later runs take about 60 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
torch_real_store
expect_rc 0 "$CVM" import "$own"

# torch_check PYTHON SPEC: under `cvm exec SPEC`, PyTorch's answer (a number, or RAISED and its
# message) in $TORCH_SAYS, and the cuDNN files the process maps (folder/name without .so*, in the
# order of their names) in $TORCH_MAPS.
torch_check() {
    expect_rc 0 "$CVM" exec "$2" -- "$1" -I -W ignore -c '
import torch
try:
    print("version", torch.backends.cudnn.version())
except RuntimeError as e:
    print("RAISED", str(e).splitlines()[0])
import os
print("maps", " ".join(sorted({os.path.dirname(l.split()[-1]) + "/" + os.path.basename(l.split()[-1]).split(".so")[0]
                              for l in open("/proc/self/maps") if "libcudnn" in l}, key=os.path.basename)))'
    TORCH_SAYS=$(grep -E '^(version|RAISED)' <<< "$OUT")
    TORCH_MAPS=$(sed -n 's/^maps //p' <<< "$OUT")
}
# --- the real wheel: RPATH, its own cuDNN whatever is selected ---
export CVM_PYTHON=$torch_venv/bin/python
readelf -d "$own/lib/libcudnn.so.9" | grep -q 'RPATH.*\$ORIGIN' || fail "the cuDNN 9.26 wheel's libcudnn.so.9 has no RPATH \$ORIGIN"
for sel in 9.19 9.28 9.26; do
    use_says "13.0+$sel"
    assert_not_contains "$ERR" "mixed cuDNN" "cvm use 13.0+$sel with torch 2.15"
    assert_not_contains "$ERR" "error ahead" "cvm use 13.0+$sel with torch 2.15"
    doctor_code "13.0+$sel"
    assert_eq "$DOCTOR_CODE" "note:framework-own-cudnn" "doctor with 13.0+$sel"
    torch_check "$CVM_PYTHON" "13.0+$sel"
    assert_eq "$TORCH_SAYS" "version 92600" "torch.backends.cudnn.version() with 13.0+$sel"
    assert_eq "$TORCH_MAPS" "$own/lib/libcudnn $own/lib/libcudnn_graph" "what torch maps with 13.0+$sel"
done
echo "doctor_torch_real: the real wheel keeps its own cuDNN under every selection, as predicted"

# --- the same with DT_RUNPATH (as cuDNN 9.19's wheel): the selection's sub-libraries come first ---
runpath_venv "$torch_venv" "$TEST_TMP/venv"
rm -rf "$CVM_ROOT" && expect_rc 0 "$CVM" import "$cuda130"
expect_rc 0 "$CVM" import "$site/nvidia/cudnn"
expect_rc 0 "$CVM" import "$cudnn928"
# A newer selection: a mixed set PyTorch accepts; predicted as a warning.
use_says 13.0+9.28
assert_contains "$ERR" "warning: PyTorch 2.15.0+cu132 in $CVM_PYTHON would load a mixed cuDNN under cvm: its own front library 9.26.0.51"
assert_contains "$ERR" "select its own cuDNN and NCCL in one command: \`cvm use --for .\`"
assert_contains "$ERR" "or only its cuDNN: \`cvm import $site/nvidia/cudnn\`, then \`cvm use 13.0.2+9.26.0.51\`"
doctor_code 13.0+9.28
assert_eq "$DOCTOR_CODE" "warning:framework-cudnn-mixed"
torch_check "$CVM_PYTHON" 13.0+9.28
assert_eq "$TORCH_SAYS" "version 92801" "torch with 13.0+9.28 reports the sub-library's release"
assert_eq "$TORCH_MAPS" "$lib/libcudnn $cudnn928/lib/libcudnn_graph" "torch maps a mixed set with 13.0+9.28"
# An older one: PyTorch refuses it; predicted as an error before it raises.
use_says 13.0+9.19
assert_contains "$ERR" "error ahead: PyTorch 2.15.0+cu132 in $CVM_PYTHON would load a mixed cuDNN"
assert_contains "$ERR" "it refuses 9.19.0 (built with 9.26.0"
doctor_code 13.0+9.19
assert_eq "$DOCTOR_CODE" "error:framework-cudnn-refused"
# `cvm shell` (a session override) says the same before the shell takes it.
expect_rc 0 "$CVM" shell --shell bash 13.0+9.19
assert_contains "$OUT" "CVM_VERSION"
assert_contains "$ERR" "error ahead: PyTorch 2.15.0+cu132 in $CVM_PYTHON would load a mixed cuDNN"
torch_check "$CVM_PYTHON" 13.0+9.19
assert_contains "$TORCH_SAYS" "RAISED cuDNN version incompatibility"
assert_contains "$TORCH_SAYS" "but found runtime version (9, 19, 0)"
# Its own release, imported as the warning says: nothing to say, nothing mixed.
use_says 13.0+9.26
assert_not_contains "$ERR" "mixed cuDNN"
torch_check "$CVM_PYTHON" 13.0+9.26
assert_eq "$TORCH_SAYS" "version 92600"
assert_eq "$TORCH_MAPS" "$lib/libcudnn $lib/libcudnn_graph"
echo "doctor_torch_real: with RUNPATH, every prediction matched what PyTorch did"
echo PASS
