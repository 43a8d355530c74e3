#!/usr/bin/env bash
# Sub-library truth from the owners' records, the files' bytes checked: a wheel whose RECORD
# (real sha256, as pip writes it) no longer matches one replaced file; a folder assembled by hand
# from copies of a wheel's and a dpkg package's files (found by hash: the engines libraries carry
# no version of their own); a dpkg-owned file altered after its md5sums were written.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
command -v python3 >/dev/null || skip "python3 writes the RECORD"
T=$TEST_TMP
finding() { json_get "[f[\"$1\"] for f in d[\"findings\"] if f[\"code\"] == \"sublibraries-mixed\"][0]"; }

# The wheel: cuDNN 9.19.0.56. The main library and the engines carry no version symbol.
W=$T/venv/lib/python3.11/site-packages
wl=$W/nvidia/cudnn/lib
vso "$wl" libcudnn.so.9
vso "$wl" libcudnn_graph.so.9 cudnn_graph_version 0x091300
vso "$wl" libcudnn_ops.so.9 cudnn_ops_infer_version 0x091300
echo 'int heuristic_919(void) { return 919; }' > "$T/h919.c"
"$CC_BIN" -shared -fPIC -o "$wl/libcudnn_heuristic.so.9" "$T/h919.c" -Wl,-soname,libcudnn_heuristic.so.9
echo 'int engines_919(void) { return 919; }' > "$T/e919.c"
"$CC_BIN" -shared -fPIC -o "$wl/libcudnn_engines_precompiled.so.9" "$T/e919.c" -Wl,-soname,libcudnn_engines_precompiled.so.9
wheel_record "$W" nvidia_cudnn_cu12-9.19.0.56 nvidia/cudnn/lib/libcudnn.so.9 nvidia/cudnn/lib/libcudnn_graph.so.9 \
    nvidia/cudnn/lib/libcudnn_ops.so.9 nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9 \
    nvidia/cudnn/lib/libcudnn_heuristic.so.9

# The system's 9.14 (NVIDIA's packages): a real file with its full version and the soname link.
sl=$T/system/lib
mkdir -p "$sl"
echo 'int engines_914(void) { return 914; } int more_914(void) { return 1; }' > "$T/e914.c"
"$CC_BIN" -shared -fPIC -o "$sl/libcudnn_engines_precompiled.so.9.14.0" "$T/e914.c" -Wl,-soname,libcudnn_engines_precompiled.so.9
ln -s libcudnn_engines_precompiled.so.9.14.0 "$sl/libcudnn_engines_precompiled.so.9"
vso "$sl" libcudnn_heuristic.so.9
export CVM_DPKG_DIR=$T/dpkg
mkdir -p "$CVM_DPKG_DIR/info"
printf '%s\n' /. "$sl/libcudnn_engines_precompiled.so.9" "$sl/libcudnn_engines_precompiled.so.9.14.0" \
    "$sl/libcudnn_heuristic.so.9" > "$CVM_DPKG_DIR/info/libcudnn9-cuda-12:amd64.list"
(cd / && md5sum "${sl#/}/libcudnn_engines_precompiled.so.9.14.0" "${sl#/}/libcudnn_heuristic.so.9") \
    > "$CVM_DPKG_DIR/info/libcudnn9-cuda-12:amd64.md5sums"
printf 'Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.14.0.64-1\n\n' > "$CVM_DPKG_DIR/status"

# 1. Intact wheel: one release, nothing to say; the engines' release comes from the RECORD.
export LD_LIBRARY_PATH=$wl
OUT=$("$CVM" doctor --json) || true
assert_not_contains "$(finding_codes)" "sublibraries-mixed"
eng=$(json_get '[l["version"] for l in d["libraries"] if l["name"] == "libcudnn_engines_precompiled.so.9" and l["scenario"] == "current"][0]')
assert_eq "$eng" "9.19.0"

# 2. One file of the wheel replaced by the system's 9.14 engines: its hash no longer matches the
# RECORD, and it is a copy of the package's file. The fix reinstalls the wheel.
cp "$sl/libcudnn_engines_precompiled.so.9.14.0" "$wl/libcudnn_engines_precompiled.so.9"
rc=0; OUT=$("$CVM" doctor --json) || rc=$?
[[ $rc == 1 ]] || fail "doctor found no problem in a wheel with a replaced file (exit $rc)"
msg=$(finding message)
assert_contains "$msg" "of different releases"
assert_contains "$msg" "libcudnn.so.9 9.19.0.56 (wheel nvidia_cudnn_cu12) in $wl"
assert_contains "$msg" "libcudnn_engines_precompiled.so.9 9.14.0.64 (dpkg libcudnn9-cuda-12, a copy of $sl/libcudnn_engines_precompiled.so.9.14.0), not the file wheel nvidia_cudnn_cu12 9.19.0.56 installed in $wl"
fix=$(finding fix)
assert_contains "$fix" "\`pip install --force-reinstall --no-deps nvidia-cudnn-cu12==9.19.0.56\` restores libcudnn_engines_precompiled.so.9"
assert_not_contains "$fix" "ld.so.conf"

# 2b. Replaced by bytes no owner knows: still flagged, as altered.
echo 'int engines_odd(void) { return 7; }' > "$T/odd.c"
"$CC_BIN" -shared -fPIC -o "$wl/libcudnn_engines_precompiled.so.9" "$T/odd.c" -Wl,-soname,libcudnn_engines_precompiled.so.9
rc=0; OUT=$("$CVM" doctor --json) || rc=$?
[[ $rc == 1 ]] || fail "doctor found no problem in a wheel with an unknown replaced file (exit $rc)"
msg=$(finding message)
assert_contains "$msg" "not the files their package or wheel installed"
assert_contains "$msg" "libcudnn_engines_precompiled.so.9 version unknown, not the file wheel nvidia_cudnn_cu12 9.19.0.56 installed"
assert_contains "$(finding fix)" "pip install --force-reinstall --no-deps nvidia-cudnn-cu12==9.19.0.56"

# 3. A folder assembled by hand (PyTorch issue 188892's shape): copies of the wheel's main
# library and graph, and of the system's engines. Found by hash, the wheel's through VIRTUAL_ENV.
wheel_record "$W" nvidia_cudnn_cu12-9.19.0.56 nvidia/cudnn/lib/libcudnn.so.9 nvidia/cudnn/lib/libcudnn_graph.so.9 \
    nvidia/cudnn/lib/libcudnn_ops.so.9 nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9 \
    nvidia/cudnn/lib/libcudnn_heuristic.so.9
m=$T/mixed
mkdir -p "$m"
cp "$wl/libcudnn.so.9" "$wl/libcudnn_graph.so.9" "$wl/libcudnn_ops.so.9" "$wl/libcudnn_heuristic.so.9" "$m/"
cp -L "$sl/libcudnn_engines_precompiled.so.9" "$m/"
export LD_LIBRARY_PATH=$m VIRTUAL_ENV=$T/venv
rc=0; OUT=$("$CVM" doctor --json) || rc=$?
[[ $rc == 1 ]] || fail "doctor found no problem in a folder of copies of two releases (exit $rc)"
msg=$(finding message)
assert_contains "$msg" "libcudnn.so.9 9.19.0.56 (wheel nvidia_cudnn_cu12, a copy of $wl/libcudnn.so.9) in $m"
assert_contains "$msg" "libcudnn_graph.so.9 9.19.0 (symbol cudnn_graph_version) in $m"
assert_contains "$msg" "libcudnn_engines_precompiled.so.9 9.14.0.64 (dpkg libcudnn9-cuda-12, a copy of $sl/libcudnn_engines_precompiled.so.9.14.0) in $m"
fix=$(finding fix)
assert_contains "$fix" "replace the copies of dpkg libcudnn9-cuda-12 9.14.0.64-1's files in $m (libcudnn_engines_precompiled.so.9) with cuDNN 9.19.0's from $wl (wheel nvidia_cudnn_cu12)"
unset VIRTUAL_ENV

# 4. A package's own file altered after install: its md5sums no longer matches.
cp "$wl/libcudnn.so.9" "$wl/libcudnn_graph.so.9" "$wl/libcudnn_ops.so.9" "$sl/"
"$CC_BIN" -shared -fPIC -o "$sl/libcudnn_heuristic.so.9" "$T/odd.c" -Wl,-soname,libcudnn_heuristic.so.9
export LD_LIBRARY_PATH=$sl
OUT=$("$CVM" doctor --json) || true
msg=$(finding message)
assert_contains "$msg" "libcudnn_heuristic.so.9 version unknown, not the file dpkg libcudnn9-cuda-12 9.14.0.64-1 installed in $sl"
assert_contains "$msg" "libcudnn_engines_precompiled.so.9 9.14.0.64 (dpkg libcudnn9-cuda-12) in $sl"
fix=$(finding fix)
assert_contains "$fix" "\`apt-get install --reinstall libcudnn9-cuda-12\` restores libcudnn_heuristic.so.9"
assert_not_contains "$fix" "ld.so.conf"
echo "compat_cudnn_owners: ok"
