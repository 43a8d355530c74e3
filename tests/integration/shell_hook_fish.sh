#!/usr/bin/env bash
# The prompt hook of `cvm init fish` in a real interactive fish driven through tmux.
source "$(dirname "$0")/lib.sh"
need_tools fish
source "$(dirname "$0")/lib_hook.sh"
start_shell fish -i -C '$CVM init fish | source; function fish_greeting; end'
run_hook_steps 'set -gx PATH $MYBIN $PATH; set -gx CUDA_HOME mine' 'cvm env 12.4+9 | source'
check_hook_results
echo "PASS: fish prompt hook"
