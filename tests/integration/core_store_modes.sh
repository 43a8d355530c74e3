#!/usr/bin/env bash
# Store folders get 0755 or stricter whatever the umask (002, 000), so cvm never refuses its own
# store; the programs cvm runs get the user's umask back. A relative CVM_ROOT, CVM_STORE_PATH,
# XDG_DATA_HOME or XDG_CONFIG_HOME is refused with one line: any folder holding such a store
# would decide which nvcc runs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
T=$TEST_TMP
make_toolkit "$T/cuda-12.4" 12.4.1
printf '#!/bin/sh\numask\n' > "$T/cuda-12.4/bin/showumask"
chmod 0755 "$T/cuda-12.4/bin/showumask"
make_cudnn "$T/cudnn-9.1" 9.1.0
$MK cudnn-redist "$T/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz" --version 9.2.0
mkdir -p "$T/p"
cd "$T/p"
for mask in 000 002; do
    rm -rf "$CVM_ROOT"
    (
        umask $mask
        "$CVM" import "$T/cuda-12.4" > /dev/null 2>&1 || fail "import under umask $mask"
        "$CVM" import --cuda 12 "$T/cudnn-9.1" > /dev/null 2>&1 || fail "import cudnn under umask $mask"
        "$CVM" install "$T/cudnn-linux-x86_64-9.2.0.82_cuda12-archive.tar.xz" > /dev/null 2>&1 \
            || fail "install under umask $mask"
        "$CVM" use 12.4+9.1 > /dev/null 2>&1 || fail "use under umask $mask"
        "$CVM" exec -- true || fail "exec under umask $mask"
        "$CVM" list > /dev/null 2>&1 || fail "list under umask $mask"
        got=$("$CVM" exec -- showumask) || fail "exec showumask"
        assert_eq "$got" "0$mask" "the umask cvm exec hands over"
        got=$("$CVM_ROOT/shims/showumask") || fail "the shim under umask $mask"
        assert_eq "$got" "0$mask" "the umask the shim hands over"
    )
    [[ -d $CVM_ROOT/views/12.4.1+9.1.0-cuda12 && -d $CVM_ROOT/cache ]] || fail "the store is not complete: $(ls -R "$CVM_ROOT" | head)"
    writable=$(find "$CVM_ROOT" ! -type l -perm /022 | head -5)
    assert_eq "$writable" "" "store paths group- or world-writable under umask $mask"
    expect_rc 0 "$CVM" verify
done

# Relative store and configuration folders: refused, one line each.
expect_rc 2 env CVM_ROOT=.cvmstore "$CVM" list
assert_eq "$ERR" "cvm: CVM_ROOT is the relative path '.cvmstore'; set it to a whole path (e.g. CVM_ROOT=\$PWD/.cvmstore) or unset it"
mkdir -p .cvmstore/shims
rc=0
CVM_ROOT=.cvmstore "$CVM_ROOT/shims/nvcc" > /dev/null 2> "$T/err" || rc=$?
[[ $rc == 2 ]] || fail "the shim took a relative CVM_ROOT: exit $rc"
assert_contains "$(cat "$T/err")" "CVM_ROOT is the relative path"
expect_rc 2 env CVM_STORE_PATH=team "$CVM" list
assert_contains "$ERR" "CVM_STORE_PATH: the store folder 'team' is relative"
expect_rc 1 env -u CVM_ROOT XDG_DATA_HOME=data "$CVM" list
assert_contains "$ERR" "XDG_DATA_HOME is the relative path 'data'"
expect_rc 1 env -u CVM_CONFIG XDG_CONFIG_HOME=conf "$CVM" list
assert_contains "$ERR" "XDG_CONFIG_HOME is the relative path 'conf'"
expect_rc 1 env -u CVM_ROOT HOME=home "$CVM" list
assert_contains "$ERR" "HOME is the relative path 'home'"
[[ $(wc -l <<< "$ERR") == 1 ]] || fail "more than one line: $ERR"
