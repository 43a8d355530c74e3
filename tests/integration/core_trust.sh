#!/usr/bin/env bash
# Trust, special files, damaged entries and HOME: cvm uses nothing another user could have
# planted (store folders, config files, the shims folder, the global version file), never blocks
# on a FIFO, reports what it cannot read instead of passing over it, lists damaged entries, and
# stops with one line when HOME is needed and missing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"

[[ $(id -u) == 0 ]] || skip "needs root (files are chowned to nobody)"
command -v setpriv >/dev/null || skip "needs setpriv"
T=$TEST_TMP
chmod 755 "$T"

make_toolkit "$T/tk124" 12.4.1
expect_rc 0 "$CVM" import "$T/tk124"
expect_rc 0 "$CVM" use --global 12
S=$CVM_ROOT/shims

# --- Another user's store layer: nobody imports "12.9.9" into a store that root's config lists.
EVIL=$T/evil
mkdir -p "$EVIL"
chown nobody:nogroup "$EVIL"
make_toolkit "$T/evil-tk" 12.9.9
printf '#!/bin/sh\necho PWNED\n' >"$T/evil-tk/bin/nvcc"
chown -R nobody:nogroup "$T/evil-tk"
CVM_ROOT=$EVIL as_nobody "$CVM" import "$T/evil-tk" >/dev/null 2>&1 || fail "nobody could not import into its store"
mkdir -p "$(dirname "$CVM_CONFIG")"
echo "store_path = [\"$EVIL\"]" >"$CVM_CONFIG"
expect_rc 2 "$CVM" list
assert_contains "$ERR" "refusing the store folder $EVIL: it is owned by nobody (uid $(id -u nobody))"
assert_contains "$ERR" "trusted_owners"
one_line "$ERR"
expect_rc 2 "$S/nvcc"
assert_not_contains "$OUT" "PWNED"
assert_contains "$ERR" "refusing the store folder $EVIL"
# Listed by root in the machine's config: trusted.
mkdir -p "$(dirname "$CVM_SYSTEM_CONFIG")"
echo 'trusted_owners = ["nobody"]' >"$CVM_SYSTEM_CONFIG"
expect_rc 0 "$CVM" list
assert_contains "$OUT" "12.9.9"
echo "trusted_owners = [$(id -u nobody)]" >"$CVM_SYSTEM_CONFIG"
expect_rc 0 "$CVM" list
# Commands that read each config file themselves read the machine's as the machine's: install (its
# [download] settings) and doctor (host_compiler) took it for a user's file and refused its
# trusted_owners ("only read from the machine's config file").
CVM_MIRROR=file://$T/no-mirror expect_rc 1 "$CVM" install 11.8
assert_contains "$ERR" "$T/no-mirror"
assert_not_contains "$ERR" "trusted_owners"
"$CVM" doctor >"$T/doctor.out" 2>&1 || true # its findings (exit 1) are not this test's
assert_contains "$(cat "$T/doctor.out")" "Selected"
assert_not_contains "$(cat "$T/doctor.out")" "trusted_owners"
# ...but not from the user's own config, and not from a machine config another user may write.
printf 'store_path = ["%s"]\ntrusted_owners = ["nobody"]\n' "$EVIL" >"$CVM_CONFIG"
expect_rc 2 "$CVM" list
assert_contains "$ERR" "trusted_owners is only read from the machine's config file ($CVM_SYSTEM_CONFIG"
echo "store_path = [\"$EVIL\"]" >"$CVM_CONFIG"
chown nobody "$CVM_SYSTEM_CONFIG"
expect_rc 2 "$CVM" list
assert_contains "$ERR" "refusing the machine config file $CVM_SYSTEM_CONFIG: it is owned by nobody"
chown root:nogroup "$CVM_SYSTEM_CONFIG"
chmod 664 "$CVM_SYSTEM_CONFIG"
expect_rc 2 "$CVM" list
assert_contains "$ERR" "writable by its group"
rm "$CVM_SYSTEM_CONFIG"

# --- World-writable layers are refused whoever owns them, sticky (/tmp-style) ones too.
echo "store_path = [\"$T/shared\"]" >"$CVM_CONFIG"
mkdir -p "$T/shared/cuda"
for mode in 777 1777; do
    chmod "$mode" "$T/shared/cuda"
    expect_rc 2 "$CVM" list
    assert_contains "$ERR" "refusing the store folder $T/shared/cuda: the folder is writable by every user (owner root (uid 0))"
    assert_contains "$ERR" "chmod o-w $T/shared/cuda"
done
# Group-writable: only for a listed owner.
chmod 775 "$T/shared/cuda"
chgrp nogroup "$T/shared/cuda"
expect_rc 2 "$CVM" list
assert_contains "$ERR" "writable by its group"
chown nobody "$T/shared/cuda"
echo 'trusted_owners = ["nobody"]' >"$CVM_SYSTEM_CONFIG"
expect_rc 0 "$CVM" list
rm "$CVM_SYSTEM_CONFIG"
chmod 755 "$T/shared/cuda"
chown root "$T/shared/cuda"
expect_rc 0 "$CVM" list

# --- Config files: another user's, or one everybody may write, is refused.
chmod 666 "$CVM_CONFIG"
expect_rc 2 "$CVM" list
assert_contains "$ERR" "refusing the config file $CVM_CONFIG: the file is writable by every user"
chmod 644 "$CVM_CONFIG"
chown nobody "$CVM_CONFIG"
expect_rc 2 "$S/nvcc"
assert_contains "$ERR" "refusing the config file $CVM_CONFIG: it is owned by nobody"
rm "$CVM_CONFIG"

# --- The global version file and the shims folder belong to the store's user.
chown nobody "$CVM_ROOT/version"
expect_rc 2 "$CVM" current
assert_contains "$ERR" "refusing the global version file $CVM_ROOT/version: it is owned by nobody"
expect_rc 2 "$S/nvcc"
assert_contains "$ERR" "refusing the global version file"
chown root "$CVM_ROOT/version"
chmod 777 "$S"
expect_rc 2 "$CVM" rehash
assert_contains "$ERR" "refusing the shims folder $S"
chmod 755 "$S"
expect_rc 0 "$S/nvcc"
assert_contains "$OUT" "fake nvcc 12.4.1"

# --- A .cudaversion another user dropped into a folder everybody may write to is ignored, with
# a warning; the user's own one there counts.
PUB=$T/public
mkdir -p "$PUB/proj"
chmod 1777 "$PUB"
make_toolkit "$T/tk112" 11.2.2
expect_rc 0 "$CVM" import "$T/tk112"
echo 11.2 >"$PUB/.cudaversion"
chown nobody "$PUB/.cudaversion"
cd "$PUB/proj"
expect_rc 0 "$S/nvcc"
assert_contains "$OUT" "fake nvcc 12.4.1"
assert_contains "$ERR" "warning: ignoring $PUB/.cudaversion: it is owned by nobody"
expect_rc 0 "$CVM" current
assert_contains "$ERR" "ignoring $PUB/.cudaversion"
chown root "$PUB/.cudaversion"
expect_rc 0 "$S/nvcc"
assert_contains "$OUT" "fake nvcc 11.2.2"
assert_eq "$ERR" ""
rm "$PUB/.cudaversion"
cd "$T"

# --- FIFOs where files should be never block a command or a shim (timeout: a minute, so only a
# command that blocks meets it, however busy the machine).
mv "$CVM_ROOT/version" "$T/version.saved"
mkfifo "$CVM_ROOT/version"
for cmd in "$CVM current" "$CVM use --global" "$S/nvcc"; do
    expect_rc 2 timeout 60 $cmd
    assert_contains "$ERR" "$CVM_ROOT/version is a FIFO, not a version file"
done
rm "$CVM_ROOT/version"
mv "$T/version.saved" "$CVM_ROOT/version"
mkfifo "$CVM_CONFIG"
for cmd in "$CVM list" "$S/nvcc"; do
    expect_rc 2 timeout 60 $cmd
    assert_contains "$ERR" "the config file $CVM_CONFIG is a FIFO, not a regular file"
done
rm "$CVM_CONFIG"
mkfifo "$CVM_SYSTEM_CONFIG"
expect_rc 2 timeout 60 "$CVM" list
rm "$CVM_SYSTEM_CONFIG"
mkdir -p "$T/fifo"
mkfifo "$T/fifo/.cudaversion"
cd "$T/fifo"
expect_rc 2 timeout 60 "$S/nvcc"
assert_contains "$ERR" "$T/fifo/.cudaversion is a FIFO"

# --- A .cudaversion that is a folder, unreadable or a link loop is reported, not passed over.
mkdir -p "$T/dir/.cudaversion" "$T/loop" "$T/private"
cd "$T/dir"
expect_rc 2 "$CVM" current
assert_contains "$ERR" "$T/dir/.cudaversion is a folder, not a version file"
one_line "$ERR"
# `cvm use` over it says what is wrong (not "Success").
expect_rc 1 "$CVM" use 12
assert_contains "$ERR" "cannot write $T/dir/.cudaversion: it is a folder"
assert_not_contains "$ERR" "Success"
ln -s "$T/loop/.cudaversion" "$T/loop/.cudaversion.b"
ln -s "$T/loop/.cudaversion.b" "$T/loop/.cudaversion"
cd "$T/loop"
expect_rc 2 "$S/nvcc"
assert_contains "$ERR" "cannot read $T/loop/.cudaversion: Too many levels of symbolic links"
echo 11.2 >"$T/private/.cudaversion"
chmod 600 "$T/private/.cudaversion"
chmod 755 "$T/private"
cd "$T/private"
expect_rc 2 as_nobody "$CVM" current
assert_contains "$ERR" "cannot read $T/private/.cudaversion: Permission denied"
cd "$T"

# --- Two copies of cvm-shim on PATH with `system` selected: a clear line, no loop.
mkdir -p "$T/sys" "$T/copy1" "$T/copy2"
echo system >"$T/sys/.cudaversion"
cp "$(readlink "$S/nvcc")" "$T/copy1/nvcc"
cp "$(readlink "$S/nvcc")" "$T/copy2/nvcc"
cd "$T/sys"
PATH="$T/copy1:$T/copy2:/usr/bin:/bin" expect_rc 127 timeout 60 "$T/copy1/nvcc" --version
assert_contains "$ERR" "cvm shims ran each other through PATH; remove the extra copy of cvm-shim"
one_line "$ERR"
cd "$T"

# --- A damaged entry is listed as damaged, with its file and the fix; the others still list.
touch -d '1 hour ago' "$CVM_ROOT/cuda"
expect_rc 0 "$CVM" list
INDEX=$CVM_ROOT/cache/index
[[ -n $(ls "$INDEX"/cuda-*.brief 2>/dev/null) ]] || fail "no list index was written"
# A garbled index is checked before it is trusted: rebuilt, never "(none)" nor a made-up entry.
for f in "$INDEX"/cuda-*.brief; do
    head -c 60 "$f" >"$f.x" && mv "$f.x" "$f"
done
expect_rc 0 "$CVM" list
assert_contains "$OUT" "12.4.1"
assert_contains "$OUT" "11.2.2"
assert_not_contains "${OUT%%cudnn*}" "(none"
for f in "$INDEX"/cuda-*.brief; do
    printf '99.9.9\t99.9.9\t\ti\t\t/fake\n' >>"$f"
done
expect_rc 0 "$CVM" list
assert_not_contains "$OUT" "99.9.9"
assert_contains "$OUT" "12.4.1"
# Now damage one entry (the folder keeps its time: the index must not hide it either).
mtime=$(stat -c %y "$CVM_ROOT/cuda")
echo "kind=cuda" >"$CVM_ROOT/cuda/11.2.2/entry"
touch -d "$mtime" "$CVM_ROOT/cuda"
rm -rf "$INDEX"
for round in fresh cached; do
    expect_rc 0 "$CVM" list
    assert_contains "$OUT" "11.2.2  (damaged: $CVM_ROOT/cuda/11.2.2/entry"
    assert_contains "$OUT" "remove the folder $CVM_ROOT/cuda/11.2.2"
    assert_contains "$OUT" "12.4.1"
done
expect_rc 0 "$CVM" list --json
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert any(e.get("damaged") and e["id"]=="11.2.2" for e in d["cuda"]), d' "$OUT" ||
    fail "list --json does not show the damaged entry: $OUT"
rm -rf "$CVM_ROOT/cuda/11.2.2"

# --- HOME: needed only when a path must come from it.
expect_rc 0 env -u HOME "$CVM" list
expect_rc 0 env -u HOME "$S/nvcc"
assert_contains "$OUT" "fake nvcc 12.4.1"
expect_rc 0 env HOME=relative "$S/nvcc"
for home in "-u HOME" "HOME=relative/dir"; do
    expect_rc 1 env -u CVM_ROOT -u XDG_DATA_HOME $home "$CVM" list
    assert_contains "$ERR" "cannot find your home folder"
    assert_contains "$ERR" "CVM_ROOT"
    one_line "$ERR"
    [[ ! -e /.local/share/cvm && ! -e relative ]] || fail "a store was made from a missing HOME"
    expect_rc 1 env -u CVM_ROOT -u XDG_DATA_HOME $home "$S/nvcc"
    assert_contains "$ERR" "cannot find your home folder"
done
echo "core_trust: ok"
