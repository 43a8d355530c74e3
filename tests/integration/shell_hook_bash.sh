#!/usr/bin/env bash
# The prompt hook of `cvm init bash` in a real interactive bash driven through tmux, with nounset
# on and another tool's PROMPT_COMMAND after it, which must still run and see the command's status.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_hook.sh"
printf '%s\n' 'set -u' 'PROMPT_COMMAND='\''echo "st=$?" >> "$OUTD/other"'\' 'eval "$("$CVM" init bash)"' 'PS1="$ "' \
    > "$TEST_TMP/bashrc"
start_shell bash --rcfile "$TEST_TMP/bashrc" --noprofile -i
run_hook_steps 'export PATH="$MYBIN:$PATH" CUDA_HOME=mine' 'eval "$(cvm env 12.4+9)"'
check_hook_results
: > "$OUTD/other"
step 'cd "$PB"; (exit 3)'
assert_eq "$(head -1 "$OUTD/other")" "st=3" "the other prompt command after the hook ran"
echo "PASS: bash prompt hook"
