#!/usr/bin/env bash
# cvm doctor on Linux: what loads in this shell and through cvm, and the broken setups a user
# meets (another cuDNN first on LD_LIBRARY_PATH or in ld.so.cache, a missing or foreign
# sub-library, headers of another version than the libraries), each with its fix.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_doctor.sh"
command -v python3 >/dev/null || skip "python3 is needed to read the JSON"

doctor_toolkit "$TEST_TMP/cuda-11.2" 11.2.2 11.2.152
doctor_cudnn8 "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77" 8.1.0 8.1.0
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-11.2"
expect_rc 0 "$CVM" import "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77"
mkdir -p "$TEST_TMP/proj"
cd "$TEST_TMP/proj"
expect_rc 0 "$CVM" use 11.2+8.1

# 1. Healthy through cvm.
expect_rc 0 "$CVM" exec -- "$CVM" doctor --json
assert_eq "$(json_get 'd["healthy"]')" "True"
assert_eq "$(json_get 'd["selection"]["active"]')" "11.2.2+8.1.0.77-cuda11.2"
# Found through the merged view's lib64 (cvm env's one library folder); the file is cuDNN's own.
loaded=$(json_get '[l["path"] for l in d["libraries"] if l["scenario"] == "current" and l["name"] == "libcudnn.so.8"][0]')
assert_eq "$loaded" "$CVM_ROOT/views/11.2.2+8.1.0.77-cuda11.2/lib64/libcudnn.so.8"
loaded=$(json_get '[l["real_path"] for l in d["libraries"] if l["scenario"] == "current" and l["name"] == "libcudnn.so.8"][0]')
assert_eq "$loaded" "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77/lib/libcudnn.so.8.1.0"
assert_eq "$(json_get '[l["version"] for l in d["libraries"] if l["name"] == "libcudart.so.11.0"][0]')" "11.2.152"
expect_rc 0 "$CVM" exec -- "$CVM" doctor
assert_contains "$OUT" "No problems found."
assert_contains "$OUT" "6 sub-libraries"
assert_not_contains "$OUT" $'\x1b[' "colour only on a terminal"

# 2. This shell is not activated: nothing loads libcudnn.so.8 here -> a warning, exit 1.
expect_rc 1 "$CVM" doctor --json
assert_contains "$(finding_codes)" "warning:library-not-selected"
assert_contains "$(json_get '[f["fix"] for f in d["findings"] if f["code"] == "library-not-selected"][0]')" "cvm init"

# 3. Another cuDNN first on LD_LIBRARY_PATH in this shell.
so "$TEST_TMP/opt/cudnn-8.0.5/lib" libcudnn.so.8 libcudnn.so.8.0.5
expect_rc 1 env LD_LIBRARY_PATH="$TEST_TMP/opt/cudnn-8.0.5/lib" "$CVM" doctor
assert_contains "$OUT" "$TEST_TMP/opt/cudnn-8.0.5/lib/libcudnn.so.8"
assert_contains "$OUT" "8.0.5"
assert_contains "$OUT" "fix:"

# 4. The same old cuDNN registered in ld.so.cache: it loads now, and through cvm it is shadowed.
if LDCONFIG=$(command -v ldconfig || ls /sbin/ldconfig /usr/sbin/ldconfig 2>/dev/null | head -n1); [[ -n "$LDCONFIG" ]]; then
    echo "$TEST_TMP/opt/cudnn-8.0.5/lib" > "$TEST_TMP/ld.so.conf"
    if "$LDCONFIG" -X -C "$TEST_TMP/ld.so.cache" -f "$TEST_TMP/ld.so.conf" 2>/dev/null; then
        export CVM_LD_SO_CACHE="$TEST_TMP/ld.so.cache"
        expect_rc 1 "$CVM" doctor --json
        assert_eq "$(json_get '[l["mechanism"] for l in d["libraries"] if l["scenario"] == "current" and l["name"] == "libcudnn.so.8"][0]')" "ld.so.cache"
        assert_contains "$(finding_codes)" "warning:library-not-selected"
        expect_rc 0 "$CVM" exec -- "$CVM" doctor --json
        shadowed=$(json_get '[l["shadowed"] for l in d["libraries"] if l["scenario"] == "current" and l["name"] == "libcudnn.so.8"][0]')
        assert_contains "$shadowed" "$TEST_TMP/opt/cudnn-8.0.5/lib/libcudnn.so.8"
        export CVM_LD_SO_CACHE=""
    fi
fi

# 5. A sub-library missing from the selected cuDNN: the "Could not load library" error.
mv "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77/lib/libcudnn_cnn_infer.so.8" "$TEST_TMP/saved.so.8"
expect_rc 1 "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "error:sublibrary-missing"
assert_contains "$(json_get '[f["message"] for f in d["findings"] if f["code"] == "sublibrary-missing"][0]')" "libcudnn_cnn_infer.so.8"

# 6. ...and a copy of another build in a system folder fills the gap: mixed sub-libraries.
so "$TEST_TMP/system/lib" libcudnn_cnn_infer.so.8 libcudnn_cnn_infer.so.8.0.5
expect_rc 1 "$CVM" exec -- "$CVM" doctor
assert_contains "$OUT" "sublibraries-mixed"
assert_contains "$OUT" "$TEST_TMP/system/lib/libcudnn_cnn_infer.so.8"
rm "$TEST_TMP/system/lib/libcudnn_cnn_infer.so.8" "$TEST_TMP/system/lib/libcudnn_cnn_infer.so.8.0.5"
mv "$TEST_TMP/saved.so.8" "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77/lib/libcudnn_cnn_infer.so.8"

# 7. A cuDNN folder whose headers say 8.0.5 while its libraries are 8.1.0.
doctor_cudnn8 "$TEST_TMP/cudnn-11.2-linux-x64-v8.0.5.39" 8.0.5 8.1.0
expect_rc 0 "$CVM" import "$TEST_TMP/cudnn-11.2-linux-x64-v8.0.5.39"
expect_rc 1 env CVM_VERSION=11.2+8.0.5 "$CVM" exec -- "$CVM" doctor --json
assert_contains "$(finding_codes)" "error:header-library-mismatch"

# 8. A linker script where the library should be: the loader stops there.
mkdir -p "$TEST_TMP/broken"
printf '/* GNU ld script */\nGROUP ( libcudnn.so.8.1.0 )\n' > "$TEST_TMP/broken/libcudnn.so.8"
expect_rc 1 env LD_LIBRARY_PATH="$TEST_TMP/broken" "$CVM" doctor --json
assert_contains "$(json_get '[l["failure"] for l in d["libraries"] if l["scenario"] == "current" and l["name"] == "libcudnn.so.8"][0]')" "$TEST_TMP/broken/libcudnn.so.8"
echo "PASS"
