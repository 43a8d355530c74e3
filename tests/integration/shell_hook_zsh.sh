#!/usr/bin/env bash
# The prompt hook of `cvm init zsh` in a real interactive zsh driven through tmux.
source "$(dirname "$0")/lib.sh"
need_tools zsh
source "$(dirname "$0")/lib_hook.sh"
mkdir -p "$TEST_TMP/zdot"
printf '%s\n' 'setopt nounset' 'eval "$("$CVM" init zsh)"' 'PS1="%% "' > "$TEST_TMP/zdot/.zshrc"
start_shell ZDOTDIR="$TEST_TMP/zdot" zsh -i
run_hook_steps 'export PATH="$MYBIN:$PATH" CUDA_HOME=mine' 'eval "$(cvm env 12.4+9)"'
check_hook_results
echo "PASS: zsh prompt hook"
