#!/usr/bin/env bash
# Version files as people write them, and hostile ones: refused with exit 2, file and line named.
source "$(dirname "$0")/lib.sh"
make_toolkit "$TEST_TMP/tk" 11.2.2
"$CVM" import "$TEST_TMP/tk" 2>/dev/null
cd "$TEST_TMP"

printf '\xEF\xBB\xBF# project toolchain\r\n\r\n  11.2   # pinned for TF 2.5\r\n' > .cudaversion
expect_rc 0 "$CVM" current
assert_contains "$OUT" "11.2.2 (set by $TEST_TMP/.cudaversion:3)"
expect_rc 0 "$CVM_ROOT/shims/nvcc"

bad_specs=('../../etc/passwd' '/usr/local/cuda' '11.2; rm -rf ~' '"11.2"' "'11.2'" '11.2 && id' '$(id)' '`id`' '11 .2' 'C:\cuda' '11.2|x')
n=0
for bad in "${bad_specs[@]}"; do
    printf '# c\n%s\n' "$bad" > .cudaversion
    expect_rc 2 "$CVM" current
    assert_contains "$ERR" "$TEST_TMP/.cudaversion:2" "spec [$bad]"
    expect_rc 2 "$CVM_ROOT/shims/nvcc"
    assert_contains "$ERR" ".cudaversion:2"
    n=$((n + 1))
done
printf '11.2\x07\n' > .cudaversion
expect_rc 2 "$CVM" current
assert_contains "$ERR" "control character"
CVM_VERSION='../x' expect_rc 2 "$CVM" current
assert_contains "$ERR" "CVM_VERSION"
rm .cudaversion
printf '\n\n12.9\n' > "$CVM_ROOT/version"
expect_rc 1 "$CVM" current
assert_contains "$ERR" "cvm install 12.9"
echo "core_version_files: ok ($n hostile specs refused)"
