#!/usr/bin/env bash
# Every command that prints data takes --json and prints one document whose every key, at any
# depth, is snake_case (the contract's rule for field names).
source "$(dirname "$0")/lib.sh"
export CVM_REGISTRY_DIR="$CVM_SOURCE_DIR/registry"
export CVM_MIRROR="http://127.0.0.1:9" CVM_RETRY_DELAY_MS=1 # nothing here reaches a network

import_sample_store "$TEST_TMP"
mkdir -p "$TEST_TMP/p" && cd "$TEST_TMP/p"
expect_rc 0 "$CVM" use 12.4+9

cat > "$TEST_TMP/keys.py" <<'PY'
import json, re, sys
what, doc = sys.argv[1], json.load(open(sys.argv[2]))
bad = set()
def walk(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if not re.fullmatch(r"[a-z][a-z0-9_]*", k):
                bad.add(k)
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(doc)
assert isinstance(doc, dict) and doc, f"{what}: not a JSON object: {doc!r}"
assert not bad, f"{what}: keys not in snake_case: {sorted(bad)}"
PY
# check_keys ARGS...: cvm ARGS prints one JSON document (whatever the exit code) with snake_case keys.
check_keys() {
    local rc=0
    "$CVM" "$@" > "$TEST_TMP/doc.json" 2>/dev/null || rc=$?
    python3 "$TEST_TMP/keys.py" "cvm $*" "$TEST_TMP/doc.json" || fail "cvm $* (exit $rc)"
}
for args in "list" "ls cudnn" "list --available" "list --available cudnn 8.9" "latest" "latest --installed" \
    "latest cudnn 8" "current" "which nvcc" "use" "use 12.4" "use --unset" "use -g 11.2" "verify" "rehash" \
    "lock" "cache clean" "import --detect" "update" "doctor" "probe"; do
    # shellcheck disable=SC2086
    check_keys $args --json
done
expect_rc 0 "$CVM" export lmod "$TEST_TMP/modules" --json
check_keys export tcl "$TEST_TMP/modules-tcl" --json
check_keys export --oci "$TEST_TMP/image" --json
check_keys uninstall 11.2 --json
check_keys import "$TEST_TMP/cuda-11.2" --json
# Failures too: {"error": {"code", "message"}}.
check_keys use 99 --json
check_keys list --frob --json
echo "cli_json_keys: ok"
