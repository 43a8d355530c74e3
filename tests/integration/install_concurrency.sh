#!/usr/bin/env bash
# Two installs of the same thing at once end with one copy; a `kill -9` at any moment leaves
# nothing listed, and the next run completes and cleans up.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
A="$TEST_TMP/archives"
mkdir -p "$A"
name=cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
$MK cudnn-redist "$A/$name" --version 9.1.0 --big 24 --files 3000

# Three at once.
pids=()
for i in 1 2 3; do
    "$CVM" install "$A/$name" 2> "$TEST_TMP/c$i.err" & pids+=($!)
done
for i in 0 1 2; do
    finish "${pids[$i]}" 300 "concurrent install $i"
    ((RC == 0)) || fail "concurrent install $i failed: $(cat "$TEST_TMP/c$((i + 1)).err")"
done
assert_store cudnn "9.1.0.70-cuda12"
n=$(cat "$TEST_TMP"/c*.err | grep -c "installed cuDNN 9.1.0.70-cuda12 in" || true)
assert_eq "$n" "1" "exactly one install did the work"
expect_rc 0 "$CVM" uninstall 9.1.0.70-cuda12

# kill -9 at different moments of an install.
entry_ok() { # nothing, or a complete entry
    local d="$CVM_ROOT/cudnn/9.1.0.70-cuda12"
    [[ ! -e $d ]] || [[ -f $d/entry && -f $d/root/include/cudnn_version.h ]] || fail "a partial install is visible: $(ls -la "$d")"
    "$CVM" list > /dev/null 2>&1 || fail "cvm list fails after a kill"
}
for delay in 0 0.02 0.05 0.1 0.15 0.2 0.3 0.5 0.8; do
    "$CVM" install "$A/$name" 2> /dev/null &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    entry_ok
    if [[ -e $CVM_ROOT/cudnn/9.1.0.70-cuda12 ]]; then
        "$CVM" uninstall 9.1.0.70-cuda12 2> /dev/null
    fi
done
# Kill right when staging has begun.
"$CVM" install "$A/$name" 2> /dev/null &
pid=$!
for _ in $(seq 400); do
    compgen -G "$CVM_ROOT/.staging/install-*/x/*" > /dev/null && break
    sleep 0.005
done
kill -9 "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true
entry_ok
# The next run completes and removes what the killed ones left.
expect_rc 0 "$CVM" install "$A/$name"
assert_store cudnn "9.1.0.70-cuda12"
echo PASS
