#!/usr/bin/env bash
# Layered stores: a shared store made read-only with chmod, listed in CVM_STORE_PATH (or
# $CVM_ROOT/store-path). Toolchains resolve from it; imports, shims, views, locks and module
# exports go to CVM_ROOT; list and current say which layer; the shared store is never written.
# Root ignores file modes, so the same commands also run as `nobody` (setpriv), for whom the
# chmod really holds; and a snapshot of the shared store proves nothing changed in it either way.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"

T=$TEST_TMP
chmod 755 "$T"
SHARED=$T/shared
DNN=8.1.0-cuda11.2

# The shared store: an imported toolkit and cuDNN, and an installed toolkit (files inside).
make_toolkit "$T/files/cuda-11.2.2" 11.2.2
make_cudnn "$T/files/cudnn-8.1.0" 8.1.0
CVM_ROOT=$SHARED "$CVM" import "$T/files/cuda-11.2.2" 2>/dev/null
CVM_ROOT=$SHARED "$CVM" import --cuda 11.2 "$T/files/cudnn-8.1.0" 2>/dev/null
make_toolkit "$SHARED/cuda/12.4.1/root" 12.4.1
cat >"$SHARED/cuda/12.4.1/entry" <<EOF
kind=cuda
id=12.4.1
version=12.4.1
source=installed
include=include
lib=lib64
bin=bin
platform=linux-x86_64
component=cuda_nvcc
EOF
rm -rf "$SHARED/shims" "$SHARED/.staging" "$SHARED/views"
# Settled long ago, as a cluster store is: listings read it through the user's index.
touch -d '1 hour ago' "$SHARED/cuda" "$SHARED/cudnn"
chmod -R a-w "$SHARED"
before=$(snapshot "$SHARED")

export CVM_STORE_PATH=$SHARED
expect_rc 0 "$CVM" list --json
python3 - "$OUT" "$SHARED" "$CVM_ROOT" <<'EOF' || fail "list --json does not say the layer"
import json, sys
doc, shared = json.loads(sys.argv[1]), sys.argv[2]
ids = {e["id"]: e for e in doc["cuda"] + doc["cudnn"]}
assert set(ids) == {"11.2.2", "12.4.1", "8.1.0-cuda11.2"}, ids
for e in ids.values():
    assert e["layer"] == shared and e["read_only"] is True, e
assert ids["12.4.1"]["path"] == shared + "/cuda/12.4.1/root", ids["12.4.1"]
EOF
expect_rc 0 "$CVM" list
assert_contains "$OUT" "read-only store $SHARED"
assert_contains "$OUT" "$SHARED/cuda/12.4.1/root  (installed, read-only store $SHARED)"
ls "$CVM_ROOT/cache/index/"cuda-*.brief >/dev/null 2>&1 || fail "no index of the shared store in CVM_ROOT"

expect_rc 0 "$CVM" use --global "11.2+8.1"
[[ -f $CVM_ROOT/version ]] || fail "the global default is not in CVM_ROOT"
expect_rc 0 "$CVM" current
assert_contains "$OUT" "11.2.2+$DNN"
assert_contains "$OUT" "[read-only store $SHARED]"
expect_rc 0 "$CVM" current --json
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["toolkit"]["read_only"] and d["cudnn"]["read_only"], d' "$OUT" ||
    fail "current --json does not mark the read-only layer"
# doctor says the same (its health depends on this machine, so only the report is checked).
"$CVM" doctor >"$T/doctor.txt" 2>/dev/null || true
grep -q "8.1.0-cuda11.2 .*\[read-only store $SHARED\]" "$T/doctor.txt" ||
    { cat "$T/doctor.txt" >&2; fail "doctor does not name the read-only store of the selected cuDNN"; }
"$CVM" doctor --json >"$T/doctor.json" 2>/dev/null || true
python3 - "$T/doctor.json" "$SHARED" <<'EOF' || fail "doctor --json does not name the layer"
import json, sys
sel = json.load(open(sys.argv[1]))["selection"]
for k in ("toolkit", "cudnn"):
    assert sel[k]["read_only"] is True and sel[k]["layer"] == sys.argv[2], sel
EOF

# Shims, views and exec: all in CVM_ROOT.
expect_rc 0 "$CVM" rehash
[[ -x $CVM_ROOT/shims/nvcc ]] || fail "no nvcc shim in CVM_ROOT"
expect_rc 0 "$CVM_ROOT/shims/nvcc"
assert_contains "$OUT" "fake nvcc 11.2.2"
assert_contains "$OUT" "CUDA_PATH=$CVM_ROOT/views/11.2.2+$DNN"
[[ -e $CVM_ROOT/views/11.2.2+$DNN/lib64/libcudnn.so.8 ]] || fail "the merged view is not in CVM_ROOT"
expect_rc 0 "$CVM" exec --version 12.4 -- nvcc
assert_contains "$OUT" "fake nvcc 12.4.1"
assert_contains "$OUT" "CUDA_PATH=$SHARED/cuda/12.4.1/root"

# Imports go to CVM_ROOT; removing a shared toolchain is refused.
make_toolkit "$T/files/cuda-11.8.0" 11.8.0
expect_rc 0 "$CVM" import "$T/files/cuda-11.8.0"
[[ -f $CVM_ROOT/cuda/11.8.0/entry ]] || fail "the import did not land in CVM_ROOT"
expect_rc 1 "$CVM" uninstall 11.2.2
assert_contains "$ERR" "read-only store $SHARED"

# The same id in CVM_ROOT hides the shared one. (`cvm import` refuses an id that a read-only
# layer has, so the entry is written as an import would write it.)
make_toolkit "$T/files/mine-11.2.2" 11.2.2
mkdir -p "$CVM_ROOT/cuda/11.2.2"
sed "s|^path=.*|path=$T/files/mine-11.2.2|" "$SHARED/cuda/11.2.2/entry" >"$CVM_ROOT/cuda/11.2.2/entry"
expect_rc 0 "$CVM" current --json
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert not d["toolkit"]["read_only"] and d["cudnn"]["read_only"], d' "$OUT" ||
    fail "CVM_ROOT's 11.2.2 does not come first"
expect_rc 0 "$CVM" uninstall 11.2.2

# Module exports and locks are written where asked, views in CVM_ROOT.
expect_rc 0 "$CVM" export lmod "$T/modules"
assert_contains "$(cat "$T/modules/cudnn/$DNN.lua")" "$CVM_ROOT/views/11.2.2+$DNN"
mkdir -p "$T/project"
(cd "$T/project" && "$CVM" use "12.4" 2>/dev/null && "$CVM" lock 2>/dev/null) || fail "cvm lock failed"
[[ -f $T/project/cvm.lock ]] || fail "no cvm.lock"

# store-path file instead of the variable.
unset CVM_STORE_PATH
expect_rc 0 "$CVM" list cuda
assert_not_contains "$OUT" "12.4.1"
printf '# shared stores\n%s\n' "$SHARED" >"$CVM_ROOT/store-path"
expect_rc 0 "$CVM" list cuda
assert_contains "$OUT" "12.4.1"
assert_contains "$OUT" "read-only store $SHARED"

# The machine's config.toml instead, as a cluster's administrator writes it once for everybody
# (lib.sh points CVM_SYSTEM_CONFIG and CVM_CONFIG into the test folder): cvm and the shims both
# read it; a mistake in it stops both with exit 2, naming the file and line.
rm "$CVM_ROOT/store-path"
mkdir -p "$(dirname "$CVM_SYSTEM_CONFIG")"
printf '# cluster stores\nstore_path = ["%s"]\n' "$SHARED" >"$CVM_SYSTEM_CONFIG"
expect_rc 0 "$CVM" list cuda
assert_contains "$OUT" "12.4.1"
assert_contains "$OUT" "read-only store $SHARED"
(cd "$T/project" && expect_rc 0 "$CVM_ROOT/shims/nvcc" && assert_contains "$OUT" "fake nvcc 12.4.1") ||
    fail "the shim does not resolve from the store in $CVM_SYSTEM_CONFIG"
mkdir -p "$(dirname "$CVM_CONFIG")"
printf 'store_path = ["%s"]\nstore-path = []\n' "$SHARED" >"$CVM_CONFIG"
expect_rc 2 "$CVM" list
assert_contains "$ERR" "$CVM_CONFIG:2"
assert_contains "$ERR" "unknown setting 'store-path'"
(cd "$T/project" && expect_rc 2 "$CVM_ROOT/shims/nvcc" && assert_contains "$ERR" "$CVM_CONFIG:2") ||
    fail "the shim does not stop at a mistake in $CVM_CONFIG"
printf '[!]\n' >"$CVM_CONFIG" # toml++ asserted here: a Debug build aborted
expect_rc 2 "$CVM" list
[[ $ERR != *$'\n'* ]] || fail "more than one line: $ERR"
assert_contains "$ERR" "$CVM_CONFIG:1: a table header without a name"
rm "$CVM_CONFIG" "$CVM_SYSTEM_CONFIG"
export CVM_STORE_PATH=$SHARED

[[ $(snapshot "$SHARED") == "$before" ]] || { diff <(echo "$before") <(snapshot "$SHARED") >&2; fail "the shared store was written"; }

# The same as someone for whom the chmod holds.
if [[ $(id -u) == 0 ]]; then
    command -v setpriv >/dev/null || skip "running as root without setpriv: cannot test as a user for whom chmod holds"
    if ! setpriv --reuid=nobody --regid=nogroup --clear-groups -- test -x "$CVM"; then
        mkdir -p "$T/bin" && cp "$CVM_BIN/cvm" "$CVM_BIN/cvm-shim" "$T/bin/" && chmod -R a+rx "$T/bin"
        CVM=$T/bin/cvm
    fi
    chmod -R a+rX "$T/files"
    if as_nobody touch "$SHARED/cuda/probe" 2>/dev/null; then
        fail "nobody can write into the chmod'ed store: the test would prove nothing"
    fi
    NOBODY_ROOT=$T/nobody-root
    mkdir -p "$NOBODY_ROOT" "$T/nobody-work"
    chown nobody:nogroup "$NOBODY_ROOT" "$T/nobody-work"
    export CVM_ROOT=$NOBODY_ROOT
    as_nobody "$CVM" use --global "11.2+8.1" 2>/dev/null || fail "nobody: use --global"
    out=$(as_nobody "$CVM" current 2>&1) || fail "nobody: current: $out"
    assert_contains "$out" "[read-only store $SHARED]"
    out=$(as_nobody "$CVM" rehash 2>&1) || fail "nobody: rehash: $out"
    out=$(as_nobody "$NOBODY_ROOT/shims/nvcc" 2>&1) || fail "nobody: shim: $out"
    assert_contains "$out" "CUDA_PATH=$NOBODY_ROOT/views/11.2.2+$DNN"
    out=$(as_nobody "$CVM" exec --version 12.4 -- nvcc 2>&1) || fail "nobody: exec: $out"
    assert_contains "$out" "fake nvcc 12.4.1"
    out=$(as_nobody "$CVM" export tcl "$T/nobody-work/modules" 2>&1) || fail "nobody: export: $out"
    out=$(as_nobody bash -c "cd '$T/nobody-work' && '$CVM' use 11.2+8.1 && '$CVM' lock" 2>&1) || fail "nobody: lock: $out"
    out=$(as_nobody "$CVM" uninstall 12.4.1 2>&1) && fail "nobody: uninstall of a shared toolkit succeeded"
    assert_contains "$out" "read-only store"
    [[ $(snapshot "$SHARED") == "$before" ]] || fail "the shared store was written (as nobody)"
fi
echo "teams_layers: ok"
