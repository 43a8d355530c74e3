#!/usr/bin/env bash
# The smaller findings of the second red team: terminal escapes in folder names are printed
# escaped.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP

# A toolkit in a folder whose name would clear the screen and retitle the terminal.
ESC=$'\e'
BAD="$T/x${ESC}[2J${ESC}]0;pwned"$'\a'"y"
make_toolkit "$BAD/cuda" 12.4.1
expect_rc 0 "$CVM" import "$BAD/cuda"
assert_not_contains "$ERR" "$ESC" "import printed a raw escape"
assert_contains "$ERR" '\x1b[2J\x1b]0;pwned\x07y'
expect_rc 0 "$CVM" list
assert_not_contains "$OUT" "$ESC" "list printed a raw escape"
assert_contains "$OUT" '\x1b[2J'
mkdir -p "$T/p" && cd "$T/p"
"$CVM" use 12.4 2>/dev/null || fail "use"
expect_rc 0 "$CVM" current
assert_not_contains "$OUT" "$ESC" "current printed a raw escape"
expect_rc 0 "$CVM" which nvcc
assert_not_contains "$OUT" "$ESC" "which printed a raw escape"
expect_rc 0 "$CVM" current --json
assert_contains "$OUT" '\u001b[2J' "--json keeps the full path, escaped as JSON"
C1=$'\xc2\x9b'
make_toolkit "$T/c1${C1}31m/cuda" 12.6.2
expect_rc 0 "$CVM" import "$T/c1${C1}31m/cuda"
assert_not_contains "$ERR" "$C1" "a C1 control (CSI) was printed raw"
assert_contains "$ERR" '\u009b31m'
expect_rc 0 "$CVM" uninstall 12.4.1 12.6.2 --yes
rm -f .cudaversion
