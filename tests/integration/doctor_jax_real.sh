#!/usr/bin/env bash
# Issue 40, JAX: what the real JAX CUDA 13 plugin loads under cvm, predicted from files by `cvm use`
# and `cvm doctor`, then compared with what JAX does under `cvm exec` (the cuDNN files the process
# maps, /proc/self/maps, and the releases its plugin reports).
#  - jax 0.10.2 with jax-cuda13-plugin and -pjrt from PyPI, and the cuDNN wheel 9.26.0.51 (lib_wheels.sh's
#    JAX), in a venv cached outside the checkout. The plugin was built with cuDNN 9.12 (its METADATA:
#    nvidia-cudnn-cu13<10.0,>=9.12.0.46; its _versions.cudnn_build_version() says 91200). The wheel's
#    libcudnn.so.9 carries DT_RPATH $ORIGIN: no selected cuDNN (the real 13.0's 9.19, the 9.28 wheel)
#    mixes in; cvm must say so and warn of nothing.
#  - The same venv with its libcudnn.so.9 carrying DT_RUNPATH $ORIGIN instead, as cuDNN 9.19's wheel
#    does (patchelf on a copy): the selection's sub-libraries come first; a newer selection gives a
#    mixed set XLA accepts (a warning), its own release nothing.
#  - No cuDNN for CUDA 13 is older than 9.12 (the first one; PyPI's nvidia-cudnn-cu13 begins at
#    9.12.0.46), so no CUDA 13 selection can make that build refuse. The refusal is seen with JAX's
#    CUDA 12 plugin (built with cuDNN 9.8: nvidia-cudnn-cu12<10.0,>=9.8), its own cuDNN 9.26 given
#    RUNPATH the same way, the real CUDA 12.9 runtime wheel as the toolkit and the cuDNN 9.5 wheel for
#    CUDA 12 selected: an error before XLA fails; 9.28 for CUDA 12: a warning.
# No GPU is needed. What makes JAX load its cuDNN without one: `jax.devices()` runs the plugin's
# initialize() (jax_plugins/xla_cuda13/__init__.py), which first preloads the wheels' libraries by full
# path (_load_nvidia_libraries: nvidia/cudnn/lib/libcudnn.so.9, skipping wheels that are absent), then
# checks their versions (_check_cuda_versions: jax_cuda13_plugin._versions.cudnn_get_version(), for
# which cuDNN's front library opens libcudnn_graph.so.9 by name) before it asks for the devices; with
# none it logs the failure and falls back to the CPU. The releases are read again from that module.
# XLA's own refusal (cuda_dnn.cc: same major, minor at least the build's) needs a GPU; the test applies
# that rule to the releases the process reports. (The plugin's own check, _check_cuda_versions, lets
# every cuDNN 9 pass: it compares the build's release divided by 100, 912, with the runtime's, 91900.)
# The first run downloads about 3.5 GB into CVM_TEST_CACHE (three venvs, 6.8 GB); later runs take about 60 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
cuda13_store
wheel_set_venv jax-0.10.2 "${JAX[@]}"
jax_venv=$WHEEL_VENV jax_site=$WHEEL_SITE
own=$jax_site/nvidia/cudnn
cudnn919=$(dirname "$(readlink -f "$cuda130/lib/libcudnn_graph.so.9")")
expect_rc 0 "$CVM" import "$own"

# jax_check PYTHON SPEC [PLUGIN]: under `cvm exec SPEC`, the cuDNN releases JAX's plugin (PLUGIN,
# jax_cuda13_plugin unless given) reports ("built RUNTIME", cudnnGetVersion's numbers) in $JAX_CUDNN,
# and the cuDNN files the process maps (folder/name without .so*, in the order of their names) in $JAX_MAPS.
jax_check() {
    expect_rc 0 "$CVM" exec "$2" -- "$1" -I -W ignore -c '
import importlib, os, sys, jax
jax.devices()
_versions = importlib.import_module(sys.argv[1] + "._versions")
print("cudnn", _versions.cudnn_build_version(), _versions.cudnn_get_version())
print("maps", " ".join(sorted({os.path.dirname(l.split()[-1]) + "/" + os.path.basename(l.split()[-1]).split(".so")[0]
                              for l in open("/proc/self/maps") if "libcudnn" in l}, key=os.path.basename)))' \
        "${3:-jax_cuda13_plugin}"
    JAX_CUDNN=$(sed -n 's/^cudnn //p' <<< "$OUT")
    JAX_MAPS=$(sed -n 's/^maps //p' <<< "$OUT")
}
# xla_accepts: XLA's rule (cuda_dnn.cc) on the releases in $JAX_CUDNN: the same major, a minor at
# least the build's.
xla_accepts() {
    local built=${JAX_CUDNN% *} runtime=${JAX_CUDNN#* }
    ((runtime / 10000 == built / 10000 && runtime % 10000 / 100 >= built % 10000 / 100))
}
# doctor_jax SPEC: doctor_code, and in $DOCTOR_JAX the JAX doctor found ("version cuda cudnn own_cudnn_version").
doctor_jax() {
    doctor_code "$1"
    DOCTOR_JAX=$(jq -r '.python.frameworks[] | select(.name == "jax") | "\(.version) \(.cuda) \(.cudnn) \(.own_cudnn_version)"' <<< "$OUT")
}

# --- the real wheel: RPATH, its own cuDNN whatever is selected ---
export CVM_PYTHON=$jax_venv/bin/python
readelf -d "$own/lib/libcudnn.so.9" | grep -q 'RPATH.*\$ORIGIN' || fail "the cuDNN 9.26 wheel's libcudnn.so.9 has no RPATH \$ORIGIN"
for sel in 9.19 9.28 9.26; do
    use_says "13.0+$sel"
    assert_not_contains "$ERR" "mixed cuDNN" "cvm use 13.0+$sel with jax 0.10.2"
    assert_not_contains "$ERR" "error ahead" "cvm use 13.0+$sel with jax 0.10.2"
    doctor_jax "13.0+$sel"
    assert_eq "$DOCTOR_CODE" "note:framework-own-cudnn" "doctor with 13.0+$sel"
    assert_eq "$DOCTOR_JAX" "0.10.2 13.0 9.12.0.46 9.26.0.51" "the JAX doctor reads from the files"
    jax_check "$CVM_PYTHON" "13.0+$sel"
    # The build's release doctor read (9.12.0.46, the METADATA's lower bound) is the one compiled in.
    assert_eq "$JAX_CUDNN" "91200 92600" "JAX's cuDNN releases with 13.0+$sel"
    assert_eq "$JAX_MAPS" "$own/lib/libcudnn $own/lib/libcudnn_graph" "what JAX maps with 13.0+$sel"
done
echo "doctor_jax_real: the real wheel keeps its own cuDNN under every selection, as predicted"

# --- the same with DT_RUNPATH (as cuDNN 9.19's wheel): the selection's sub-libraries come first ---
runpath_venv "$jax_venv" "$TEST_TMP/venv"
rm -rf "$CVM_ROOT" && expect_rc 0 "$CVM" import "$cuda130"
expect_rc 0 "$CVM" import "$site/nvidia/cudnn"
expect_rc 0 "$CVM" import "$cudnn928"
# Newer selections than the build's 9.12: a mixed set XLA accepts; predicted as a warning.
use_says 13.0+9.28
assert_contains "$ERR" "warning: JAX 0.10.2 in $CVM_PYTHON would load a mixed cuDNN under cvm: its own front library 9.26.0.51"
assert_contains "$ERR" "it accepts 9.28.1 (built with 9.12.0)"
assert_contains "$ERR" "select its own cuDNN: \`cvm import $site/nvidia/cudnn\`, then \`cvm use 13.0.2+9.26.0.51\`"
doctor_code 13.0+9.28
assert_eq "$DOCTOR_CODE" "warning:framework-cudnn-mixed"
jax_check "$CVM_PYTHON" 13.0+9.28
assert_eq "$JAX_CUDNN" "91200 92801" "JAX reports the sub-library's release with 13.0+9.28"
assert_eq "$JAX_MAPS" "$lib/libcudnn $cudnn928/lib/libcudnn_graph" "JAX maps a mixed set with 13.0+9.28"
xla_accepts || fail "XLA would refuse $JAX_CUDNN, which cvm predicted it accepts"
use_says 13.0+9.19
assert_contains "$ERR" "warning: JAX 0.10.2 in $CVM_PYTHON would load a mixed cuDNN under cvm"
assert_contains "$ERR" "it accepts 9.19.0 (built with 9.12.0)"
doctor_code 13.0+9.19
assert_eq "$DOCTOR_CODE" "warning:framework-cudnn-mixed"
# `cvm shell` (a session override) says the same before the shell takes it.
expect_rc 0 "$CVM" shell --shell bash 13.0+9.19
assert_contains "$OUT" "CVM_VERSION"
assert_contains "$ERR" "warning: JAX 0.10.2 in $CVM_PYTHON would load a mixed cuDNN under cvm"
jax_check "$CVM_PYTHON" 13.0+9.19
assert_eq "$JAX_CUDNN" "91200 91900" "JAX reports the sub-library's release with 13.0+9.19"
assert_eq "$JAX_MAPS" "$lib/libcudnn $cudnn919/libcudnn_graph" "JAX maps a mixed set with 13.0+9.19"
xla_accepts || fail "XLA would refuse $JAX_CUDNN, which cvm predicted it accepts"
# Its own release, imported as the warning says: nothing to say, nothing mixed.
use_says 13.0+9.26
assert_not_contains "$ERR" "mixed cuDNN"
doctor_code 13.0+9.26
assert_eq "$DOCTOR_CODE" "note:framework-own-cudnn"
jax_check "$CVM_PYTHON" 13.0+9.26
assert_eq "$JAX_CUDNN" "91200 92600"
assert_eq "$JAX_MAPS" "$lib/libcudnn $lib/libcudnn_graph"
echo "doctor_jax_real: with RUNPATH, every prediction matched what JAX did"

# --- CUDA 12, with RUNPATH: a selection older than the build's cuDNN (9.8), which XLA refuses ---
wheel_set_venv jax-cuda12-0.10.2 "${JAX_CUDA12[@]}"
jax12_venv=$WHEEL_VENV jax12_site=$WHEEL_SITE
wheel_venv_cuda12
site12=$WHEEL_SITE
wheel_venv cudnn-cu12-9.5 "$CUDNN_CU12_OLD"
cudnn95=$WHEEL_SITE/nvidia/cudnn
runpath_venv "$jax12_venv" "$TEST_TMP/venv12"
rm -rf "$CVM_ROOT"
expect_rc 0 "$CVM" import "$site12"
expect_rc 0 "$CVM" import "$cudnn95"
expect_rc 0 "$CVM" import "$site/nvidia/cudnn"
use_says 12.9+9.5
assert_contains "$ERR" "error ahead: JAX 0.10.2 in $CVM_PYTHON would load a mixed cuDNN under cvm: its own front library 9.26.0.51"
assert_contains "$ERR" "it refuses 9.5.1 (built with 9.8.0: it needs 9.8 or a later 9.x), so XLA fails at its first cuDNN use: \"Loaded runtime CuDNN library: 9.5.1 but source was compiled with: 9.8.0\""
doctor_jax 12.9+9.5
assert_eq "$DOCTOR_CODE" "error:framework-cudnn-refused"
assert_eq "$DOCTOR_JAX" "0.10.2 12.1 9.8 9.26.0.51" "the CUDA 12 JAX doctor reads from the files"
jax_check "$CVM_PYTHON" 12.9+9.5 jax_cuda12_plugin
assert_eq "$JAX_CUDNN" "90800 90501" "JAX reports the sub-library's release with 12.9+9.5"
assert_eq "$JAX_MAPS" "$lib/libcudnn $cudnn95/lib/libcudnn_graph" "JAX maps a mixed set with 12.9+9.5"
! xla_accepts || fail "XLA would accept $JAX_CUDNN, which cvm predicted it refuses"
use_says 12.9+9.28
assert_contains "$ERR" "warning: JAX 0.10.2 in $CVM_PYTHON would load a mixed cuDNN under cvm"
assert_contains "$ERR" "it accepts 9.28.0 (built with 9.8.0)"
doctor_code 12.9+9.28
assert_eq "$DOCTOR_CODE" "warning:framework-cudnn-mixed"
jax_check "$CVM_PYTHON" 12.9+9.28 jax_cuda12_plugin
assert_eq "$JAX_CUDNN" "90800 92800" "JAX reports the sub-library's release with 12.9+9.28"
assert_eq "$JAX_MAPS" "$lib/libcudnn $site12/nvidia/cudnn/lib/libcudnn_graph" "JAX maps a mixed set with 12.9+9.28"
xla_accepts || fail "XLA would refuse $JAX_CUDNN, which cvm predicted it accepts"
echo "doctor_jax_real: CUDA 12: the refusal and the mixed set matched what JAX did"
echo PASS
