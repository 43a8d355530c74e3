#!/usr/bin/env bash
# Issue 35, finding 2: a SPEC given to the command itself is named as given on the command line
# when it selects nothing installed, never as CVM_VERSION; CVM_VERSION is still named when it
# is the variable that selects.
source "$(dirname "$0")/lib.sh"

make_toolkit "$TEST_TMP/cuda-12.4" 12.4.1
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.4"
mkdir -p "$TEST_TMP/proj"
cd "$TEST_TMP/proj"

# Each command with a SPEC argument, given 11.2 (not installed) on the command line.
check_argument() {
    expect_rc 1 "$CVM" "$@"
    assert_contains "$ERR" "(selected by the command line)" "cvm $*"
    assert_not_contains "$ERR" "CVM_VERSION" "cvm $*"
    [[ $(printf '%s' "$ERR" | grep -c 'command line') == 1 ]] || fail "cvm $*: not one line: $ERR"
}
check_argument exec 11.2 -- nvcc
check_argument exec --spec 11.2 nvcc
check_argument env 11.2 --shell bash
check_argument script 11.2+8.1 --shell bash
check_argument probe 11.2
check_argument export --oci "$TEST_TMP/image" 11.2
check_argument shell 11.2 --shell bash

# The same spec from CVM_VERSION: the variable is named.
expect_rc 1 env CVM_VERSION=11.2 "$CVM" exec -- nvcc
assert_contains "$ERR" "(selected by CVM_VERSION)"
assert_not_contains "$ERR" "command line"
expect_rc 1 env CVM_VERSION=11.2 "$CVM" env --shell bash
assert_contains "$ERR" "(selected by CVM_VERSION)"
# ... and a project's file by its path and line.
echo 11.2 > .cudaversion
expect_rc 1 "$CVM" exec -- nvcc
assert_contains "$ERR" "(selected by $TEST_TMP/proj/.cudaversion:1)"
