#!/usr/bin/env bash
# Issue 33 ("Export, scripts and compilers never act for another user"): its command-line
# findings, each driving the real cvm, each section headed by its finding's number.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
READER=
stop_reader() {
    if [[ -n $READER ]]; then kill "$READER" 2>/dev/null || true; fi
    cleanup_test_tmp
}
trap stop_reader EXIT
make_toolkit "$T/cuda-12.4" 12.4.1
"$CVM" import "$T/cuda-12.4" 2>/dev/null || fail "import"
mkdir -p "$T/p"
cd "$T/p"

# --- Finding 4: `cvm script -o` writes to a device, a FIFO or a /proc link, never replaces it.
# A character device (/dev/null's numbers, made here: the machine's own is left alone), and a
# link to it.
mknod "$T/null" c 1 3 || skip "cannot make a device node here"
expect_rc 0 "$CVM" script 12.4 --shell bash -o "$T/null"
[[ -c $T/null ]] || fail "cvm script -o replaced a device with $(stat -c %F "$T/null")"
ln -s "$T/null" to-null
expect_rc 0 "$CVM" script 12.4 --shell bash -o to-null
[[ -L to-null && -c $T/null ]] || fail "cvm script -o replaced a link to a device"
expect_rc 0 "$CVM" __man "$T/null"
[[ -c $T/null ]] || fail "cvm __man replaced a device"

# A FIFO: what a reader gets is the script, and the FIFO stays.
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/from-fifo" &
READER=$!
expect_rc 0 timeout 60 "$CVM" script 12.4 --shell bash -o "$T/fifo"
reader_done() { ! kill -0 "$READER" 2>/dev/null; }
wait_until 30 reader_done || fail "the FIFO's reader got no end of file: cvm did not write to it"
READER=
[[ -p $T/fifo ]] || fail "cvm script -o replaced a FIFO with $(stat -c %F "$T/fifo")"
assert_contains "$(cat "$T/from-fifo")" "CUDA_PATH"
# With nobody reading it: one line at once, no wait, the FIFO left as it is.
expect_rc 1 timeout 60 "$CVM" script 12.4 --shell bash -o "$T/fifo"
assert_contains "$ERR" "nothing reads that FIFO"
[[ -p $T/fifo ]] || fail "cvm script -o replaced an unread FIFO"
expect_rc 1 timeout 60 "$CVM" __man "$T/fifo"
assert_contains "$ERR" "nothing reads that FIFO"
[[ -p $T/fifo ]] || fail "cvm __man replaced an unread FIFO"

# A socket is refused (usage), and stays.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock"
expect_rc 2 "$CVM" script 12.4 --shell bash -o "$T/sock"
assert_contains "$ERR" "cannot write $T/sock: it is a socket"
[[ -S $T/sock ]] || fail "cvm script -o replaced a socket"

# A /proc/self/fd link: written through, to what the descriptor is.
expect_rc 0 "$CVM" script 12.4 --shell bash -o /dev/fd/3 3> "$T/fd3.sh"
assert_contains "$(cat "$T/fd3.sh")" "CUDA_PATH"

# `-o -` and `-o /dev/stdout`: the script on standard output (last: the old code replaced
# /dev/stdout itself, which is put back before failing).
expect_rc 0 "$CVM" script 12.4 --shell bash -o -
assert_contains "$OUT" "CUDA_PATH"
expect_rc 0 "$CVM" script 12.4 --shell bash -o /dev/stdout
if [[ ! -L /dev/stdout ]]; then
    rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout
    fail "cvm script -o /dev/stdout replaced /dev/stdout (put back)"
fi
assert_contains "$OUT" "CUDA_PATH"
expect_rc 0 "$CVM" __man -
assert_contains "$OUT" ".TH"

# --- Finding 12: the completion `cvm init` loads runs cvm by its absolute path, never a
# project's bin/cvm that comes first on PATH.
mkdir -p "$T/project/bin"
printf '#!/bin/sh\necho "$*" >> %q\n' "$T/fake-ran" > "$T/project/bin/cvm"
chmod 0755 "$T/project/bin/cvm"
self=$(readlink -f "$CVM")
for sh in bash zsh fish; do
    init=$("$CVM" init "$sh")
    assert_not_contains "$init" "command cvm __complete" "cvm init $sh"
    assert_contains "$init" "command '$self' __complete" "cvm init $sh"
done
# Real bash completion of `cvm us`, with the fake cvm first on PATH.
words=$(PATH="$CVM_BIN:$PATH" bash --noprofile --norc -c '
    eval "$(cvm init bash)"
    PATH="$1:$PATH"
    COMP_WORDS=(cvm us) COMP_CWORD=1 COMP_LINE="cvm us" COMP_POINT=6
    _cvm_complete cvm us cvm
    printf "%s\n" "${COMPREPLY[@]}"' _ "$T/project/bin")
assert_contains "$words" "use" "bash completion of 'cvm us'"
[[ ! -e $T/fake-ran ]] || fail "bash completion ran the project's bin/cvm: $(cat "$T/fake-ran")"
# And fish's, through `complete -C`.
words=$(PATH="$CVM_BIN:$PATH" fish --no-config -c '
    cvm init fish | source
    set -x PATH $argv[1] $PATH
    complete -C "cvm us"' "$T/project/bin")
assert_contains "$words" "use" "fish completion of 'cvm us'"
[[ ! -e $T/fake-ran ]] || fail "fish completion ran the project's bin/cvm: $(cat "$T/fake-ran")"

# --- Finding 13: `cvm install` of a FIFO or a link to a device says what it is, exit 2, at once.
mkfifo "$T/in.fifo"
expect_rc 2 timeout 60 "$CVM" install "$T/in.fifo"
assert_contains "$ERR" "$T/in.fifo is a FIFO, not an archive or installer file"
ln -s /dev/zero "$T/zero.tar.gz"
expect_rc 2 timeout 60 "$CVM" install "$T/zero.tar.gz"
assert_contains "$ERR" "$T/zero.tar.gz is a device, not an archive or installer file"

# --- Finding 16: a cvm.lock that links to itself is a loop, not "no cvm.lock" (exit 2).
expect_rc 0 "$CVM" use 12.4
ln -s cvm.lock cvm.lock
expect_rc 2 timeout 60 "$CVM" install --locked
assert_contains "$ERR" "cvm.lock is a link that leads nowhere (a loop)"
expect_rc 2 "$CVM" lock --check
assert_contains "$ERR" "cvm.lock is a link that leads nowhere (a loop)"
rm cvm.lock

# --- Finding 17: an empty --tag is refused as usage, nothing written.
expect_rc 2 "$CVM" export --oci "$T/image" 12.4 --tag ''
assert_contains "$ERR" "--tag is empty"
[[ ! -e $T/image ]] || fail "export --tag '' wrote $T/image"
# --- Finding 14: entering and leaving a project through the prompt hook gives PATH and
# LD_LIBRARY_PATH back byte for byte, empty entries and all (bash, as at a prompt).
cd "$T"
cat > "$T/hook.sh" <<EOS
eval "\$("$CVM" init bash)"
PATH=":\$(dirname "$(command -v bash)")::/usr/bin:/bin:"
export LD_LIBRARY_PATH="/opt/x::"
before="\$PATH|\$LD_LIBRARY_PATH"
cd "$T/p" && _cvm_hook
[[ \$PATH == *"$T/cuda-12.4/bin"* ]] || { echo "the hook did not apply 12.4: \$PATH"; exit 1; }
cd "$T" && _cvm_hook
after="\$PATH|\$LD_LIBRARY_PATH"
[[ \$after == "\$before" ]] || { echo "restored [\$after], was [\$before]"; exit 1; }
echo restored
EOS
OUT=$(env -u CVM_VERSION -u _CVM_HOOK -u _CVM_SAVED bash --norc "$T/hook.sh" 2>&1) ||
    fail "bash with the hook: $OUT"
assert_eq "$OUT" restored
# --- Finding 8: below a folder whose path is longer than the system's limit (4096 bytes), the
# shim and `cvm current` find the same .cudaversion, read by relative lookups: the nearest one
# (deep in the long path) and, above it, the project's.
make_toolkit "$T/cuda-11.2" 11.2.2
"$CVM" import "$T/cuda-11.2" 2>/dev/null || fail "import 11.2"
LONG=$(printf 'd%.0s' {1..200})
(
    cd "$T/p" || exit 1
    for i in $(seq 1 24); do
        mkdir "$LONG$i" && cd "$LONG$i" || fail "cannot make the long path"
        [[ $i == 21 ]] && echo 11.2 > .cudaversion
    done
    depth=$(pwd | wc -c)
    ((depth > 4096)) || fail "the path is only $depth bytes"
    expect_rc 0 "$CVM" current
    assert_contains "$OUT" "11.2.2"
    expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
    assert_contains "$OUT" "fake nvcc 11.2.2"
    cd ../../.. && rm .cudaversion # in folder 21 now
    cd "$LONG"22/"$LONG"23
    expect_rc 0 "$CVM" current
    assert_contains "$OUT" "12.4.1"
    expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
    assert_contains "$OUT" "fake nvcc 12.4.1"
) || exit 1

# --- Finding 11: a full store. The shim and the prompt hook say what `cvm env` says (the folder,
# "the disk is full", what to do), never a library's text or a staging name.
SMALL="$T/small"
mkdir -p "$SMALL"
if mount -t tmpfs -o size=1m tmpfs "$SMALL" 2> /dev/null; then
    trap 'umount "$SMALL" 2>/dev/null || true; stop_reader' EXIT
    make_cudnn "$T/cudnn-9.1" 9.1.0
    mkdir -p "$T/full"
    (
        export CVM_ROOT="$SMALL/root"
        cd "$T/full"
        "$CVM" import "$T/cuda-12.4" 2>/dev/null || fail "import into the small store"
        "$CVM" import --cuda 12 "$T/cudnn-9.1" 2>/dev/null || fail "import cuDNN into the small store"
        "$CVM" use 12.4+9.1 2>/dev/null || fail "use"
        dd if=/dev/zero of="$SMALL/filler" bs=4k 2>/dev/null || true # the disk is full now
        expect_rc 1 "$CVM_ROOT/shims/nvcc" --version
        assert_contains "$ERR" "the disk is full"
        assert_not_contains "$ERR" ".staging"
        assert_not_contains "$ERR" "filesystem error"
        expect_rc 0 "$CVM" hook-env --shell bash
        assert_contains "$ERR" "the disk is full"
        assert_not_contains "$ERR" ".staging"
        assert_not_contains "$ERR" "filesystem error"
    ) || exit 1
    umount "$SMALL"
    trap stop_reader EXIT
else
    echo "note: cannot mount a tmpfs here; finding 11 is not checked" >&2
fi
echo "PASS: issue 33's command-line findings"
