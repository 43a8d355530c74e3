#!/usr/bin/env bash
# `cvm env`, `cvm script`, `cvm deactivate` and `cvm init` as commands: files, names, exit codes,
# and the completions of `cvm init` in real bash, zsh and fish.
source "$(dirname "$0")/lib.sh"

# A Windows-possible hostile folder (no '"'), so the cmd script can be written too.
BASE="$TEST_TMP/my dir 'q' \$HOME %PATH% ^&! (x) ünï"
export CVM_ROOT="$BASE/root"
import_sample_store "$BASE"
work="$BASE/work"
mkdir -p "$work"
cd "$work"

# Usage errors and failures.
expect_rc 2 "$CVM" env --shell tcsh 11.2
assert_contains "$ERR" "tcsh"
expect_rc 2 "$CVM" env 'bad;spec'
expect_rc 1 "$CVM" env --shell bash
assert_contains "$ERR" "cvm use"
expect_rc 1 "$CVM" env --shell bash 13
expect_rc 2 "$CVM" script system --shell bash
expect_rc 2 "$CVM" init
expect_rc 2 "$CVM" init cmd
assert_contains "$ERR" "PATH"

# cmd scripts need a Windows store (their text is tested in tests/unit/core/shell_test.cpp and
# under Wine by windows_cmd.sh): refused here, nothing written.
expect_rc 2 "$CVM" script 11.2 --shell cmd
assert_contains "$ERR" "come from cvm on Windows"
[[ ! -e "$work/activate_cuda112.bat" ]] || fail "cvm script --shell cmd wrote a .bat for a Linux store"
# cvm env too: one line, exit 2, no code.
expect_rc 2 "$CVM" env 11.2 --shell cmd
assert_eq "$OUT" "" "cvm env --shell cmd for a Linux store"
assert_eq "$(wc -l <<< "$ERR")" 1 "lines of the refusal"
assert_contains "$ERR" "Windows store"

# pwsh: activate_cuda112.ps1, pure ASCII (non-ASCII letters as [char] codes).
expect_rc 0 "$CVM" script 11.2 --shell pwsh
[[ -f "$work/activate_cuda112.ps1" ]] || fail "no activate_cuda112.ps1"
if LC_ALL=C grep -q -P '[^\x00-\x7f]' "$work/activate_cuda112.ps1"; then fail "the .ps1 file is not ASCII"; fi
assert_contains "$(cat "$work/activate_cuda112.ps1")" "+[char]0x00FC+"

# bash/zsh/fish scripts too are written here unless -o; `-o -` prints them.
expect_rc 0 "$CVM" script 11.2 --shell bash -o -
assert_contains "$OUT" "# cvm activation script for CUDA 11.2.2"
[[ ! -e "$work/activate_cuda112.sh" ]] || fail "a bash script was written with -o -"
expect_rc 0 "$CVM" script 11.2 --shell fish -o "$work/act.fish"
[[ -f "$work/act.fish" ]] || fail "-o was not honoured for fish"

# Without --shell: the shell that runs cvm (here bash), whatever SHELL says; SHELL when what runs
# cvm is no shell (timeout here).
OUT=$(SHELL=/usr/bin/fish "$CVM" env 11.2) || fail "cvm env with SHELL=fish failed"
assert_contains "$OUT" "export CUDA_PATH="
OUT=$(SHELL=/usr/bin/fish timeout 60 "$CVM" env 11.2) || fail "cvm env with SHELL=fish failed"
assert_contains "$OUT" "set -gx CUDA_PATH "
OUT=$(SHELL=/bin/zsh timeout 60 "$CVM" env 11.2) || fail "cvm env with SHELL=zsh failed"
assert_contains "$OUT" "export CUDA_PATH="

# bash: init twice, shims first once; completion of commands and of installed ids.
export PATH="$CVM_BIN:$PATH"
out=$(bash --norc --noprofile -c '
    eval "$(cvm init bash)"; eval "$(cvm init bash)"
    printf "%s\n" "${PATH%%:*}"
    n=0; IFS=:; for d in $PATH; do [ "$d" = "$CVM_ROOT/shims" ] && n=$((n+1)); done; echo "count=$n"
    unset IFS
    COMP_WORDS=(cvm unin); COMP_CWORD=1; _cvm_complete; echo "cmds=${COMPREPLY[*]}"
    COMP_WORDS=(cvm uninstall ""); COMP_CWORD=2; _cvm_complete; echo "ids=${COMPREPLY[*]}"
    COMP_WORDS=(cvm env --shell f); COMP_CWORD=3; _cvm_complete; echo "shells=${COMPREPLY[*]}"
    COMP_WORDS=(cvm use 12.4.1+); COMP_CWORD=2; _cvm_complete; echo "specs=${COMPREPLY[*]}"
') || fail "cvm init bash did not evaluate: $out"
assert_eq "$out" "$CVM_ROOT/shims
count=1
cmds=uninstall
ids=12.4.1 11.2.2 9.1.0.70-cuda12
shells=fish
specs=12.4.1+9.1.0.70-cuda12"

if command -v zsh > /dev/null 2>&1; then
    out=$(HOME="$TEST_TMP" zsh -f -c '
        eval "$(cvm init zsh)"
        autoload -Uz compinit && compinit -u -d "$HOME/.zcompdump"
        eval "$(cvm init zsh)"
        print -r -- "${PATH%%:*} ${_comps[cvm]}"
    ') || fail "cvm init zsh did not evaluate: $out"
    assert_eq "$out" "$CVM_ROOT/shims _cvm"
fi

if command -v fish > /dev/null 2>&1; then
    out=$(fish --no-config -c '
        cvm init fish | source; cvm init fish | source
        echo $PATH[1] (count (contains -i -- $CVM_ROOT/shims $PATH))
        complete -C "cvm unin" | string replace -r "\t.*" ""
        complete -C "cvm uninstall " | string replace -r "\t.*" "" | sort
    ') || fail "cvm init fish did not evaluate: $out"
    assert_eq "$out" "$CVM_ROOT/shims 1
uninstall
11.2.2
12.4.1
9.1.0.70-cuda12"
fi
echo "PASS: shell commands"
