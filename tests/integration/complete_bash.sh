#!/usr/bin/env bash
# Completion in a real interactive bash (through tmux), loaded by `cvm init bash`.
COMPLETE_SHELL=bash
source "$(dirname "$0")/lib_complete.sh"

cat > "$HOME/rc.bash" <<'EOS'
PS1='cvm-test> '
bind 'set show-all-if-ambiguous on'
bind 'set completion-query-items 0'
bind 'set page-completions off'
eval "$(cvm init bash)"
EOS
shell_command() { printf 'bash --noprofile --rcfile %q -i' "$HOME/rc.bash"; }

common_checks
# bash splits --shell=fi at '=': the value completes all the same.
type_tab "cvm env --shell=fi"; wait_screen "cvm env --shell=fish @"; stop
# A folder for import (bash adds the slash).
mkdir -p "$TEST_TMP/work/somedir"
cd "$TEST_TMP/work"
type_tab "cvm import som"; wait_screen "cvm import somedir/@"; stop
# Issue 33 (finding 12): with a project's bin/cvm first on PATH, completion still runs the cvm
# that `cvm init` printed, by its absolute path.
mkdir -p "$TEST_TMP/project/bin"
printf '#!/bin/sh\necho "$*" >> %q\n' "$TEST_TMP/fake-ran" > "$TEST_TMP/project/bin/cvm"
chmod 0755 "$TEST_TMP/project/bin/cvm"
cp "$HOME/rc.bash" "$HOME/rc-project.bash"
printf 'PATH=%q:$PATH\n' "$TEST_TMP/project/bin" >> "$HOME/rc-project.bash"
shell_command() { printf 'bash --noprofile --rcfile %q -i' "$HOME/rc-project.bash"; }
type_tab "cvm us"; wait_screen "cvm-test> cvm use @"; stop
[[ ! -e $TEST_TMP/fake-ran ]] || fail "completion ran the project's bin/cvm: $(cat "$TEST_TMP/fake-ran")"
echo "PASS: completion in bash"
