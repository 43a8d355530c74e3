#!/usr/bin/env bash
# Windows, under Wine: trust comes from the owner SID and the access list. Wine shows a file of
# another Unix user as owned by ANONYMOUS LOGON (S-1-5-7) and a world-writable one with an
# Everyone entry that may write, so chown/chmod here give cvm.exe real descriptors to refuse:
# a store folder, an entry's folder, the config file and the global version file; a
# .cudaversion of another user in a folder everybody may write to is skipped with a warning.
# Owners Wine cannot give a file (another user's SID, Administrators, TrustedInstaller) and
# access lists it does not make are judged by trust_sd_test.exe on descriptors that Windows
# builds from SDDL (tests/windows/trust_sd_test.cpp).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
[[ $(id -u) == 0 ]] || skip "needs root (files are chowned to nobody)"
CVM_EXE="$WINDOWS_BIN/cvm.exe"

# --- the decision on built descriptors
SD_TEST="$WINDOWS_BIN/../tests/trust_sd_test.exe"
if [[ ! -f $SD_TEST ]]; then # a build folder from before the test existed
    SD_TEST="$TEST_TMP/trust_sd_test.exe"
    x86_64-w64-mingw32-g++ -std=c++17 -static -I"$CVM_SOURCE_DIR/src" -o "$SD_TEST" \
        "$WIN_FIXTURES_SRC/trust_sd_test.cpp" "$CVM_SOURCE_DIR/src/platform/windows/security.cpp" -ladvapi32 ||
        fail "mingw-w64 could not build trust_sd_test.exe"
fi
wrun "$SD_TEST"
[[ $RC == 0 ]] || fail "security descriptors misjudged: $OUT"
assert_contains "$OUT" "0 failed"

# --- real files: a toolkit in a store of this test, selected globally
TK="$WIN_C/tk"
make_win_toolkit "$TK" 11.2.2
export CVM_ROOT="$WIN_C_WIN\\store"
ROOT="$WIN_C/store"
wexpect 0 "$CVM_EXE" import "$(winpath "$TK")"
wexpect 0 "$CVM_EXE" use --global 11.2
wexpect 0 "$CVM_EXE" which nvcc
SHIM="$ROOT/shims/nvcc.exe"
wexpect 0 "$SHIM" --version

# The store folder of another account: refused by commands and the shim, naming the owner.
chown nobody "$ROOT/cuda"
wexpect 2 "$CVM_EXE" list
assert_contains "$ERR" "refusing the store folder"
assert_contains "$ERR" "S-1-5-7"
assert_contains "$ERR" "takeown"
one_line "$ERR"
wexpect 2 "$SHIM" --version
assert_contains "$ERR" "refusing the store folder"

# Listed in the machine's config (trusted_owners), by SID or by a name Windows resolves: trusted.
SYS="$WIN_C/sys/cvm"
mkdir -p "$SYS"
TEST_SYSTEM_CONFIG=$CVM_SYSTEM_CONFIG
export CVM_SYSTEM_CONFIG="$(winpath "$SYS")\\config.toml"
for owner in S-1-5-7 "ANONYMOUS LOGON"; do
    printf 'trusted_owners = ["%s"]\n' "$owner" > "$SYS/config.toml"
    wexpect 0 "$CVM_EXE" list
    wexpect 0 "$SHIM" --version
done
# Another account's SID, or a name nobody has, trusts nobody; the message names the file to list it in.
printf 'trusted_owners = ["S-1-5-21-1-2-3-1002", "no-such-account-of-cvm"]\n' > "$SYS/config.toml"
wexpect 2 "$CVM_EXE" list
assert_contains "$ERR" "S-1-5-7"
assert_contains "$ERR" "trusted_owners in $(winpath "$SYS")\\config.toml"
one_line "$ERR"
# Writable by everyone: refused even with Everyone listed (an account that stands for anyone).
printf 'trusted_owners = ["S-1-5-7", "Everyone"]\n' > "$SYS/config.toml"
chmod o+w "$ROOT/cuda"
wexpect 2 "$CVM_EXE" list
assert_contains "$ERR" "is writable by"
assert_contains "$ERR" "S-1-1-0"
chmod o-w "$ROOT/cuda"
wexpect 0 "$CVM_EXE" list
# The machine config's folder must be one only administrators (or the user) may change.
chmod o+w "$SYS"
wexpect 2 "$CVM_EXE" list
assert_contains "$ERR" "refusing the machine config folder $(winpath "$SYS")"
one_line "$ERR"
chmod o-w "$SYS"
rm "$SYS/config.toml"
export CVM_SYSTEM_CONFIG=$TEST_SYSTEM_CONFIG
chown root "$ROOT/cuda"
wexpect 0 "$CVM_EXE" list

# Writable by everyone: refused, naming Everyone and the icacls fix.
chmod o+w "$ROOT/cuda"
wexpect 2 "$CVM_EXE" which nvcc
assert_contains "$ERR" "is writable by"
assert_contains "$ERR" "S-1-1-0"
assert_contains "$ERR" "icacls"
one_line "$ERR"
chmod o-w "$ROOT/cuda"

# An entry's folder and its files' folder of another account (the entry file stays root's).
chown nobody "$ROOT/cuda/11.2.2"
wexpect 2 "$CVM_EXE" which nvcc
assert_contains "$ERR" "11.2.2"
assert_contains "$ERR" "S-1-5-7"
wexpect 2 "$SHIM" --version
chown root "$ROOT/cuda/11.2.2"
chown nobody "$TK/bin"
wexpect 2 "$SHIM" --version
assert_contains "$ERR" "$(winpath "$TK")\\bin"
chown root "$TK/bin"
wexpect 0 "$SHIM" --version

# The global version file and the config file.
chown nobody "$ROOT/version"
wexpect 2 "$CVM_EXE" current
assert_contains "$ERR" "refusing the global version file"
chown root "$ROOT/version"
CONF="$WIN_C/config.toml"
printf 'store_path = []\n' > "$CONF"
chmod 666 "$CONF"
CVM_CONFIG="$(winpath "$CONF")" wexpect 2 "$CVM_EXE" list
assert_contains "$ERR" "refusing the config file"
assert_contains "$ERR" "S-1-1-0"
chmod 644 "$CONF"
CVM_CONFIG="$(winpath "$CONF")" wexpect 0 "$CVM_EXE" list

# A .cudaversion of another user in a folder everybody may write to: skipped with a warning.
SHARED="$WIN_C/shared"
mkdir -p "$SHARED/proj"
chmod 1777 "$SHARED/proj"
printf '11.2\n' > "$SHARED/proj/.cudaversion"
chown nobody "$SHARED/proj/.cudaversion"
cat > "$TEST_TMP/cur.bat" << EOS
@echo off
cd /d "$(winpath "$SHARED/proj")"
"$(winpath "$CVM_EXE")" current
EOS
wbatch "$TEST_TMP/cur.bat"
assert_contains "$ERR" "ignoring"
assert_contains "$ERR" ".cudaversion"
assert_contains "$ERR" "S-1-5-7"
assert_contains "$OUT" "global"
echo "windows_trust: ok"
