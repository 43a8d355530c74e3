#!/usr/bin/env bash
# Sub-library truth: a folder with a wheel's cuDNN 9.19 main library beside sub-libraries of the
# system's 9.14 (PyTorch issue 188892's shape) is flagged, each file named with the version its
# own bytes or owner give: version symbols of libraries built here, dpkg's record, file names.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
T=$TEST_TMP
# The wheel's folder: 9.19 main library and the sub-libraries that carry their version.
W=$T/venv/lib/python3.11/site-packages
wl=$W/nvidia/cudnn/lib
vso "$wl" libcudnn.so.9
vso "$wl" libcudnn_ops.so.9 cudnn_ops_infer_version 0x091300
vso "$wl" libcudnn_adv.so.9 cudnn_adv_infer_version 0x091300
vso "$wl" libcudnn_cnn.so.9
wheel_record "$W" nvidia_cudnn_cu12-9.19.0.56 nvidia/cudnn/lib/libcudnn.so.9 nvidia/cudnn/lib/libcudnn_ops.so.9 \
    nvidia/cudnn/lib/libcudnn_adv.so.9 nvidia/cudnn/lib/libcudnn_cnn.so.9
# The system's 9.14 (NVIDIA's packages): the rest of the set.
sl=$TEST_TMP/system/lib
vso "$sl" libcudnn_graph.so.9 cudnn_graph_version 0x090e00
vso "$sl" libcudnn_heuristic.so.9
vso "$sl" libcudnn_engines_precompiled.so.9
vso "$sl" libcudnn_engines_runtime_compiled.so.9.14.0
ln -s libcudnn_engines_runtime_compiled.so.9.14.0 "$sl/libcudnn_engines_runtime_compiled.so.9"
export CVM_DPKG_DIR=$T/dpkg
mkdir -p "$CVM_DPKG_DIR/info"
printf '%s\n' /. "$sl/libcudnn_heuristic.so.9" "$sl/libcudnn_engines_precompiled.so.9" \
    > "$CVM_DPKG_DIR/info/libcudnn9-cuda-12:amd64.list"
printf 'Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.14.0.64-1\n\n' > "$CVM_DPKG_DIR/status"

export LD_LIBRARY_PATH=$wl
rc=0; OUT=$("$CVM" doctor --json) || rc=$?
[[ $rc == 1 ]] || fail "doctor found no problem in a mixed cuDNN (exit $rc)"
codes=$(finding_codes)
assert_contains "$codes" "error:sublibraries-mixed"
[[ $(grep -o sublibraries-mixed <<<"$codes" | wc -l) == 1 ]] || fail "one finding per mixed set, got: $codes"
msg=$(json_get '[f for f in d["findings"] if f["code"] == "sublibraries-mixed"][0]["message"]')
assert_contains "$msg" "of different releases"
assert_contains "$msg" "libcudnn.so.9 9.19.0.56 (wheel nvidia_cudnn_cu12) in $wl"
assert_contains "$msg" "libcudnn_ops.so.9 9.19.0 (symbol cudnn_ops_infer_version) in $wl"
assert_contains "$msg" "libcudnn_graph.so.9 9.14.0 (symbol cudnn_graph_version) in $sl"
assert_contains "$msg" "libcudnn_engines_precompiled.so.9 9.14.0.64 (dpkg libcudnn9-cuda-12) in $sl"
assert_contains "$msg" "libcudnn_engines_runtime_compiled.so.9 9.14.0 (file name) in $sl"
fix=$(json_get '[f for f in d["findings"] if f["code"] == "sublibraries-mixed"][0]["fix"]')
assert_contains "$fix" "upgrade the package libcudnn9-cuda-12 (9.14.0.64-1: libcudnn_heuristic.so.9, libcudnn_engines_precompiled.so.9) to cuDNN 9.19.0 or remove it (\`apt-get remove libcudnn9-cuda-12\`)"
assert_not_contains "$fix" "ld.so.conf"
# The libraries' versions are the files' own.
ops=$(json_get '[l["version"] for l in d["libraries"] if l["name"] == "libcudnn_ops.so.9" and l["scenario"] == "current"][0]')
assert_eq "$ops" "9.19.0"
# A toolkit selected without cuDNN: the cuDNN a program loads is still looked at.
make_toolkit "$T/cuda-12.4" 12.4.1
expect_rc 0 "$CVM" import "$T/cuda-12.4"
mkdir -p "$T/proj" && cd "$T/proj" && expect_rc 0 "$CVM" use 12.4
rc=0; OUT=$("$CVM" doctor --json) || rc=$?
[[ $rc == 1 ]] || fail "doctor found no problem in a mixed cuDNN with a toolkit selected alone (exit $rc)"
assert_contains "$(finding_codes)" "error:sublibraries-mixed"
assert_not_contains "$(finding_codes)" "library-outside-selection"
cd "$T"

# One release in two folders is a warning of its own kind.
vso "$sl" libcudnn_graph.so.9 cudnn_graph_version 0x091300
rm "$sl/libcudnn_engines_runtime_compiled.so.9.14.0" "$sl/libcudnn_engines_runtime_compiled.so.9" \
   "$CVM_DPKG_DIR/info/libcudnn9-cuda-12:amd64.list"
for f in libcudnn_heuristic.so.9 libcudnn_engines_precompiled.so.9 libcudnn_engines_runtime_compiled.so.9; do
    vso "$sl" "$f"
done
mkdir -p "$T/system/include"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n' > "$T/system/include/cudnn_version.h"
OUT=$("$CVM" doctor --json) || true
msg=$(json_get '[f for f in d["findings"] if f["code"] == "sublibraries-mixed"][0]["message"]')
assert_contains "$msg" "from different folders"
assert_not_contains "$msg" "of different releases"

# One complete set in one folder: nothing to say.
unset LD_LIBRARY_PATH
for f in libcudnn.so.9 libcudnn_ops.so.9 libcudnn_adv.so.9 libcudnn_cnn.so.9; do cp "$wl/$f" "$sl/"; done
OUT=$("$CVM" doctor --json) || true
codes=$(finding_codes)
assert_not_contains "$codes" "sublibraries-mixed"
echo "compat_cudnn_set: ok"
