#!/usr/bin/env bash
# The folders above a store layer and above CVM_ROOT, as ssh checks those above ~/.ssh: whoever
# may rename entries of one of them can move the layer away and put their own in its place. Each
# must be root's, the user's or a listed owner's and not writable by others unless sticky;
# otherwise every command and the shim refuse with one line naming the folder and what to run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"

[[ $(id -u) == 0 ]] || skip "needs root (files are chowned to nobody)"
command -v setpriv >/dev/null || skip "needs setpriv (nobody renames the layer)"
T=$TEST_TMP
chmod 755 "$T"

make_toolkit "$T/tk" 12.4.1
expect_rc 0 "$CVM" import "$T/tk"
expect_rc 0 "$CVM" use --global 12.4
NVCC=$CVM_ROOT/shims/nvcc
expect_rc 0 "$NVCC" --version

# A shared layer /srv/x/layer, listed in the user's config.
SRV=$T/srv
LAYER=$SRV/x/layer
mkdir -p "$LAYER"
make_toolkit "$T/tk11" 11.8.0
CVM_ROOT=$LAYER expect_rc 0 "$CVM" import "$T/tk11"
mkdir -p "$(dirname "$CVM_CONFIG")"
echo "store_path = [\"$LAYER\"]" > "$CVM_CONFIG"
expect_rc 0 "$CVM" list
assert_contains "$OUT" "11.8.0"

# --- A folder above the layer that everybody may write to: nobody really can swap the layer.
chmod 777 "$SRV/x"
WANT="refusing the store folder $LAYER: the folder $SRV/x above it is writable by every user (owner root (uid 0)), so another user could put their own in its place; run \`chmod o-w $SRV/x\`"
if as_nobody sh -c "mv '$LAYER' '$SRV/x/moved' && mkdir '$LAYER' && mv '$SRV/x/moved' '$LAYER.orig'"; then
    rmdir "$LAYER" && mv "$LAYER.orig" "$LAYER" # undone: the point was that nobody could
else
    fail "nobody could not rename the layer in a world-writable folder"
fi
expect_refused "$WANT" "$CVM" list
expect_refused "$WANT" "$CVM" current
expect_refused "$WANT" "$NVCC" --version
# Sticky (/tmp-style): others cannot rename what is not theirs.
chmod 1777 "$SRV/x"
expect_rc 0 "$CVM" list
expect_rc 0 "$NVCC" --version
chmod 755 "$SRV/x"

# --- Owned by another user, or group-writable: the rules of trust.h, trusted_owners included.
chown nobody "$SRV"
expect_refused "the folder $SRV above it is owned by nobody (uid $(id -u nobody)), not by you or root" "$CVM" list
assert_contains "$ERR" "run \`chown \$(id -u) $SRV\` if it is yours, or have root add \"nobody\" to trusted_owners"
mkdir -p "$(dirname "$CVM_SYSTEM_CONFIG")"
echo 'trusted_owners = ["nobody"]' > "$CVM_SYSTEM_CONFIG"
expect_rc 0 "$CVM" list
rm "$CVM_SYSTEM_CONFIG"
chown root "$SRV"
chgrp nogroup "$SRV"
chmod 775 "$SRV"
expect_refused "the folder $SRV above it is writable by its group" "$CVM" list
chmod 755 "$SRV"

# --- The layer folder itself.
chown nobody "$LAYER"
expect_refused "refusing the store folder $LAYER: it is owned by nobody" "$CVM" list
chown root "$LAYER"

# --- Through a link: the folders above the link's target count too.
mkdir -p "$T/elsewhere/open"
mv "$LAYER" "$T/elsewhere/open/layer"
ln -s "$T/elsewhere/open/layer" "$LAYER"
expect_rc 0 "$CVM" list
chmod 777 "$T/elsewhere/open"
expect_refused "the folder $T/elsewhere/open above it is writable by every user" "$CVM" list
assert_contains "$ERR" "through the link $LAYER"
chmod 755 "$T/elsewhere/open"
rm "$LAYER"
mv "$T/elsewhere/open/layer" "$LAYER"

# --- CVM_ROOT's own path, also for the shim.
rm "$CVM_CONFIG"
mkdir -p "$T/home/u"
cp -a "$CVM_ROOT" "$T/home/u/cvm"
export CVM_ROOT=$T/home/u/cvm
expect_rc 0 "$CVM" rehash
NVCC=$CVM_ROOT/shims/nvcc
expect_rc 0 "$NVCC" --version
chmod 777 "$T/home"
expect_refused "refusing the store folder $CVM_ROOT: the folder $T/home above it is writable by every user" "$NVCC" --version
expect_refused "the folder $T/home above it" "$CVM" which nvcc
chmod 755 "$T/home"
expect_rc 0 "$NVCC" --version

# --- The machine's config (where trusted_owners comes from): its folders too, and no listed
# owner helps there.
SYSDIR=$(dirname "$CVM_SYSTEM_CONFIG")
mkdir -p "$SYSDIR"
echo 'trusted_owners = ["nobody"]' > "$CVM_SYSTEM_CONFIG"
expect_rc 0 "$NVCC" --version
chmod 777 "$SYSDIR"
expect_refused "refusing the machine config folder $SYSDIR: the folder is writable by every user" "$CVM" list
expect_refused "refusing the machine config folder" "$NVCC" --version
chmod 755 "$SYSDIR"
chown nobody "$(dirname "$SYSDIR")"
expect_refused "refusing the machine config folder $SYSDIR: the folder $(dirname "$SYSDIR") above it is owned by nobody" "$CVM" list
assert_not_contains "$ERR" "trusted_owners"
chown root "$(dirname "$SYSDIR")"
expect_rc 0 "$CVM" list
echo "core_trust_chain: ok"
