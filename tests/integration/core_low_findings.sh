#!/usr/bin/env bash
# The smaller findings of the second red team: terminal escapes in folder names are printed
# escaped; a program linking through another user's folder is refused; a library another user
# could change makes `cvm exec` warn; a folder whose path holds ':' is not imported (it would
# split PATH); a 0777 folder of the first-use record is refused; a TOML nested too deep and a
# flag given two values are said in cvm's words.
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

# ':' in a toolkit's path would split PATH: not imported.
make_toolkit "$T/a:b/cuda" 12.4.1
expect_rc 2 "$CVM" import "$T/a:b/cuda"
assert_contains "$ERR" "holds ':', which separates PATH's folders"
expect_rc 2 env CVM_ROOT="$T/st:ore" "$CVM" list
assert_contains "$ERR" "CVM_ROOT $T/st:ore holds ':'"

# bin/nvcc of an import linking into a folder another user may change: refused, though the file
# it reaches is fine.
make_toolkit "$T/tk" 12.4.1
mkdir -p "$T/open"
chmod 0777 "$T/open"
mv "$T/tk/bin/nvcc" "$T/real-nvcc"
ln -s "$T/real-nvcc" "$T/open/nvcc"
ln -s "$T/open/nvcc" "$T/tk/bin/nvcc"
expect_rc 0 "$CVM" import "$T/tk"
"$CVM" use 12.4 2>/dev/null || fail "use"
"$CVM" rehash > /dev/null 2>&1 || fail "rehash"
rc=0
"$CVM_ROOT/shims/nvcc" > "$T/out" 2> "$T/err" || rc=$?
[[ $rc == 2 ]] || fail "the shim ran nvcc through a folder every user may write: exit $rc, $(cat "$T/out" "$T/err")"
assert_contains "$(cat "$T/err")" "leads through"
assert_contains "$(cat "$T/err")" "$T/open"
rm "$T/tk/bin/nvcc"
mv "$T/real-nvcc" "$T/tk/bin/nvcc"
rc=0
"$CVM_ROOT/shims/nvcc" > /dev/null 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "the shim refuses a plain nvcc: exit $rc"

# A library everybody may write in an imported toolkit: cvm exec warns (the shim, which runs
# before every tool, checks folders and the program only).
chmod 0777 "$T/tk/lib64/libcudart.so.12"
expect_rc 0 "$CVM" exec -- true
assert_contains "$ERR" "warning: another user could change a library this program may load: $T/tk/lib64/libcudart.so.12 is writable by every user"
chmod 0644 "$T/tk/lib64/libcudart.so.12"
expect_rc 0 "$CVM" exec -- true
assert_not_contains "$ERR" "warning"

# The first-use record's folder, writable by every user: anyone could remove the record, so it
# is refused before anything is trusted on first use.
mkdir -p "$CVM_ROOT/registry"
chmod 0777 "$CVM_ROOT/registry"
M="$T/mirror"
mkdir -p "$M/redist/cudnn/v8.1.0"
export CVM_MIRROR="file://$M" CVM_REGISTRY_DIR="$CVM_SOURCE_DIR/registry"
expect_rc 2 "$CVM" install cudnn 8.1.0.77 --cuda 11.2
assert_contains "$ERR" "the folder of the record of archives trusted on first use $CVM_ROOT/registry"
chmod 0755 "$CVM_ROOT/registry"
unset CVM_MIRROR

# Library wording: a TOML nested past toml++'s limit, a flag given two values.
mkdir -p "$(dirname "$CVM_CONFIG")"
python3 -c 'print("store_path = " + "[" * 300 + "]" * 300)' > "$CVM_CONFIG"
expect_rc 2 "$CVM" list
assert_not_contains "$ERR" "TOML_"
assert_contains "$ERR" "values nested more than 256 deep"
rm "$CVM_CONFIG"
expect_rc 2 "$CVM" update --max 1 --max 2
assert_eq "$ERR" "cvm update: --max takes one value; see cvm help update"
