#!/usr/bin/env bash
# Completion in a real interactive fish (through tmux), loaded by `cvm init fish`: candidates
# with their descriptions.
COMPLETE_SHELL=fish
source "$(dirname "$0")/lib_complete.sh"

shell_command() {
    printf '%s' "fish --no-config -i -C 'set -g fish_greeting; function fish_prompt; printf \"cvm-test> \"; end; cvm init fish | source'"
}

common_checks
start; keys -l "cvm use --"; keys Tab
wait_screen "global default"; stop
echo "PASS: completion in fish"
