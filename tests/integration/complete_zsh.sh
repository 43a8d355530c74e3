#!/usr/bin/env bash
# Completion in a real interactive zsh (through tmux), loaded by `cvm init zsh`: candidates
# with their descriptions.
COMPLETE_SHELL=zsh
source "$(dirname "$0")/lib_complete.sh"

mkdir -p "$HOME/zdot"
cat > "$HOME/zdot/.zshrc" <<'EOS'
PS1='cvm-test> '
autoload -Uz compinit && compinit -u -d "$ZDOTDIR/.zcompdump"
eval "$(cvm init zsh)"
EOS
shell_command() { printf 'env ZDOTDIR=%q zsh -i' "$HOME/zdot"; }

common_checks
# Descriptions beside the candidates.
start; keys -l "cvm use --"; keys Tab
wait_screen "the global default"; stop
start; keys -l "cvm "; keys Tab
wait_screen "Select CUDA[+CUDNN] for this folder"; stop
echo "PASS: completion in zsh"
