#!/usr/bin/env bash
# `cvm list` and `cvm list --json` show an entry the shim would refuse (its folder, entry file,
# files folder, bin or lib folder owned by another user or writable by others) as untrusted,
# naming the folder and what to run, from the index as well as from the entries; the others are
# listed as before.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root (files are chowned to nobody)"
T=$TEST_TMP
chmod 755 "$T"

TK=$T/tk
make_toolkit "$TK" 12.4.1
make_toolkit "$T/tk118" 11.8.0
expect_rc 0 "$CVM" import "$TK"
expect_rc 0 "$CVM" import "$T/tk118"
expect_rc 0 "$CVM" use --global 12.4
ENTRY=$CVM_ROOT/cuda/12.4.1
NOBODY="nobody (uid $(id -u nobody))"

# json_field ID FIELD: the field of the toolkit ID in `cvm list --json`.
json_field() {
    expect_rc 0 "$CVM" list --json
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print([e for e in d["cuda"] if e["id"]==sys.argv[2]][0].get(sys.argv[3], "-"))' "$OUT" "$1" "$2"
}
# untrusted_in_list WANT: the 12.4.1 line says UNTRUSTED with WANT, the 11.8.0 line does not;
# both from the entries (the store folder's time is ahead of the clock: never still long enough
# for an index, however slow the machine) and (after it has been still, so an index is written)
# from the index.
untrusted_in_list() {
    local pass line
    for pass in entries index; do
        if [[ $pass == index ]]; then
            touch -d '1 minute ago' "$CVM_ROOT/cuda"
            expect_rc 0 "$CVM" list # writes the index
        else
            touch -d '+1 hour' "$CVM_ROOT/cuda"
        fi
        expect_rc 0 "$CVM" list
        line=$(grep ' 12\.4\.1 ' <<< "$OUT") || fail "12.4.1 not listed ($pass): $OUT"
        assert_contains "$line" "UNTRUSTED, cvm will not run it: $1" "12.4.1 ($pass)"
        line=$(grep ' 11\.8\.0 ' <<< "$OUT") || fail "11.8.0 not listed ($pass): $OUT"
        assert_not_contains "$line" "UNTRUSTED"
    done
    [[ $(ls "$CVM_ROOT"/cache/index/cuda-*.brief 2> /dev/null) ]] || fail "no list index was written"
    assert_eq "$(json_field 12.4.1 trusted)" "False"
    assert_contains "$(json_field 12.4.1 untrusted)" "$1"
    assert_eq "$(json_field 11.8.0 trusted)" "True"
    assert_eq "$(json_field 11.8.0 untrusted)" "-"
}

expect_rc 0 "$CVM" list
assert_not_contains "$OUT" "UNTRUSTED"

# fixed_in_list: after the fix, no line says UNTRUSTED, though the index made before it is still
# valid (an entry the index doubts is looked at again).
fixed_in_list() {
    expect_rc 0 "$CVM" list
    assert_not_contains "$OUT" "UNTRUSTED"
}

chown nobody "$ENTRY"
untrusted_in_list "$ENTRY is owned by $NOBODY, not by you or root; run \`chown \$(id -u) $ENTRY\` if it is yours"
chown root "$ENTRY"
fixed_in_list

chown nobody "$ENTRY/entry"
untrusted_in_list "$ENTRY/entry is owned by $NOBODY"
chown root "$ENTRY/entry"
fixed_in_list

chmod o+w "$TK"
untrusted_in_list "$TK is writable by every user (owner root (uid 0)); run \`chmod o-w $TK\`"
chmod o-w "$TK"
fixed_in_list

chgrp nogroup "$TK/lib64"
chmod g+w "$TK/lib64"
untrusted_in_list "$TK/lib64 is writable by its group (owner root (uid 0)); run \`chmod g-w $TK/lib64\`"
chmod g-w "$TK/lib64"
fixed_in_list

chown nobody "$TK/bin"
untrusted_in_list "$TK/bin is owned by $NOBODY"
# What list calls untrusted is what the shim refuses.
expect_rc 2 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$ERR" "refusing a folder of cuda 12.4.1 $TK/bin"
# A listed owner is trusted by both.
mkdir -p "$(dirname "$CVM_SYSTEM_CONFIG")"
echo 'trusted_owners = ["nobody"]' > "$CVM_SYSTEM_CONFIG"
expect_rc 0 "$CVM" list
assert_not_contains "$OUT" "UNTRUSTED"
assert_eq "$(json_field 12.4.1 trusted)" "True"
expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
rm "$CVM_SYSTEM_CONFIG"
chown root "$TK/bin"
expect_rc 0 "$CVM" list
assert_not_contains "$OUT" "UNTRUSTED"
echo "core_trust_list: ok"
