#!/usr/bin/env bash
# cvm doctor and NCCL on a staged machine: which libnccl.so.2 a program started here and through
# cvm loads (its release read from the library itself) and the copies it hides; PyTorch's own NCCL
# (the nvidia-nccl wheel beside it) against the system's, as on the GPU machine (apt's 2.28.3 and
# torch's 2.28.9); an NCCL built for another CUDA major; the variables that switch NCCL's
# transports off and CUDA_MODULE_LOADING=EAGER.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
command -v python3 >/dev/null || skip "python3 is needed to read the JSON"
MK="python3 $CVM_SOURCE_DIR/tests/integration/make_archives.py"

# NVIDIA's apt libnccl2 2.28.3 in the machine's own library folder (found as ld.so's default).
$MK nccl-lib "$TEST_TMP/system/lib/libnccl.so.2.28.3" --version 2.28.3 --cuda 13.0
ln -s libnccl.so.2.28.3 "$TEST_TMP/system/lib/libnccl.so.2"
doctor_toolkit "$TEST_TMP/cuda-13.0" 13.0.2 13.0.96
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-13.0"
mkdir -p "$TEST_TMP/proj" && cd "$TEST_TMP/proj"
expect_rc 0 "$CVM" use 13.0
BASE_PATH="$CVM_BIN:/usr/bin:/bin"
fake_driver 580.95.05

# 1. No framework: the system's NCCL is what both scenarios load, read as 2.28.3 from its text.
expect_rc 0 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_eq "$(json_get '[(l["scenario"], l["version"], l["mechanism"]) for l in d["libraries"] if l["family"] == "nccl"]')" \
    "[('current', '2.28.3', 'default folder'), ('selected', '2.28.3', 'default folder')]"
expect_rc 0 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor
assert_contains "$OUT" "libnccl.so.2"

# 2. A Python whose PyTorch has its own NCCL 2.28.9 (the nvidia-nccl-cu13 wheel): two releases.
site="$TEST_TMP/py/lib/python3.12/site-packages"
mkdir -p "$site/torch/lib" "$site/nvidia/nccl/lib" "$site/nvidia_nccl_cu13-2.28.9.dist-info"
printf "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n" > "$site/torch/version.py"
$MK nccl-lib "$site/nvidia/nccl/lib/libnccl.so.2" --version 2.28.9 --cuda 13.0
echo "nvidia/nccl/lib/libnccl.so.2,sha256=$(sha256sum "$site/nvidia/nccl/lib/libnccl.so.2" | cut -c1-8),1" > "$site/nvidia_nccl_cu13-2.28.9.dist-info/RECORD"
mkdir -p "$TEST_TMP/py/bin"
printf '#!/bin/sh\necho %s\n' "'{\"version\": \"3.12.3\", \"path\": [\"\", \"$site\"]}'" > "$TEST_TMP/py/bin/python3"
chmod +x "$TEST_TMP/py/bin/python3"
export CVM_PYTHON="$TEST_TMP/py/bin/python3"
expect_rc 1 env PATH="$BASE_PATH" "$CVM" doctor --json
assert_contains "$(finding_codes)" "note:framework-own-nccl"
assert_contains "$(finding_codes)" "warning:nccl-two-versions"
two=$(finding_message nccl-two-versions)
assert_contains "$two" "loads NCCL 2.28.3 ($TEST_TMP/system/lib/libnccl.so.2"
assert_contains "$two" "PyTorch 2.11.0+cu130 uses NCCL 2.28.9 ($site/nvidia/nccl/lib/libnccl.so.2)"
assert_contains "$(json_get '[f["fix"] for f in d["findings"] if f["code"] == "nccl-two-versions"][0]')" \
    "cvm import $site/nvidia/nccl"
assert_eq "$(json_get '[f["own_nccl_version"] + " " + f["own_nccl_cuda"] for f in d["python"]["frameworks"]]')" "['2.28.9 13.0']"
expect_rc 1 env PATH="$BASE_PATH" "$CVM" doctor
assert_contains "$OUT" "own NCCL 2.28.9"

# 3. PyTorch's NCCL selected (imported from the wheel): a program run through cvm loads it, the
# system's copy is what it hides; this shell still loads the system's.
expect_rc 0 "$CVM" import "$site/nvidia/nccl"
expect_rc 0 "$CVM" use 13.0+nccl2.28.9
expect_rc 1 env PATH="$BASE_PATH" "$CVM" doctor --json
assert_eq "$(json_get '[(l["scenario"], l["version"], l["from_selection"]) for l in d["libraries"] if l["family"] == "nccl"]')" \
    "[('current', '2.28.3', False), ('selected', '2.28.9', True)]"
assert_eq "$(json_get 'd["selection"]["nccl"]["id"]')" "2.28.9-cuda13.0"
assert_contains "$(finding_codes)" "warning:nccl-shadowed"
assert_contains "$(finding_message nccl-shadowed)" "a program run through cvm loads libnccl.so.2"
assert_contains "$(finding_message nccl-shadowed)" "$TEST_TMP/system/lib/libnccl.so.2 (NCCL 2.28.3)"
assert_contains "$(finding_codes)" "warning:library-not-selected"
# Through cvm, the same release as PyTorch's: that pairing says nothing.
assert_not_contains "$(json_get '" ".join(f["message"] for f in d["findings"] if f["code"] == "nccl-two-versions")')" \
    "a program run through cvm"

# 4. An NCCL built for another CUDA major than the toolkit, which a program run through cvm loads
# (cvm selects only NCCL builds of the toolkit's major; this one comes from LD_LIBRARY_PATH).
export CVM_PYTHON=""
mkdir -p "$TEST_TMP/n12/lib"
$MK nccl-lib "$TEST_TMP/n12/lib/libnccl.so.2.21.5" --version 2.21.5 --cuda 12.4
ln -s libnccl.so.2.21.5 "$TEST_TMP/n12/lib/libnccl.so.2"
expect_rc 0 "$CVM" use 13.0
expect_rc 1 env PATH="$BASE_PATH" LD_LIBRARY_PATH="$TEST_TMP/n12/lib" "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "warning:nccl-cuda-mismatch"
assert_contains "$(finding_message nccl-cuda-mismatch)" "the NCCL 2.21.5 a program run through cvm loads ($TEST_TMP/n12/lib/libnccl.so.2)"
assert_contains "$(finding_message nccl-cuda-mismatch)" "built for CUDA 12.4, but the selected toolkit is CUDA 13.0.2"
# It hides the system's 2.28.3.
assert_contains "$(finding_codes)" "warning:nccl-shadowed"

# 5. Variables: NCCL's transports switched off, CUDA_MODULE_LOADING=EAGER; notes only.
expect_rc 0 "$CVM" use 13.0
expect_rc 0 env PATH="$BASE_PATH" NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=0 CUDA_MODULE_LOADING=EAGER "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "note:nccl-transport-disabled"
assert_contains "$(finding_codes)" "note:cuda-module-loading-eager"
assert_eq "$(json_get 'len([f for f in d["findings"] if f["code"] == "nccl-transport-disabled"])')" "1"
assert_contains "$(finding_message nccl-transport-disabled)" "NCCL_P2P_DISABLE=1 is set"
echo "doctor_nccl: ok"
