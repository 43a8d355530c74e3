#!/usr/bin/env bash
# A killed `cvm import` leaves no trace, as a killed install does: its staging folder is kept while
# it runs (stopped, here) and removed by the next import, install or uninstall once it was killed;
# nothing half-imported is listed. An uninstall of an entry with a read-only folder leaves nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"

# Debian's layout with many libraries: its assembled root is a few thousand links to stage.
deb=$TEST_TMP/deb/usr
home=$deb/lib/nvidia-cuda-toolkit
mkdir -p "$home/bin" "$deb/bin" "$deb/include" "$deb/lib/x86_64-linux-gnu"
printf '#!/bin/sh\necho "Cuda compilation tools, release 11.8, V11.8.89"\n' > "$home/bin/nvcc"
chmod +x "$home/bin/nvcc"
printf '#define CUDA_VERSION 11080\n' > "$deb/include/cuda.h"
(cd "$deb/lib/x86_64-linux-gnu" && touch libcudart.so.11.8.89 libcufft.so.11.{1..1500})
make_toolkit "$TEST_TMP/cuda-12.4" 12.4.1
make_toolkit "$TEST_TMP/cuda-12.6" 12.6.2

shopt -s nullglob
PID=
# A stopped import outlives a failed test unless it is killed.
trap '[[ -z $PID ]] || kill -KILL "$PID" 2> /dev/null; cleanup_test_tmp' EXIT
# stop_import_staging: starts an import of $deb and stops it (SIGSTOP) while its staging folder
# is there; PID is the stopped import, STAGE its folder. An import that finished first is undone
# and started again.
stop_import_staging() {
    local attempt end staged
    for attempt in 1 2 3 4 5 6; do
        "$CVM" import "$deb" 2> /dev/null &
        PID=$!
        end=$((SECONDS + 60))
        # Globbed by the shell itself: no process started between two looks.
        staged=()
        while kill -0 "$PID" 2> /dev/null && ((${#staged[@]} == 0)); do
            ((SECONDS < end)) || hung "waited 60 s for the import to stage"
            staged=("$CVM_ROOT"/.staging/import-*)
        done
        kill -STOP "$PID" 2> /dev/null || true
        staged=("$CVM_ROOT"/.staging/import-*)
        if ((${#staged[@]} > 0)) && kill -0 "$PID" 2> /dev/null; then
            ((${#staged[@]} == 1)) || fail "more than one import staged: ${staged[*]}"
            STAGE=${staged[0]}
            return 0
        fi
        wait "$PID" 2> /dev/null || true
        "$CVM" uninstall 11.8.0 > /dev/null 2>&1 || true
    done
    fail "the import never was caught while staging"
}
# kill_stopped_import: SIGKILL, then nothing but a whole entry or none is listed.
kill_stopped_import() {
    kill -KILL "$PID"
    wait "$PID" 2> /dev/null || true
    PID=
    local d=$CVM_ROOT/cuda/11.8.0
    [[ ! -e $d ]] || [[ -f $d/entry ]] || fail "a half-imported entry is in the store: $(ls -la "$d")"
    expect_rc 0 "$CVM" list cuda
    if [[ -e $d ]]; then
        assert_contains "$OUT" "11.8.0"
    else
        assert_not_contains "$OUT" "11.8.0"
    fi
}
gone() { [[ ! -e $STAGE ]] || fail "$1 left the killed import's staging folder: $(ls -A "$STAGE")"; }

# A running import's staging is kept by another import; once killed, the next import removes it.
stop_import_staging
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.4"
[[ -d $STAGE ]] || fail "an import removed the staging folder of an import still running"
kill_stopped_import
[[ -d $STAGE ]] || fail "the killed import's staging folder is not there to be cleaned"
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.6"
gone "the next import"
"$CVM" uninstall 11.8.0 > /dev/null 2>&1 || true

# The next uninstall removes it too.
stop_import_staging
kill_stopped_import
expect_rc 0 "$CVM" uninstall 12.6.2
gone "an uninstall"
"$CVM" uninstall 11.8.0 > /dev/null 2>&1 || true

# And the next install.
A=$TEST_TMP/archives
mkdir -p "$A"
$MK cudnn-redist "$A/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz" --version 9.1.0
stop_import_staging
kill_stopped_import
expect_rc 0 "$CVM" install "$A/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"
gone "an install"

# An uninstall of an entry whose folder the user made read-only (cvm installs none such) leaves
# nothing staged (root may remove what is in a read-only folder anyway).
chmod a-w "$CVM_ROOT/cudnn/9.1.0.70-cuda12/root/lib"
expect_rc 0 "$CVM" uninstall 9.1.0.70-cuda12
[[ ! -e $CVM_ROOT/cudnn/9.1.0.70-cuda12 ]] || fail "the uninstalled cuDNN is still in the store"
left=$(ls -A "$CVM_ROOT/.staging" 2> /dev/null || true)
assert_eq "$left" "" "staging after the uninstall of an entry with a read-only folder"
echo PASS
