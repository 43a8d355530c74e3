#!/usr/bin/env bash
# Real zsh evaluates `cvm env`, `cvm deactivate` and a `cvm script` file under a hostile path.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_shell.sh"
need_tools zsh
ZSH_BIN=$(command -v zsh)
"$CVM" script 11.2 --shell zsh -o "$OUTD/act.zsh" 2>/dev/null || fail "cvm script --shell zsh failed"
write_posix_driver zsh > "$OUTD/driver.zsh"
run_driver "$ZSH_BIN" -f "$OUTD/driver.zsh"
check_activation_dumps
echo "PASS: zsh"
