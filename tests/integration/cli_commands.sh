#!/usr/bin/env bash
# Command behaviour: `uninstall` asks before removing what a project or the global default
# selects (on a terminal; refuses without one unless --yes), takes several ids and prefixes;
# `lock` records no local path; `script` writes activate_cudaXY.* here (`-o -` prints); cmd
# scripts are refused for a Linux store; `cache clean`; the "next:" hints; errors from a
# read-only store or a bad CVM_ROOT are one line naming the path (run as nobody, since root
# ignores file modes); cvm's own usage errors read like its parse errors.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"
T=$TEST_TMP

# on_terminal INPUT CMD...: runs CMD with a terminal for stdin (util-linux `script`), typing
# INPUT once it has started; the whole session's output lands in $OUT, its exit code in $RC.
on_terminal() {
    local input=$1; shift
    local cmd
    printf -v cmd '%q ' "$@"
    RC=0
    OUT=$( (sleep 0.3; printf '%s\n' "$input") | script -qec "$cmd" /dev/null 2>&1) || RC=$?
}
command -v script >/dev/null || skip "util-linux script is not installed"

make_toolkit "$T/cuda-11.2" 11.2.2
make_toolkit "$T/cuda-12.3" 12.3.2
make_toolkit "$T/cuda-12.4" 12.4.1
make_cudnn "$T/cudnn-11.2-linux-x64-v8.1.0.77" 8.1.0
make_cudnn "$T/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" 9.1.0
import_all() {
    for d in "$@"; do "$CVM" import "$T/$d" 2>/dev/null || fail "import $d"; done
}
import_all cuda-11.2 cuda-12.3 cuda-12.4 cudnn-11.2-linux-x64-v8.1.0.77 cudnn-linux-x86_64-9.1.0.70_cuda12-archive

# ---- hints: what to run next, on stderr only ------------------------------------------------
expect_rc 0 "$CVM" import "$T/cuda-12.4"
assert_contains "$ERR" "cvm: next: cvm use 12.4.1"
mkdir -p "$T/p1" "$T/p2" "$T/p3"
cd "$T/p1"
expect_rc 0 "$CVM" use 12.4+9
assert_eq "$OUT" ""
assert_contains "$ERR" "next: cvm exec -- nvcc --version"
cd "$T/p2"
expect_rc 0 "$CVM" use 11.2+8
cd "$T/p3"
expect_rc 0 "$CVM" use 12.3
rm "$T/p3/.cudaversion"
expect_rc 0 "$CVM" use --global 12.4
assert_eq "$(cat "$CVM_ROOT/projects")" "$T/p1/.cudaversion"$'\n'"$T/p2/.cudaversion"$'\n'"$T/p3/.cudaversion"
cd "$T"

# ---- uninstall: ids, prefixes, ambiguity ------------------------------------------------------
expect_rc 2 "$CVM" uninstall 12
assert_eq "$ERR" "cvm uninstall: '12' matches 2 entries (12.4.1, 12.3.2); give more of the id"
expect_rc 1 "$CVM" uninstall 13
assert_contains "$ERR" "13 is not installed"
expect_rc 2 "$CVM" rm ../etc
[[ -d $CVM_ROOT/cuda/12.3.2 ]] || fail "an error removed something"
# 12.3 (prefix) is selected by no project (p3's file is gone, and so is its record) nor globally.
expect_rc 0 "$CVM" rm 12.3 9.1.0.70-cuda12 --yes
assert_contains "$ERR" "forgot cuda 12.3.2"
assert_contains "$ERR" "forgot cudnn 9.1.0.70-cuda12"
assert_contains "$ERR" "next: cvm list"
assert_eq "$(cat "$CVM_ROOT/projects")" "$T/p1/.cudaversion"$'\n'"$T/p2/.cudaversion" "the gone project was pruned"
import_all cudnn-linux-x86_64-9.1.0.70_cuda12-archive

# Selected by p1 and the global default: without a terminal, refused unless --yes.
before=$(ls "$CVM_ROOT/cuda" "$CVM_ROOT/cudnn")
expect_rc 2 "$CVM" uninstall 12.4 9.1 </dev/null
assert_contains "$ERR" "cvm: cuda 12.4.1 is selected by $T/p1/.cudaversion (12.4+9)"
assert_contains "$ERR" "cvm: cudnn 9.1.0.70-cuda12 is selected by $T/p1/.cudaversion (12.4+9)"
assert_contains "$ERR" "cvm: cuda 12.4.1 is selected by the global default (12.4)"
assert_contains "$ERR" "nothing removed; to remove it anyway: cvm uninstall --yes 12.4.1 9.1.0.70-cuda12"
assert_eq "$(ls "$CVM_ROOT/cuda" "$CVM_ROOT/cudnn")" "$before" "a refused uninstall removed something"
# A prefix of a cuDNN id, selected by a project through a prefix of its own.
expect_rc 2 "$CVM" uninstall 8.1 </dev/null
assert_contains "$ERR" "selected by $T/p2/.cudaversion (11.2+8)"
# On a terminal: asked; "n" keeps it (exit 1), "y" removes it.
on_terminal n "$CVM" uninstall 12.4.1
assert_eq "$RC" 1 "exit code after answering n"
assert_contains "$OUT" "remove it anyway? [y/N]"
assert_contains "$OUT" "nothing removed"
[[ -d $CVM_ROOT/cuda/12.4.1 ]] || fail "answering n removed the toolkit"
on_terminal y "$CVM" uninstall 12.4.1
assert_eq "$RC" 0 "exit code after answering y: $OUT"
assert_contains "$OUT" "forgot cuda 12.4.1"
[[ ! -e $CVM_ROOT/cuda/12.4.1 ]] || fail "answering y kept the toolkit"
# A project whose file selects something else no longer holds it back.
echo 11.2 > "$T/p2/.cudaversion"
expect_rc 0 "$CVM" uninstall 8.1.0.77-cuda11.2 </dev/null
expect_rc 0 "$CVM" uninstall --yes 9.1.0.70-cuda12 </dev/null

# An empty list says what to run.
expect_rc 0 "$CVM" uninstall -y 11.2.2
expect_rc 0 "$CVM" list
assert_contains "$OUT$ERR" "cvm install"
import_all cuda-11.2 cuda-12.4 cudnn-linux-x86_64-9.1.0.70_cuda12-archive

# ---- script: files named after the toolkit, here by default ---------------------------------
mkdir -p "$T/s" && cd "$T/s"
for sh in bash:sh zsh:sh fish:fish pwsh:ps1; do
    rm -f activate_cuda112.*
    expect_rc 0 "$CVM" script 11.2 --shell "${sh%%:*}"
    assert_eq "$OUT" "" "script --shell ${sh%%:*} printed on stdout"
    [[ -f activate_cuda112.${sh#*:} ]] || fail "script --shell ${sh%%:*} wrote no activate_cuda112.${sh#*:}: $(ls)"
    assert_contains "$ERR" "wrote activate_cuda112.${sh#*:}"
done
expect_rc 0 "$CVM" script 12.4+9 --shell bash
[[ -f activate_cuda124.sh ]] || fail "no activate_cuda124.sh"
assert_contains "$ERR" '`. ./activate_cuda124.sh` activates 12.4.1+9.1.0.70-cuda12'
rm -f activate_cuda*
expect_rc 0 "$CVM" script 11.2 --shell bash -o -
assert_contains "$OUT" "# cvm activation script for CUDA 11.2.2"
[[ -z $(ls) ]] || fail "script -o - wrote a file: $(ls)"
expect_rc 0 "$CVM" script 11.2 --shell fish -o "$T/s/my act.fish"
[[ -f "$T/s/my act.fish" ]] || fail "-o FILE was not honoured"
# cmd for a Linux store: one line, nothing written.
# The refusal gives the same command, to run on Windows.
expect_rc 2 "$CVM" script 11.2 --shell cmd
assert_eq "$ERR" "cvm script: .bat scripts come from cvm on Windows (this store holds Linux toolkits): run \`cvm script 11.2 --shell cmd\` there, in cmd or PowerShell; here, \`cvm script 11.2 --shell bash\`"
expect_rc 2 "$CVM" script 11.2+8.1 --shell cmd -o act.bat
assert_contains "$ERR" "run \`cvm script 11.2+8.1 -o act.bat --shell cmd\` there"
expect_rc 2 "$CVM" script 11.2 --shell cmd -o -
assert_eq "$OUT" ""
[[ ! -e activate_cuda112.bat ]] || fail "a .bat was written for a Linux store"

# ---- lock: archive names, sources and sums, never a local path -----------------------------
make_mirror "$T/mirror"
L1=$T/storeL
mkdir -p "$T/lp" && cd "$T/lp"
# From a folder mirror: the lock names NVIDIA's URL (install --locked goes through CVM_MIRROR).
CVM_ROOT=$L1 CVM_MIRROR="file://$T/mirror" expect_rc 0 "$CVM" install cuda 12.4.1 --components cuda_nvcc,cuda_cudart
assert_contains "$ERR" "next: cvm use 12.4.1"
# From a local file: name and sum, no source.
dnn=$T/mirror/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
CVM_ROOT=$L1 expect_rc 0 "$CVM" install "$dnn"
CVM_ROOT=$L1 expect_rc 0 "$CVM" use 12.4+9
CVM_ROOT=$L1 expect_rc 0 "$CVM" lock
assert_contains "$ERR" "was installed from a local file"
assert_contains "$ERR" "next: git add $T/lp/cvm.lock"
lock=$(cat "$T/lp/cvm.lock")
assert_not_contains "$lock" "$T" "the lock holds a local path"
assert_not_contains "$lock" "file://" "the lock holds a file:// URL"
assert_contains "$lock" 'url = "https://developer.download.nvidia.com/compute/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-12.4.131-archive.tar.xz"'
assert_contains "$lock" 'name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz"'
assert_contains "$lock" "sha256 = \"$(sha256sum "$dnn" | cut -d' ' -f1)\""

# ---- cache clean ----------------------------------------------------------------------------
export CVM_ROOT=$L1
mkdir -p "$CVM_ROOT/cache/downloads" "$CVM_ROOT/cache/registry"
echo '{}' > "$CVM_ROOT/cache/registry/overlay.json"
head -c 150000 /dev/zero > "$CVM_ROOT/cache/downloads/a.tar.xz"
mkdir -p "$T/elsewhere" && echo keep > "$T/elsewhere/keep"
ln -s "$T/elsewhere" "$CVM_ROOT/cache/downloads/link"
expect_rc 0 "$CVM" cache clean
assert_eq "$ERR" "cvm: removed downloaded archives in $CVM_ROOT/cache: 150.0 kB freed"
[[ ! -e $CVM_ROOT/cache/downloads ]] || fail "cache clean kept the downloads"
[[ -f $T/elsewhere/keep ]] || fail "cache clean followed a link"
[[ -f $CVM_ROOT/cache/registry/overlay.json ]] || fail "cache clean without --all removed more than downloads"
expect_rc 0 "$CVM" cache clean
assert_contains "$ERR" "nothing to clean"
expect_rc 0 "$CVM" cache clean --all --json
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["all"] and d["bytes_freed"] > 0 and d["removed"], d' <<<"$OUT" \
    || fail "cache clean --json: $OUT"
[[ -d $CVM_ROOT/cache && -z $(ls -A "$CVM_ROOT/cache") ]] || fail "cache clean --all left something"
expect_rc 0 "$CVM" list # still works: the index is rebuilt
expect_rc 2 "$CVM" cache
assert_contains "$ERR" "cvm cache clean"

# ---- errors: one line naming the path, never exception text ---------------------------------
cd "$T"
expect_rc 2 "$CVM" exec
assert_eq "$ERR" "cvm exec: nothing to run; usage: cvm exec [SPEC] -- CMD [ARGS...] or cvm exec [--spec SPEC] CMD [ARGS...]"
expect_rc 2 "$CVM" exec --frob nvcc
assert_contains "$ERR" "cvm exec: unknown option"
echo "not a folder" > "$T/afile"
CVM_ROOT=$T/afile expect_rc 1 "$CVM" use --global 11.2 --force
assert_eq "$ERR" "cvm: cannot create the folder $T/afile: a part of the path is a file, not a folder; CVM_ROOT ($T/afile) must be a folder; set it to one"
CVM_ROOT=$T/afile/sub expect_rc 1 "$CVM" import "$T/cuda-11.2"
assert_not_contains "$ERR" "filesystem error"
assert_contains "$ERR" "CVM_ROOT ($T/afile/sub) must be a folder"

if setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -x "$CVM" 2>/dev/null; then
    chmod 755 "$T"
    RO=$T/ro-root
    mkdir -p "$RO" "$T/ro-proj" "$T/rw-proj"
    chown nobody:nogroup "$T/rw-proj"
    echo 11.2 > "$T/ro-proj/.cudaversion"
    export CVM_ROOT=$RO
    out=$(as_nobody "$CVM" use --global 11.2 --force 2>&1) && fail "nobody wrote into a root-owned store"
    assert_eq "$out" "cvm: cannot write $RO/version: permission denied; check that you can write to $RO (CVM_ROOT), or set CVM_ROOT to a folder you own"
    out=$(as_nobody "$CVM" import "$T/cuda-11.2" 2>&1) && fail "nobody imported into a root-owned store"
    assert_contains "$out" "permission denied; check that you can write to $RO (CVM_ROOT)"
    assert_not_contains "$out" "filesystem error"
    out=$(as_nobody bash -c "cd '$T/ro-proj' && '$CVM' use 11.2 --force" 2>&1) && fail "nobody wrote into a root-owned folder"
    assert_eq "$out" "cvm: cannot write $T/ro-proj/.cudaversion: permission denied; check the folder's permissions, or run the command in a folder you can write"
    # A project in nobody's own folder is remembered only where the store can be written: the
    # .cudaversion is still written, without a word about the list.
    out=$(as_nobody bash -c "cd '$T/rw-proj' && '$CVM' use 11.2 --force" 2>&1) || fail "use in a writable folder: $out"
    assert_not_contains "$out" "projects"
    [[ -f $T/rw-proj/.cudaversion ]] || fail "no .cudaversion written"
else
    echo "note: nobody cannot run $CVM here; the other-user cases were not run" >&2
fi
echo "PASS: command behaviour"
