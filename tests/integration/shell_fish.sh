#!/usr/bin/env bash
# Real fish evaluates `cvm env`, `cvm deactivate` and a `cvm script` file under a hostile path.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_shell.sh"
need_tools fish
FISH_BIN=$(command -v fish)
"$CVM" script 11.2 --shell fish -o "$OUTD/act.fish" 2>/dev/null || fail "cvm script --shell fish failed"
cat > "$OUTD/driver.fish" <<'EOS'
env -0 > $OUTD/before
env -C $HOSTILE_DIR/proj $CVM env | source
env -0 > $OUTD/a1
nvcc > $OUTD/nvcc_a
$CVM env --shell fish 11.2 | source
env -0 > $OUTD/a2
$CVM env --shell fish 12.4+9 | source
env -0 > $OUTD/b
nvcc > $OUTD/nvcc_b
$SHELL_BIN --no-config -c '$CVM deactivate --shell fish | source; env -0 > $OUTD/child_after'
cvm_deactivate
env -0 > $OUTD/after
functions -q cvm_deactivate; and echo defined > $OUTD/func_left
$CVM env --shell fish 11.2 | source
env -C $HOSTILE_DIR/sys $CVM env --shell fish | source
env -0 > $OUTD/after_system
source $OUTD/act.fish
env -0 > $OUTD/s1
nvcc > $OUTD/nvcc_s
cvm_deactivate
env -0 > $OUTD/after_s
$CVM env --shell fish 12.4+9 | source
source $OUTD/act.fish
env -0 > $OUTD/s2
cvm_deactivate
env -0 > $OUTD/after_s2
EOS
set_expectations .
run_driver "$FISH_BIN" --no-config "$OUTD/driver.fish"
check_activation_dumps
echo "PASS: fish"
