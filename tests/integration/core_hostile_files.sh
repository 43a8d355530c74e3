#!/usr/bin/env bash
# Links and special files a cloned project (or a mirror) holds are never printed, never waited on
# and never read without bound: a `.cudaversion` linking to a secret, long version files,
# cvm.lock as /dev/zero or a FIFO, a file:// mirror holding a FIFO, a FIFO at the prompt hook's
# stamp.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
make_toolkit "$T/cuda-12.4" 12.4.1
make_toolkit "$T/cuda-11.2" 11.2.2
"$CVM" import "$T/cuda-12.4" 2>/dev/null || fail "import"
"$CVM" import "$T/cuda-11.2" 2>/dev/null || fail "import"

# A version file linking to someone's secrets: its text is never shown, in any form.
printf 'https://me:hunter2secret@github.com\n' > "$T/git-credentials"
mkdir -p "$T/p"
ln -s "$T/git-credentials" "$T/p/.cudaversion"
cd "$T/p"
expect_rc 2 "$CVM" current
assert_not_contains "$ERR" "hunter2" "the link's target was quoted"
assert_contains "$ERR" "$T/p/.cudaversion:1: " "the line names the file"
assert_contains "$ERR" "link" "the line says why its text is not shown"
expect_rc 2 "$CVM" current --json
assert_not_contains "$OUT$ERR" "hunter2" "the link's target was quoted in --json"
# ... not even one character of it: a target holding only '=' is not named as the bad character.
printf '=\n' > "$T/one-char"
mkdir -p "$T/q" && ln -s "$T/one-char" "$T/q/.cudaversion"
cd "$T/q"
expect_rc 2 "$CVM" current
assert_not_contains "$ERR" "'='" "a character of the link's target was quoted"
cd "$T/p"
expect_rc 2 "$CVM" use
assert_not_contains "$ERR" "hunter2"
expect_rc 2 "$CVM" env --shell bash
assert_not_contains "$OUT$ERR" "hunter2"
"$CVM" rehash > /dev/null 2>&1 || fail "rehash"
rc=0
"$CVM_ROOT/shims/nvcc" > "$T/out" 2> "$T/err" || rc=$?
[[ $rc != 0 ]] || fail "the shim ran with a broken .cudaversion"
assert_not_contains "$(cat "$T/out" "$T/err")" "hunter2" "the shim quoted the link's target"
# The same text in a regular file of the project is the project's own: quoted, as before.
rm "$T/p/.cudaversion"
printf 'not/a spec\n' > "$T/p/.cudaversion"
expect_rc 2 "$CVM" current
assert_contains "$ERR" "'not/a spec' is not a version spec"

# A long comment line before the spec: the whole file is read (not its first 4 KiB, which would
# hold no spec and let the parent folder's file decide).
echo "11.2" > "$T/.cudaversion"
{ printf '# %05000d\n' 0; echo "12.4"; } > "$T/p/.cudaversion"
expect_rc 0 "$CVM" current --json
assert_contains "$OUT" '"12.4.1"' "the spec after a long comment line was missed"
# A file too large to be a version file is refused, not read in part.
{ echo "12.4"; head -c 70000 /dev/zero | tr '\0' '#'; echo; } > "$T/p/.cudaversion"
expect_rc 2 "$CVM" current
assert_contains "$ERR" "is larger than 64 KiB, not a version file"
rm "$T/.cudaversion"
echo "12.4" > "$T/p/.cudaversion"

# cvm.lock as a link to /dev/zero, or as a FIFO: refused at once, neither read forever nor
# waited on.
ln -s /dev/zero "$T/p/cvm.lock"
rc=0
timeout 20 "$CVM" install --locked > /dev/null 2> "$T/err" || rc=$?
[[ $rc == 2 ]] || fail "install --locked with cvm.lock -> /dev/zero: exit $rc, $(cat "$T/err")"
assert_contains "$(cat "$T/err")" "cvm.lock is a device, not a cvm.lock"
rm "$T/p/cvm.lock"
mkfifo "$T/p/cvm.lock"
rc=0
timeout 20 "$CVM" install --locked > /dev/null 2> "$T/err" || rc=$?
[[ $rc == 2 ]] || fail "install --locked with a FIFO cvm.lock: exit $rc, $(cat "$T/err")"
assert_contains "$(cat "$T/err")" "cvm.lock is a FIFO, not a cvm.lock"
rm "$T/p/cvm.lock"
# ... or as a link to a secret: what is wrong, never its text.
ln -s "$T/git-credentials" "$T/p/cvm.lock"
expect_rc 2 "$CVM" install --locked
assert_not_contains "$ERR" "hunter2" "a linked cvm.lock's text was quoted"
assert_contains "$ERR" "is a link to a file that is not a cvm.lock"
rm "$T/p/cvm.lock"
# ... or larger than any cvm.lock: refused, not read in part, with what to do.
head -c 1100000 /dev/zero | tr '\0' '#' > "$T/p/cvm.lock"
expect_rc 2 "$CVM" install --locked
assert_contains "$ERR" "cvm.lock is larger than 1 MiB, not a cvm.lock; remove it and run \`cvm lock\` in the project"
rm "$T/p/cvm.lock"

# A file:// mirror holding FIFOs where a manifest should be: curl would wait in open() forever,
# whatever the stall timeout says.
M="$T/mirror"
mkdir -p "$M/cuda/redist" "$M/cudnn/redist" "$M/redist/cudnn"
mkfifo "$M/cuda/redist/redistrib_12.6.2.json" "$M/cuda/redist/redistrib_13.9.1.json"
export CVM_MIRROR="file://$M" CVM_RETRIES=0
rc=0
timeout 30 "$CVM" install cuda 12.6.2 > /dev/null 2> "$T/err" || rc=$?
[[ $rc != 124 ]] || fail "install hung on a FIFO in a file:// mirror"
[[ $rc != 0 ]] || fail "install from a FIFO manifest succeeded"
assert_contains "$(cat "$T/err")" "is a FIFO, not a file"
rc=0
timeout 30 "$CVM" update > /dev/null 2> "$T/err" || rc=$?
[[ $rc != 124 ]] || fail "update hung on a FIFO in a file:// mirror"
assert_contains "$(cat "$T/err")" "is a FIFO, not a file"
unset CVM_MIRROR

# A FIFO (or a link) at the prompt hook's stamp or its said-once file: replaced, never opened.
mkdir -p "$CVM_ROOT/cache/hook"
mkfifo "$CVM_ROOT/cache/hook/4242" "$CVM_ROOT/cache/hook/4242.said"
echo "not/a spec" > "$T/p/.cudaversion"
rc=0
timeout 20 "$CVM" hook-env --shell bash --pid 4242 > /dev/null 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "hook-env with FIFOs at its stamp: exit $rc"
[[ -f $CVM_ROOT/cache/hook/4242 && ! -p $CVM_ROOT/cache/hook/4242 ]] || fail "the stamp is not a regular file"
echo "mine" > "$T/precious"
rm "$CVM_ROOT/cache/hook/4242"
ln -s "$T/precious" "$CVM_ROOT/cache/hook/4242"
timeout 20 "$CVM" hook-env --shell bash --pid 4242 > /dev/null 2>&1 || fail "hook-env with a link at its stamp"
assert_eq "$(cat "$T/precious")" "mine" "the stamp was written through a link"
