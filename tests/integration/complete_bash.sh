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
echo "PASS: completion in bash"
