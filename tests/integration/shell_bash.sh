#!/usr/bin/env bash
# Real bash evaluates `cvm env`, `cvm deactivate` and a `cvm script` file under a hostile path.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_shell.sh"
need_tools bash
BASH_BIN=$(command -v bash)
"$CVM" script 11.2 --shell bash -o "$OUTD/act.bash" 2>/dev/null || fail "cvm script --shell bash failed"
write_posix_driver bash > "$OUTD/driver.bash"
run_driver "$BASH_BIN" --norc --noprofile "$OUTD/driver.bash"
check_activation_dumps
echo "PASS: bash"
