#!/usr/bin/env bash
# The config files' answer kept precompiled for the shim (config/config_cache.h): the shim with a
# config.toml gives the answers reading the file gives; a file changed since (same size, or
# made writable by others), a damaged cache or one others may write is noticed and the file read
# again, never a wrong answer; a broken config.toml gives the same one line and exit code with a
# cache as without. (The cache is only written for files whose times are 2 s old: the sleeps.)
source "$(dirname "$0")/lib.sh"
need_tools python3 stat

T=$TEST_TMP
SHIM=$CVM_ROOT/shims/nvcc
CACHE=$CVM_ROOT/cache/config
make_toolkit "$T/cuda-12.4" 12.4.1
expect_rc 0 "$CVM" import "$T/cuda-12.4"
expect_rc 0 "$CVM" rehash
# Two read-only stores of paths of one length, so an edit from one to the other keeps the size.
make_toolkit "$T/cuda-11.8" 11.8.0
make_toolkit "$T/cuda-11.7" 11.7.1
CVM_ROOT=$T/sharedA expect_rc 0 "$CVM" import "$T/cuda-11.8"
CVM_ROOT=$T/sharedB expect_rc 0 "$CVM" import "$T/cuda-11.7"
mkdir -p "$(dirname "$CVM_CONFIG")" "$(dirname "$CVM_SYSTEM_CONFIG")" "$T/work"
cd "$T/work"
settle() { sleep 2.2; }
# rewrite_cache FROM TO [keep-sum]: the cache with FROM replaced by TO, its sum made to hold
# (as a writer of the cache would) unless keep-sum is given (a damaged file).
rewrite_cache() {
    python3 - "$CACHE" "$1" "$2" "${3:-}" << 'PY'
import sys
path, old, new, keep = sys.argv[1:5]
text = open(path, encoding="utf-8").read()
head, sumline, body = text.split("\n", 2)
body = body.replace(old, new)
if not keep:
    h = 1469598103934665603
    for c in body.encode():
        h = ((h ^ c) * 1099511628211) % (1 << 64)
    sumline = "sum %d %016x" % (len(body.encode()), h)
open(path, "w", encoding="utf-8").write(head + "\n" + sumline + "\n" + body)
PY
}

printf 'store_path = ["%s"]\n' "$T/sharedA" > "$CVM_CONFIG"
# A file changed within the last 2 s is read, and no cache is kept of it.
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.8.0"
[[ ! -e $CACHE ]] || assert_not_contains "$(cat "$CACHE")" "sharedA" "a cache was kept of a config file changed within 2 s"
settle
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.8.0"
[[ -f $CACHE ]] || fail "no cache in $CACHE after reading a settled config file"
assert_contains "$(cat "$CACHE")" "layer 0 $T/sharedA"
[[ $(stat -c %a "$CACHE") == 644 || $(stat -c %a "$CACHE") == 600 ]] ||
    fail "the cache is writable by others: $(stat -c %a "$CACHE")"
# Through the cache: the same answers, for the shim and for cvm.
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.8.0"
CVM_VERSION=11.8 expect_rc 0 "$CVM" which nvcc
assert_eq "$OUT" "$T/cuda-11.8/bin/nvcc"

# The cache is what the shim believes: a forged one (whole, the user's own) names another store...
rewrite_cache "$T/sharedA" "$T/sharedB"
CVM_VERSION=11.7 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.7.1" "the shim did not read its cache"
# ...but not when others may write it: then the file is read, and the cache written anew.
chmod o+w "$CACHE"
CVM_VERSION=11.7 expect_rc 127 "$SHIM" --version
assert_contains "$ERR" "CUDA 11.7 is not installed"
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.8.0"
assert_contains "$(cat "$CACHE")" "layer 0 $T/sharedA"
[[ $(stat -c %a "$CACHE") != *[2367] ]] || fail "the cache rewritten is still writable by others"
# A damaged cache (its sum does not hold) is not believed either.
rewrite_cache "$T/sharedA" "$T/sharedB" keep-sum
CVM_VERSION=11.7 expect_rc 127 "$SHIM" --version
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.8.0"
# Another user's cache (root's store read by someone else) is another user's list.
if [[ $(id -u) == 0 ]] && id nobody > /dev/null 2>&1; then
    settle
    CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
    rewrite_cache "$T/sharedA" "$T/sharedB"
    chown nobody "$CACHE"
    CVM_VERSION=11.7 expect_rc 127 "$SHIM" --version
    chown 0 "$CACHE"
fi

# An edit of the file, of the same size, is noticed at once.
settle
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
printf 'store_path = ["%s"]\n' "$T/sharedB" > "$CVM_CONFIG"
CVM_VERSION=11.7 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.7.1" "an edit of config.toml was not noticed"
CVM_VERSION=11.8 expect_rc 127 "$SHIM" --version
assert_contains "$ERR" "CUDA 11.8 is not installed"

# The file made writable by others: refused as before, though its answer was kept.
settle
CVM_VERSION=11.7 expect_rc 0 "$SHIM" --version
assert_contains "$(cat "$CACHE")" "layer 0 $T/sharedB"
chmod o+w "$CVM_CONFIG"
CVM_VERSION=11.7 expect_rc 2 "$SHIM" --version
assert_contains "$ERR" "refusing the config file $CVM_CONFIG"
chmod o-w "$CVM_CONFIG"

# A broken file: the same one line and exit code with a cache of its earlier answer as without.
settle
CVM_VERSION=11.7 expect_rc 0 "$SHIM" --version
[[ -f $CACHE ]] || fail "no cache"
printf 'store_path = ["%s"\n' "$T/sharedB" > "$CVM_CONFIG"
CVM_VERSION=11.7 expect_rc 2 "$SHIM" --version
with_cache=$ERR
assert_contains "$ERR" "$CVM_CONFIG:1:"
[[ $(wc -l <<< "$ERR") == 1 ]] || fail "more than one line: $ERR"
settle
CVM_VERSION=11.7 expect_rc 2 "$SHIM" --version
[[ -f $CACHE ]] || fail "the cache of the good file went away"
rm -f "$CACHE"
CVM_VERSION=11.7 expect_rc 2 "$SHIM" --version
assert_eq "$ERR" "$with_cache" "the error differs without the cache"
[[ ! -e $CACHE ]] || fail "a cache was written for a broken config file"
CVM_VERSION=11.7 expect_rc 2 "$CVM" current
assert_eq "$ERR" "$with_cache" "cvm's error differs from the shim's"

# The machine's file too: its store_path after the user's, its trusted_owners kept with it.
printf 'store_path = ["%s"]\n' "$T/sharedB" > "$CVM_CONFIG"
printf 'store_path = ["%s"]\n' "$T/sharedA" > "$CVM_SYSTEM_CONFIG"
settle
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.8.0"
assert_contains "$(cat "$CACHE")" "layer 1 $T/sharedA"
CVM_VERSION=11.7 expect_rc 0 "$SHIM" --version
assert_contains "$OUT" "fake nvcc 11.7.1"
if [[ $(id -u) == 0 ]] && id nobody > /dev/null 2>&1; then
    # A store of another user: refused until the machine's file lists its owner, then taken
    # (whether the list comes from the file or from the cache).
    chown -R nobody "$T/sharedA/cuda"
    CVM_VERSION=11.8 expect_rc 2 "$SHIM" --version
    assert_contains "$ERR" "refusing the store folder $T/sharedA/cuda"
    printf 'store_path = ["%s"]\ntrusted_owners = ["nobody"]\n' "$T/sharedA" > "$CVM_SYSTEM_CONFIG"
    CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
    settle
    CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
    assert_contains "$(cat "$CACHE")" "owner nobody"
    CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
    assert_contains "$OUT" "fake nvcc 11.8.0"
    chown -R 0 "$T/sharedA/cuda"
fi
# Another HOME, another user's file list: read again, not taken from the cache.
settle
CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
before=$(cat "$CACHE")
HOME=$T/elsewhere CVM_VERSION=11.8 expect_rc 0 "$SHIM" --version
assert_contains "$(cat "$CACHE")" " $T/elsewhere"$'\n' "the cache was not rewritten for another HOME"
[[ $before != "$(cat "$CACHE")" ]] || fail "HOME is not part of the cache's key"
echo "ok"
