#!/usr/bin/env bash
# The prompt hook of `cvm init bash` in a real interactive bash driven through tmux.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_hook.sh"
printf '%s\n' 'PROMPT_COMMAND="echo other >/dev/null"' 'eval "$("$CVM" init bash)"' 'PS1="$ "' > "$TEST_TMP/bashrc"
start_shell bash --rcfile "$TEST_TMP/bashrc" --noprofile -i
run_hook_steps 'export PATH="$MYBIN:$PATH" CUDA_HOME=mine' 'eval "$(cvm env 12.4+9)"'
check_hook_results
echo "PASS: bash prompt hook"
