# Helpers for the prompt-hook tests (sourced after lib.sh): a REAL interactive shell in tmux,
# whose rc file evaluates `cvm init`, is sent keystrokes; `cd` moves between two projects (each
# a toolkit with a fake cuDNN that really loads) and out; a program dlopen()s libcudnn and prints
# the file it got from /proc/self/maps.
need_tools tmux cc

FAKES="$(cd "$(dirname "${BASH_SOURCE[0]}")/../probe_fakes" && pwd)"
# A path with a space and both quotes: the hook's code must quote what it reads.
BASE="$TEST_TMP/w 'q' \"d\""
mkdir -p "$BASE"
TK_A="$BASE/cuda-11.2" TK_B="$BASE/cuda-12.4"
DNN_A="$BASE/cudnn-linux-x86_64-8.1.0.77_cuda11-archive"
DNN_B="$BASE/cudnn-linux-x86_64-9.1.0.70_cuda12-archive"
make_toolkit "$TK_A" 11.2.2
make_toolkit "$TK_B" 12.4.1
make_cudnn "$DNN_A" 8.1.0
make_cudnn "$DNN_B" 9.1.0
# Real shared libraries in place of the empty files, found by their unversioned name.
for d in "$DNN_A:8" "$DNN_B:9"; do
    dir=${d%:*} major=${d##*:}
    cc -shared -fPIC -O0 -DFAKE_MAJOR="$major" -DFAKE_WITH_GRAPH -DFAKE_WITH_OPS -DFAKE_WITH_CNN \
        -Wl,-soname,"libcudnn.so.$major" -o "$dir/lib/libcudnn.so.$major" "$FAKES/fake_cudnn.c" -lm \
        || fail "cannot build the fake libcudnn"
    ln -sf "libcudnn.so.$major" "$dir/lib/libcudnn.so"
done
for p in "$TK_A" "$TK_B" "$DNN_A" "$DNN_B"; do
    "$CVM" import "$p" 2> /dev/null || fail "cvm import $p failed"
done

# The program that loads cuDNN the way frameworks do (dlopen by name, the loader's search).
mkdir -p "$TEST_TMP/bin"
cat > "$TEST_TMP/whichdnn.c" <<'EOS'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    if (!dlopen("libcudnn.so", RTLD_NOW)) { printf("no libcudnn\n"); return 0; }
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (path && strstr(path, "libcudnn")) { printf("%s", path); break; }
    }
    return 0;
}
EOS
cc -o "$TEST_TMP/bin/whichdnn" "$TEST_TMP/whichdnn.c" -ldl || fail "cannot build whichdnn"

PA="$BASE/proj a" PB="$BASE/proj b" PC="$BASE/proj c" OUTSIDE="$BASE/elsewhere"
PBAD="$BASE/broken" PNONE="$BASE/missing" PFIFO="$BASE/fifo" PUNREAD="$BASE/unreadable"
mkdir -p "$PA/sub" "$PB" "$PC" "$OUTSIDE" "$PBAD" "$PNONE" "$PFIFO" "$PUNREAD"
printf '11.2+8.1\n' > "$PA/.cudaversion"
printf '12.4+9\n' > "$PB/.cudaversion"
printf '12.4\n' > "$PC/.cudaversion"
printf 'not a version!\n' > "$PBAD/.cudaversion"
printf '10.1\n' > "$PNONE/.cudaversion"
mkfifo "$PFIFO/.cudaversion"
# A file no one can read, root included (chmod does not stop root): reading /proc/self/mem from
# its start fails with EIO, for whoever reads it.
ln -s /proc/self/mem "$PUNREAD/.cudaversion"
OUTD="$TEST_TMP/out"
mkdir -p "$OUTD" "$TEST_TMP/mybin"

SOCK="$TEST_TMP/tmux.sock"
stop_tmux() { stop_tmux_server "$SOCK"; cleanup_test_tmp; }
trap stop_tmux EXIT

# start_shell COMMAND...: the shell in a detached tmux session, in a clean environment.
start_shell() {
    tmux -S "$SOCK" -f /dev/null new-session -d -x 200 -y 50 -s t \
        env -i HOME="$TEST_TMP" TERM=screen LANG=C.UTF-8 PATH="$TEST_TMP/bin:/usr/bin:/bin" \
        CVM_ROOT="$CVM_ROOT" CVM="$CVM" CVM_CONFIG="$CVM_CONFIG" CVM_SYSTEM_CONFIG="$CVM_SYSTEM_CONFIG" CVM_APT_CACHE= \
        OUTD="$OUTD" PA="$PA" PB="$PB" PC="$PC" OUTSIDE="$OUTSIDE" PBAD="$PBAD" PNONE="$PNONE" PFIFO="$PFIFO" PUNREAD="$PUNREAD" \
        MYBIN="$TEST_TMP/mybin" CUDA_HOME="orig home" XDG_CONFIG_HOME="$TEST_TMP/config" \
        "$@" || fail "tmux cannot start $*"
}

STEP=0
# step COMMAND: types COMMAND (a line for the shell: cd ...) and waits until the shell showed a
# prompt after it, which is when the hook has run.
step() {
    STEP=$((STEP + 1))
    tmux -S "$SOCK" send-keys -t t -l "$1"
    tmux -S "$SOCK" send-keys -t t Enter
    tmux -S "$SOCK" send-keys -t t -l "echo > \"\$OUTD/done.$STEP\""
    tmux -S "$SOCK" send-keys -t t Enter
    # (a minute at most: a busy machine may take seconds to start a shell)
    wait_until 60 test -e "$OUTD/done.$STEP" ||
        fail "the shell did not finish [$1]: $(tmux -S "$SOCK" capture-pane -p -t t -S -60)"
}

pane() { tmux -S "$SOCK" capture-pane -p -J -t t -S -1000; }
# A failure shows the end of the terminal too.
fail() {
    echo "FAIL: $*" >&2
    echo "--- the terminal:" >&2
    pane 2> /dev/null | grep -v "^$" | tail -${PANE_LINES:-40} >&2 || true
    exit 1
}

# The steps every shell runs; $1: the shell's way to put $MYBIN first on PATH and set CUDA_HOME
# to "mine"; $2: its way to evaluate `cvm env 12.4+9`.
run_hook_steps() {
    local prepend=$1 manual=$2
    step 'cd "$OUTSIDE"'
    step 'whichdnn > "$OUTD/outside0"; env > "$OUTD/env_outside0"'
    step 'cd "$PA"'
    step 'whichdnn > "$OUTD/a"; env > "$OUTD/env_a"'
    step 'cd "$PA/sub"'
    step 'whichdnn > "$OUTD/a_sub"'
    step 'cd "$PB"'
    step 'whichdnn > "$OUTD/b"; env > "$OUTD/env_b"'
    # Edits made inside a project: a PATH entry, and a variable the activation set.
    step "$prepend"
    step 'cd "$OUTSIDE"'
    step 'whichdnn > "$OUTD/outside1"; env > "$OUTD/env_outside1"'
    # Bad folders: one line once, the environment stays, the prompt goes on (the FIFO too).
    step 'cd "$PA"'
    step 'cd "$PBAD"'
    step 'whichdnn > "$OUTD/bad"'
    step 'cd "$PFIFO"'
    step 'whichdnn > "$OUTD/fifo"'
    step 'cd "$PUNREAD"'
    step 'whichdnn > "$OUTD/unreadable"'
    # A selection nothing installed satisfies: no other folder's toolkit stays active.
    step 'cd "$PNONE"'
    step 'whichdnn > "$OUTD/none"; env > "$OUTD/env_none"'
    step 'true'
    step 'true'
    # A manual activation stays in force across cd, until cvm_deactivate.
    step 'cd "$OUTSIDE"'
    step 'whichdnn > "$OUTD/outside2"; env > "$OUTD/env_outside2"'
    step "$manual"
    step 'cd "$PA"'
    step 'whichdnn > "$OUTD/manual_in_a"'
    step 'cvm_deactivate'
    step 'whichdnn > "$OUTD/manual_off_in_a"'
    step 'cd "$PB"'
    step 'cvm shell 11.2+8'
    step 'whichdnn > "$OUTD/shell_a"'
    step 'cvm shell --unset'
    step 'whichdnn > "$OUTD/shell_unset"'
    # The .cudaversion edited where the shell is (no cd): the next prompt applies it.
    step 'cvm use 11.2+8.1 2> /dev/null'
    step 'whichdnn > "$OUTD/b_edited"'
    step 'cd "$OUTSIDE"'
    step 'cvm deactivate'
    step 'cd "$PA"'
    step 'whichdnn > "$OUTD/after_deactivate"'
    # `cd X && cmd` on one line: the shims run X's tools before the next prompt.
    step 'cvm shell 12.4 && echo ok > "$OUTD/shell_status"'
    step 'cvm shell --unset'
    step 'cd "$OUTSIDE" && cd "$PC" && nvcc > "$OUTD/oneline_c"'
}

# env_of FILE: the variables of an `env` dump that do not vary with the folder or the shell's
# own bookkeeping, sorted.
env_of() { grep -v -E '^(PWD|OLDPWD|_|SHLVL)=' "$1" | sort; }

# same_as_cvm_env DUMP SPEC BASE: the variables of DUMP (the shell in a project) are those that
# `eval "$(cvm env SPEC)"` gives in the environment BASE, apart from cvm's own records (_CVM_*).
same_as_cvm_env() {
    local -a base
    mapfile -t base < <(env_of "$3")
    local code want got
    code=$(env -i "${base[@]}" "$CVM" env --shell bash "$2") || fail "cvm env $2"
    want=$(env -i "${base[@]}" bash --norc --noprofile -c 'eval "$1"; env' _ "$code" | grep -v '^_CVM_' | env_of /dev/stdin)
    got=$(grep -v '^_CVM_' "$1" | env_of /dev/stdin)
    # The same PATH entries; the hook's order (the selection's folders after the shims) is checked apart.
    assert_eq "$(path_sorted <<<"$got")" "$(path_sorted <<<"$want")" "the hook's environment in $1 and that of cvm env $2"
}
# path_sorted: env text with PATH's entries sorted.
path_sorted() {
    local line
    while IFS= read -r line; do
        if [[ $line == PATH=* ]]; then
            printf 'PATH=%s\n' "$(tr ':' '\n' <<<"${line#PATH=}" | sort | paste -sd:)"
        else
            printf '%s\n' "$line"
        fi
    done
}

check_hook_results() {
    # Outside the projects the program gets what the machine has (a system cuDNN, or none).
    local system
    system=$(cat "$OUTD/outside0")
    assert_not_contains "$system" "$BASE" "outside, before any project"
    assert_eq "$(cat "$OUTD/a")" "$DNN_A/lib/libcudnn.so.8" "in project a"
    assert_eq "$(cat "$OUTD/a_sub")" "$DNN_A/lib/libcudnn.so.8" "in a folder of project a"
    assert_eq "$(cat "$OUTD/b")" "$DNN_B/lib/libcudnn.so.9" "in project b"
    assert_eq "$(cat "$OUTD/outside1")" "$system" "outside, after the projects"
    grep -qx "CVM_ACTIVE=11.2.2+8.1.0.77-cuda11" "$OUTD/env_a" || fail "project a: CVM_ACTIVE"
    # The hook applies the whole environment of the selection, as cvm env does.
    same_as_cvm_env "$OUTD/env_a" 11.2+8.1 "$OUTD/env_outside0"
    # The selection's bin (its merged view's) comes right after cvm's shims: a typed `cd X && nvcc`
    # is the shim's, which follows the folder at once.
    grep -q "^PATH=$CVM_ROOT/shims:$CVM_ROOT/views/11.2.2+8.1.0.77-cuda11/bin:" "$OUTD/env_a" ||
        fail "project a: the view's bin is not right after the shims on PATH: $(grep ^PATH= "$OUTD/env_a")"
    grep -q "^PATH=$CVM_ROOT/shims:$CVM_ROOT/views/12.4.1+9.1.0.70-cuda12/bin:" "$OUTD/env_b" ||
        fail "project b: the view's bin is not right after the shims on PATH"
    ! grep -q "$TK_A" "$OUTD/env_b" || fail "project b still has project a's toolkit"
    # Leaving: what the hook added goes, the user's edits stay.
    local path_out
    path_out=$(grep "^PATH=" "$OUTD/env_outside1")
    assert_contains "$path_out" "$TEST_TMP/mybin" "the PATH edit made in project b"
    assert_not_contains "$path_out" "$TK_B" "project b's toolkit after leaving"
    assert_eq "$(grep "^PATH=" "$OUTD/env_outside1")" "PATH=$TEST_TMP/mybin:$(grep "^PATH=" "$OUTD/env_outside0" | cut -d= -f2-)" "PATH after leaving"
    grep -qx "CUDA_HOME=mine" "$OUTD/env_outside1" || fail "the user's CUDA_HOME was not kept"
    grep -qx "CUDA_HOME=orig home" "$OUTD/env_outside0" || fail "CUDA_HOME before"
    ! grep -q "^CVM_ACTIVE=" "$OUTD/env_outside1" || fail "CVM_ACTIVE stayed after leaving"
    ! grep -q "^LD_LIBRARY_PATH=" "$OUTD/env_outside1" || fail "LD_LIBRARY_PATH stayed after leaving"
    # Bad folders: the environment of project a stays; one line each, once.
    assert_eq "$(cat "$OUTD/bad")" "$DNN_A/lib/libcudnn.so.8" "in the broken folder"
    # A selection nothing installed satisfies: project a's toolkit is no longer active.
    assert_eq "$(cat "$OUTD/none")" "$system" "in the folder naming nothing installed"
    ! grep -q "^CVM_ACTIVE=" "$OUTD/env_none" || fail "CVM_ACTIVE stayed in the folder naming nothing installed"
    ! grep -q "$TK_A" "$OUTD/env_none" || fail "project a's toolkit stayed in the folder naming nothing installed"
    assert_eq "$(cat "$OUTD/fifo")" "$DNN_A/lib/libcudnn.so.8" "in the folder with a FIFO"
    assert_eq "$(cat "$OUTD/unreadable")" "$DNN_A/lib/libcudnn.so.8" "in the folder with an unreadable file"
    local text
    text=$(pane)
    assert_eq "$(grep -c "broken/.cudaversion" <<< "$text")" 1 "lines about the broken file"
    assert_eq "$(grep -c "CUDA 10.1 is not installed" <<< "$text")" 1 "lines about 10.1"
    assert_eq "$(grep -c "fifo/.cudaversion is not a regular file" <<< "$text")" 1 "lines about the FIFO"
    assert_eq "$(grep -c "cannot read .*unreadable/.cudaversion" <<< "$text")" 1 "lines about the unreadable file"
    assert_eq "$(cat "$OUTD/outside2")" "$system" "outside after the bad folders"
    # Leaving project a (entered with the user's PATH and CUDA_HOME of outside1) gives back exactly
    # what the hook replaced: the whole environment is that of outside1 again.
    assert_eq "$(env_of "$OUTD/env_outside2")" "$(env_of "$OUTD/env_outside1")" "the environment after leaving project a"
    assert_eq "$(cat "$OUTD/manual_in_a")" "$DNN_B/lib/libcudnn.so.9" "a manual cvm env in project a"
    assert_eq "$(cat "$OUTD/manual_off_in_a")" "$DNN_A/lib/libcudnn.so.8" "project a after cvm_deactivate"
    # cvm shell: the session override wins over the folder, and --unset gives it back.
    assert_eq "$(cat "$OUTD/shell_a")" "$DNN_A/lib/libcudnn.so.8" "cvm shell 11.2+8 in project b"
    assert_eq "$(cat "$OUTD/shell_unset")" "$DNN_B/lib/libcudnn.so.9" "cvm shell --unset in project b"
    assert_eq "$(cat "$OUTD/b_edited")" "$DNN_A/lib/libcudnn.so.8" "project b after cvm use 11.2+8.1 there"
    # cvm deactivate: the hook is off in this shell; cvm shell turns it on again, with status 0.
    assert_eq "$(cat "$OUTD/after_deactivate")" "$system" "project a after cvm deactivate"
    assert_eq "$(cat "$OUTD/shell_status" 2>/dev/null)" "ok" "cvm shell after cvm deactivate (its status)"
    assert_contains "$(cat "$OUTD/oneline_c")" "fake nvcc 12.4.1" "cd \$PC && nvcc on one line, from project a"
    assert_not_contains "$(pane)" "_cvm_hook" "a shell error naming the hook"
}
