#!/usr/bin/env bash
# cvm doctor's checks of the machine around the libraries: the driver (through fake
# /proc/driver/nvidia/version and nvidia-smi), several toolkits on PATH, CUDA_PATH pointing
# elsewhere, and PyTorch / TensorFlow in the active Python (a fake interpreter).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
command -v python3 >/dev/null || skip "python3 is needed to read the JSON"

doctor_toolkit "$TEST_TMP/cuda-11.2" 11.2.2 11.2.152
doctor_toolkit "$TEST_TMP/cuda-12.4" 12.4.1 12.4.127
doctor_cudnn8 "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77" 8.1.0 8.1.0
for d in cuda-11.2 cuda-12.4 cudnn-11.2-linux-x64-v8.1.0.77; do
    expect_rc 0 "$CVM" import "$TEST_TMP/$d"
done
mkdir -p "$TEST_TMP/proj"
cd "$TEST_TMP/proj"
expect_rc 0 "$CVM" use 11.2+8.1
# Only the test's folders on PATH, so the host's toolkits do not count.
BASE_PATH="$CVM_BIN:/usr/bin:/bin"

# 1. The driver: new enough, only through minor-version compatibility, too old, absent.
fake_driver 470.57.02 "Tesla T4"
expect_rc 0 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_eq "$(json_get 'd["driver"]["version"]')" "470.57.02"
assert_eq "$(json_get 'd["driver"]["gpus"]')" "['Tesla T4']"
fake_driver 450.80.02
expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "warning:driver-minor-compat"
fake_driver 418.39
expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor
assert_contains "$OUT" "driver-too-old"
assert_contains "$OUT" "fix: install NVIDIA driver"
# A kernel module answers (a GPU here): too old is an error.
expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "error:driver-too-old"
rm -f "$CVM_PROC_DRIVER_VERSION"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."\nexit 9\n' \
    > "$CVM_NVIDIA_SMI"
expect_rc 0 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "note:no-driver"
assert_eq "$(json_get 'd["healthy"]')" "True"
# Only the driver's user-space library (a machine without a GPU, or the module not loaded): its
# version is read from libcuda.so.1's real file, and "no driver" is not said.
mkdir -p "$TEST_TMP/libcuda"
: > "$TEST_TMP/libcuda/libcuda.so.535.261.03"
ln -s libcuda.so.535.261.03 "$TEST_TMP/libcuda/libcuda.so.1"
CVM_LIBCUDA="$TEST_TMP/libcuda/libcuda.so.1" expect_rc 0 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "note:driver-library-only"
assert_not_contains "$(finding_codes)" "no-driver"
assert_eq "$(json_get 'd["driver"]["version"]')" "535.261.03"
assert_eq "$(json_get 'd["driver"]["source"]')" "$TEST_TMP/libcuda/libcuda.so.535.261.03"
msg=$(json_get '[f["message"] for f in d["findings"] if f["code"] == "driver-library-only"][0]')
[[ $(grep -o "user-space library" <<< "$msg" | wc -l) == 1 ]] || fail "the finding says its source twice: $msg"
# Issue 35, finding 3: a driver library too old for the selection on a machine where no kernel
# module answers (a build machine) is a warning, not an error, and says why, in one line.
: > "$TEST_TMP/libcuda/libcuda.so.418.39"
ln -sfn libcuda.so.418.39 "$TEST_TMP/libcuda/libcuda.so.1"
CVM_LIBCUDA="$TEST_TMP/libcuda/libcuda.so.1" expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "note:driver-library-only"
assert_contains "$(finding_codes)" "warning:driver-too-old"
assert_not_contains "$(finding_codes)" "error:"
msg=$(json_get '[f["message"] for f in d["findings"] if f["code"] == "driver-too-old"][0]')
assert_contains "$msg" "no kernel module answers here"
[[ $msg != *$'\n'* ]] || fail "the finding is not one line: $msg"
CVM_LIBCUDA="$TEST_TMP/libcuda/libcuda.so.1" expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor
assert_contains "$OUT" "driver-too-old"
assert_not_contains "$OUT" "error"
fake_driver 525.60.13

# 2. Two toolkits' bin folders on PATH and CUDA_PATH naming the other one.
expect_rc 1 env PATH="$TEST_TMP/cuda-12.4/bin:$TEST_TMP/cuda-11.2/bin:$BASE_PATH" \
    CUDA_PATH="$TEST_TMP/cuda-12.4" "$CVM" doctor --json
assert_contains "$(finding_codes)" "warning:several-cuda-on-path"
assert_contains "$(finding_codes)" "warning:cuda-path-elsewhere"
assert_contains "$(json_get '[f["message"] for f in d["findings"] if f["code"] == "several-cuda-on-path"][0]')" \
    "$TEST_TMP/cuda-12.4/bin"
# cvm's environment fixes both.
expect_rc 0 env PATH="$TEST_TMP/cuda-12.4/bin:$TEST_TMP/cuda-11.2/bin:$BASE_PATH" \
    CUDA_PATH="$TEST_TMP/cuda-12.4" "$CVM" exec -- "$CVM" doctor --json
assert_not_contains "$(finding_codes)" "several-cuda-on-path"
assert_not_contains "$(finding_codes)" "cuda-path-elsewhere"

# 3. Frameworks in the active Python (a fake interpreter that prints its search path).
site="$TEST_TMP/py/lib/python3.10/site-packages"
mkdir -p "$site/tensorflow/python/platform" "$site/tensorflow-2.15.0.dist-info" \
    "$site/torch/lib" "$site/nvidia/cudnn/lib" "$site/nvidia_cudnn_cu12-8.9.2.26.dist-info"
echo "build_info = {'cuda_version': '12.2', 'cudnn_version': '8', 'is_cuda_build': True}" \
    > "$site/tensorflow/python/platform/build_info.py"
printf "__version__ = '2.1.2+cu121'\ncuda: Optional[str] = '12.1'\n" > "$site/torch/version.py"
: > "$site/nvidia/cudnn/lib/libcudnn.so.8"
echo "nvidia/cudnn/lib/libcudnn.so.8,sha256=x,0" > "$site/nvidia_cudnn_cu12-8.9.2.26.dist-info/RECORD"
mkdir -p "$TEST_TMP/py/bin"
printf '#!/bin/sh\necho %s\n' "'{\"version\": \"3.10.12\", \"path\": [\"\", \"$site\"]}'" \
    > "$TEST_TMP/py/bin/python3"
chmod +x "$TEST_TMP/py/bin/python3"
export CVM_PYTHON="$TEST_TMP/py/bin/python3"
expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_eq "$(json_get '[f["name"] + " " + f["version"] for f in d["python"]["frameworks"]]')" \
    "['pytorch 2.1.2+cu121', 'tensorflow 2.15.0']"
# TensorFlow 2.15 here was built with CUDA 12.2 while 11.2 is selected. Note: the nvidia wheel
# beside it counts as its own cuDNN, so this is the "extensions" warning, not an error.
assert_contains "$(finding_codes)" "framework-cuda-mismatch"
# Their own cuDNN 8.9.2 wheel's front library finds its sub-libraries after LD_LIBRARY_PATH (no
# RPATH in it), where cvm puts the selected 8.1: PyTorch would refuse the mixed set, and
# TensorFlow, which opens cuDNN by name, may load the selection's (issue 40).
assert_contains "$(finding_codes)" "error:framework-cudnn-refused"
assert_contains "$(finding_codes)" "warning:framework-cudnn-other"
fixes=$(json_get '" | ".join(f["fix"] for f in d["findings"] if f["code"] == "framework-cuda-mismatch")')
assert_contains "$fixes" "cvm use 12.2+8"
# Without the nvidia wheels TensorFlow loads the machine's cuDNN: an error.
rm -rf "$site/nvidia" "$site/nvidia_cudnn_cu12-8.9.2.26.dist-info"
expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "error:framework-cuda-mismatch"
expect_rc 1 env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor
assert_contains "$OUT" "TensorFlow 2.15.0"
# TensorFlow 2.5's build_info.py (the OrderedDict of pairs real wheels write since 2.4): a CUDA
# 11.2 build, not a CPU one; with 11.2 selected nothing is wrong, with 12.4 it does not match.
rm -rf "$site/tensorflow-2.15.0.dist-info" "$site/torch"
mkdir -p "$site/tensorflow-2.5.0.dist-info"
printf '%s\n' '# AUTOGENERATED BY bazel' 'import collections' \
    "build_info = collections.OrderedDict([('cpu_compiler', '/dt7/usr/bin/gcc'), ('cuda_compute_capabilities', ['sm_35', 'sm_50', 'sm_60', 'sm_70', 'sm_75', 'compute_80']), ('cuda_version', '11.2'), ('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False)])" \
    > "$site/tensorflow/python/platform/build_info.py"
env PATH="$BASE_PATH" "$CVM" exec -- "$CVM" doctor --json > "$TEST_TMP/tf25.json" || true
OUT=$(cat "$TEST_TMP/tf25.json")
assert_not_contains "$(finding_codes)" "framework-cpu-only"
assert_not_contains "$(finding_codes)" "framework-cuda-mismatch"
env PATH="$BASE_PATH" CVM_VERSION=12.4 "$CVM" exec -- "$CVM" doctor --json > "$TEST_TMP/tf25.json" || true
OUT=$(cat "$TEST_TMP/tf25.json")
assert_contains "$(finding_codes)" "error:framework-cuda-mismatch"
assert_contains "$(json_get '[f["message"] for f in d["findings"] if f["code"] == "framework-cuda-mismatch"][0]')" "11.2"
echo "PASS"
