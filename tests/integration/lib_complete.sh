# Completion typed in a real shell: each check starts the shell in its own tmux session (a
# private server for this test), types keys with Tab, and reads the screen.
# Needs: COMPLETE_SHELL (the program name), shell_command (prints the command line that starts
# it interactively, with cvm's completion loaded and the prompt "cvm-test> ").
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v tmux > /dev/null 2>&1 || skip "tmux is not installed"
command -v "$COMPLETE_SHELL" > /dev/null 2>&1 || skip "$COMPLETE_SHELL is not installed"

TMUX_SOCKET="$TEST_TMP/tmux.sock" # removed with the test folder
unset TMUX
stop_tmux() { stop_tmux_server "$TMUX_SOCKET"; cleanup_test_tmp; }
trap stop_tmux EXIT
export HOME="$TEST_TMP/home"
mkdir -p "$HOME"

# A store with two toolkits, a cuDNN for one of them, and shims.
import_sample_store "$TEST_TMP"
export PATH="$CVM_BIN:$PATH"

# The server stays up between sessions (a new session right after the last one ended would
# race the server's exit).
tmux -S "$TMUX_SOCKET" -f /dev/null start-server \; set -s exit-empty off
SESSION=0
# start: a fresh shell in a new session, once its prompt shows.
start() {
    SESSION=$((SESSION + 1))
    tmux -S "$TMUX_SOCKET" new-session -d -s "s$SESSION" -x 150 -y 40 \
        "env TERM=xterm-256color $(shell_command)"
    wait_screen "cvm-test>"  # (the pane is read without trailing blanks)
}
# keys KEY...: tmux send-keys (literal text, or Tab, C-u...).
keys() { tmux -S "$TMUX_SOCKET" send-keys -t "s$SESSION" "$@"; }
# wait_screen TEXT: until the screen shows TEXT (a minute at most, then the test fails: a busy
# machine may take seconds to start a shell).
screen_shows() {
    SCREEN=$(tmux -S "$TMUX_SOCKET" capture-pane -p -t "s$SESSION" 2>/dev/null || true)
    [[ $SCREEN == *"$1"* ]]
}
wait_screen() {
    wait_until 60 screen_shows "$1" && return 0
    fail "$COMPLETE_SHELL: the screen never showed [$1]; it shows:
$SCREEN"
}
stop() { tmux -S "$TMUX_SOCKET" kill-session -t "s$SESSION" 2>/dev/null || true; }

# type_tab TEXT: types TEXT, Tab, and a marker: the line then shows what completion inserted.
type_tab() {
    start
    keys -l "$1"
    keys Tab
    keys -l "@" # read by the shell once the completion is done
}

# The checks every shell passes.
common_checks() {
    # A command name completes, with the space after it.
    type_tab "cvm us"; wait_screen "cvm-test> cvm use @"; stop
    # An exact partial version; a spec with cuDNN.
    type_tab "cvm use 12.4+"; wait_screen "cvm use 12.4+9 @"; stop
    type_tab "cvm env --shell fi"; wait_screen "cvm env --shell fish @"; stop
    # Installed ids, from the test's store.
    start; keys -l "cvm uninstall "; keys Tab
    wait_screen "9.1.0.70-cuda12"; assert_contains "$SCREEN" "11.2.2"; assert_contains "$SCREEN" "12.4.1"; stop
    # An option use has and lock lacks, and the other way round.
    start; keys -l "cvm use --"; keys Tab
    wait_screen "--unset"; assert_contains "$SCREEN" "--global"; assert_not_contains "$SCREEN" "--check"; stop
    start; keys -l "cvm lock --"; keys Tab
    wait_screen "--check"; assert_not_contains "$SCREEN" "--global"; assert_not_contains "$SCREEN" "--unset"; stop
    # A program the shims provide.
    type_tab "cvm which nvc"; wait_screen "cvm which nvcc @"; stop
}
