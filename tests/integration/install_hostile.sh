#!/usr/bin/env bash
# Hostile archives of every kind are refused with exit code 2; nothing is written outside the
# store's staging folder and the store stays empty.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
A="$TEST_TMP/archives"
mkdir -p "$A"
for kind in dotdot absolute symlink-out symlink-chain hardlink-out device fifo; do
    $MK hostile "$A/$kind.tar.xz" "$kind"
done
$MK hostile "$A/zip-dotdot.zip" zip-dotdot
$MK hostile "$A/zip-absolute.zip" zip-absolute
: > "$TEST_TMP/.stderr"
before=$(cd "$TEST_TMP" && find . -path ./root -prune -o -print | sort)
for f in "$A"/*; do
    expect_rc 2 "$CVM" install "$f"
    assert_contains "$ERR" "refused" "$(basename "$f")"
done
after=$(cd "$TEST_TMP" && find . -path ./root -prune -o -print | sort)
assert_eq "$after" "$before" "files appeared outside the store"
[[ ! -e $TEST_TMP/evil && ! -e $TEST_TMP/abs-evil && ! -e $A/abs-evil && ! -e /etc/evil ]] || fail "escaped"
assert_store cudnn ""
assert_store cuda ""
echo PASS
