#!/usr/bin/env bash
# cvm update: a loopback mirror whose folder listings (Apache and nginx style) name a CUDA 13.4.1 and a
# cuDNN 9.30.0 the shipped registry lacks (manifests made from the real NVIDIA ones in tests/fixtures/)
# and a legacy cuDNN folder v7.6.4/. After the update, list/use/install know them, and 13.4.1 installs;
# offline, the shipped data still works. Bad input: links out of the folder, absurd names, a garbled
# listing, a manifest that is not JSON, a listing that never ends, a garbled overlay, an unreachable
# mirror.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
FIX="$CVM_SOURCE_DIR/tests/fixtures/redist"
M="$TEST_TMP/mirror"
R="$M/cuda/redist" D="$M/cudnn/redist" L="$M/redist/cudnn"
mkdir -p "$R" "$D" "$L/v7.6.4" "$L/v8.1.0"
OVERLAY="$CVM_ROOT/cache/registry-overlay.toml"
export CVM_RETRY_DELAY_MS=50

# The archives of CUDA 13.4.1, and its manifest: NVIDIA's 11.8.0 manifest with these components'
# linux-x86_64 entries pointing at them (the other platforms' entries kept as NVIDIA wrote them).
ARCHIVES=()
comp() { # KEY VERSION ARGS...
    local key=$1 version=$2; shift 2
    local top="$key-linux-x86_64-$version-archive"
    mkdir -p "$R/$key/linux-x86_64"
    $MK component "$R/$key/linux-x86_64/$top.tar.xz" --folder "$top" "$@"
    ARCHIVES+=("$key=$version=$key/linux-x86_64/$top.tar.xz")
}
comp cuda_nvcc 13.4.48 --tool bin/nvcc --header crt/host_defines.h
comp cuda_cudart 13.4.39 --lib libcudart.so --header cuda_runtime.h --cuda-h 13.4
python3 - "$FIX/cuda/redistrib_11.8.0.excerpt.json" "$R" "$R/redistrib_13.4.1.json" "${ARCHIVES[@]}" <<'PY'
import hashlib, json, os, sys
template, base, out, entries = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
doc = json.load(open(template))
new = {"release_date": "2026-11-20", "release_label": "13.4.1", "release_product": "cuda"}
for e in entries:
    key, version, rel = e.split("=")
    comp = dict(doc[key])
    comp["version"] = version
    data = open(os.path.join(base, rel), "rb").read()
    comp["linux-x86_64"] = {"relative_path": rel, "sha256": hashlib.sha256(data).hexdigest(),
                            "md5": hashlib.md5(data).hexdigest(), "size": str(len(data))}
    new[key] = comp
json.dump(new, open(out, "w"), indent=4)
PY
# cuDNN 9.30.0 (builds for CUDA 12 and 13): NVIDIA's 8.9.7 manifest with new numbers.
python3 - "$FIX/cudnn/redistrib_8.9.7.json" "$D/redistrib_9.30.0.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["release_date"], doc["release_label"] = "2026-11-25", "9.30.0"
c = doc["cudnn"]
c["version"], c["cuda_variant"] = "9.30.0.5", ["12", "13"]
for plat, variants in list(c.items()):
    if isinstance(variants, dict) and "cuda11" in variants:
        variants["cuda13"] = variants.pop("cuda11")
json.dump(doc, open(sys.argv[2], "w"), indent=4)
PY
# The listings: Apache style for CUDA (with links that leave the folder and absurd names), nginx
# style for cuDNN and the legacy folders. 11.8.0 and 9.1.0 are known: never fetched.
cat > "$R/index.html" <<'EOF'
<html><head><title>Index of /compute/cuda/redist</title></head><body><table>
<tr><th><a href="?C=N;O=D">Name</a></th><th><a href="?C=M;O=A">Last modified</a></th></tr>
<tr><td><a href="/">Parent Directory</a></td></tr>
<tr><td><a href="cuda_nvcc/">cuda_nvcc/</a></td><td>2026-11-20 10:00</td></tr>
<tr><td><a href="redistrib_11.8.0.json">redistrib_11.8.0.json</a></td><td>2022-10-03 12:00</td></tr>
<tr><td><A HREF="redistrib_13.4.1.json">redistrib_13.4.1.json</A></td><td>2026-11-20 18:15</td></tr>
<tr><td><a href="https://evil.example/cuda/redist/redistrib_13.9.0.json">elsewhere</a></td></tr>
<tr><td><a href="../../secret/redistrib_13.8.0.json">up</a></td></tr>
<tr><td><a href="redistrib_..%2F..%2Fetc%2Fpasswd.json">traversal</a></td></tr>
<tr><td><a href="redistrib_99999999999999999999.0.0.json">absurd</a></td></tr>
<tr><td><a href="redistrib_13.7.0.json?download=1">query</a></td></tr>
</table></body></html>
EOF
cat > "$D/index.html" <<'EOF'
<html><head><title>Index of /compute/cudnn/redist/</title></head><body><pre><a href="../">../</a>
<a href="cudnn/">cudnn/</a>                                  25-Nov-2026 10:00       -
<a href="redistrib_9.1.0.json">redistrib_9.1.0.json</a>          01-Apr-2024 10:00    5600
<a href="redistrib_9.30.0.json">redistrib_9.30.0.json</a>        25-Nov-2026 10:00    5600
</pre></body></html>
EOF
cat > "$L/index.html" <<'EOF'
<html><body><pre><a href="../">../</a>
<a href="v7.6.4/">v7.6.4/</a>                27-Sep-2019 18:15       -
<a href="v8.1.0/">v8.1.0/</a>                26-Jan-2021 18:15       -
</pre></body></html>
EOF
# (The archives themselves, for the folder mirror below; update reads their names only.)
touch "$L/v7.6.4/cudnn-10.1-linux-x64-v7.6.4.38.tgz" "$L/v7.6.4/cudnn-10.1-windows10-x64-v7.6.4.38.zip"
cat > "$L/v7.6.4/index.html" <<'EOF'
<html><body><pre><a href="../">../</a>
<a href="cudnn-10.1-linux-x64-v7.6.4.38.tgz">cudnn-10.1-linux-x64-v7.6.4.38.tgz</a>   27-Sep-2019 18:15  1
<a href="cudnn-10.1-windows10-x64-v7.6.4.38.zip">cudnn-10.1-windows10-x64-v7.6.4.38.zip</a>   27-Sep-2019 18:15  1
<a href="cudnn-10.1-osx-x64-v7.6.4.38.tgz">cudnn-10.1-osx-x64-v7.6.4.38.tgz</a>   27-Sep-2019 18:15  1
</pre></body></html>
EOF
cp "$R/index.html" "$TEST_TMP/cuda-index.html"
start_server "$M"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"

# Before: only the shipped data. 13.4 is unknown to list, use and install.
expect_rc 0 "$CVM" list --available 13.4
assert_contains "$OUT" "(none known)"
assert_contains "$OUT" "registry as shipped with cvm; \`cvm update\`"
expect_rc 2 "$CVM" use 13.4.1
assert_contains "$ERR" "no known CUDA release is 13.4.1"
expect_rc 2 "$CVM" install 13.4
assert_contains "$ERR" "cvm update"

# The update: three releases added; the known ones and the links out of the folder never fetched.
expect_rc 0 "$CVM" update
assert_contains "$ERR" "added CUDA 13.4.1"
assert_contains "$ERR" "added cuDNN 9.30.0.5"
assert_contains "$ERR" "added cuDNN 7.6.4.38"
[[ -f $OVERLAY ]] || fail "no overlay at $OVERLAY"
for path in redistrib_11.8.0.json redistrib_9.1.0.json v8.1.0/ evil secret passwd redistrib_9999 redistrib_13.7.0; do
    if grep -q "$path" "$HTTP_LOG"; then fail "fetched $path: $(cat "$HTTP_LOG")"; fi
done
overlay() { # PYTHON-EXPRESSION over the overlay as `d`
    python3 -c 'import sys, tomllib; d = tomllib.load(open(sys.argv[1], "rb")); print(eval(sys.argv[2]))' "$OVERLAY" "$1"
}
# The minimum driver from 13.2.2, the newest 13.x row with one, marked inferred; the cuDNN ranges
# from the newest builds of the same variants; the legacy release's month from its listing.
assert_eq "$(overlay '([(r["version"], r["date"], r["cudart"], r["driver_linux"], r["inferred"]) for r in d["cuda"]["release"]],
    [(r["version"], r["date"], [(b["cuda"], b["supports"], b.get("windows_archives")) for b in r["build"]]) for r in d["cudnn"]["release"]])')" \
    "([('13.4.1', '2026-11-20', '13.4.39', '595.71.05', ['driver_linux'])], [('7.6.4.38', '2019-09', [('10.1', ['10.1', '10.1'], ['cudnn-10.1-windows10-x64-v7.6.4.38.zip'])]), ('9.30.0.5', '2026-11-25', [('12', ['12.0', '12.9'], None), ('13', ['13.0', '13.4'], None)])])"
assert_not_contains "$(cat "$OVERLAY")" "osx"

# Now list, use and install know them.
expect_rc 0 "$CVM" list --available 13.4
assert_contains "$OUT" "13.4.1"
assert_contains "$OUT" "2026-11"
assert_contains "$OUT" "595.71.05"
assert_contains "$OUT" "registry updated just now (3 releases newer than cvm's own list)"
expect_rc 0 "$CVM" list --available cudnn 7.6.4 --json
assert_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print([e["id"] for e in d["cudnn"]], d["registry"]["added"])' <<< "$OUT")" \
    "['7.6.4.38-cuda10.1'] 3"
expect_rc 0 "$CVM" latest cuda 13
assert_contains "$OUT" "13.4.1"
assert_contains "$("$CVM" __complete install cuda 13. | cut -f1)" "13.4.1"
cd "$TEST_TMP"
# Known through the overlay: refused as not installed (exit 1, the install named), not as
# unknown (exit 2); --force writes it with no "no known release" comment.
expect_rc 1 "$CVM" use 13.4.1+9.30
assert_contains "$ERR" "run \`cvm install 13.4.1+9.30\`"
expect_rc 0 "$CVM" use --force 13.4.1+9.30
assert_eq "$(cat .cudaversion)" "13.4.1+9.30"
expect_rc 0 "$CVM" install 13.4
assert_store cuda "13.4.1"
[[ -x $CVM_ROOT/cuda/13.4.1/root/bin/nvcc ]] || fail "13.4.1 has no nvcc"

# A second update finds nothing new and keeps what the first found.
: > "$HTTP_LOG"
expect_rc 0 "$CVM" update --json
assert_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["added"], d["releases"], d["problems"])' <<< "$OUT")" "[] 3 []"
if grep -q "redistrib_13.4.1.json" "$HTTP_LOG"; then fail "an update fetched a manifest the overlay has"; fi

# Its age, in words.
sed -i 's/^updated = .*/updated = "2020-01-01T00:00:00Z"/' "$OVERLAY"
expect_rc 0 "$CVM" list --available 13.4
assert_contains "$OUT" "registry updated "
assert_contains "$OUT" " days ago"

# Offline: the mirror does not answer. update fails fast with a hint and changes nothing; the
# shipped data and the overlay still work.
stop_server
cp "$OVERLAY" "$TEST_TMP/overlay.before"
expect_rc 1 "$CVM" update
assert_contains "$ERR" "CVM_MIRROR"
assert_contains "$ERR" "nothing was changed"
cmp -s "$OVERLAY" "$TEST_TMP/overlay.before" || fail "a failed update changed the overlay"
expect_rc 1 "$CVM" update --json
assert_eq "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["error"]["code"])' <<< "$OUT")" "network"
expect_rc 0 "$CVM" list --available 12.4
assert_contains "$OUT" "12.4.1"
expect_rc 0 "$CVM" use 13.4.1

# A garbled overlay: named, ignored, never fatal.
printf 'schema = 1\nupdated = "2026-12' > "$OVERLAY"
expect_rc 0 "$CVM" list --available 13.4
assert_contains "$ERR" "$OVERLAY"
assert_contains "$ERR" "ignored"
assert_contains "$OUT" "registry as shipped"
expect_rc 2 "$CVM" use 13.4.1+9.30 # only the overlay knew 9.30
printf 'schema = 1\n[[!]]\n' > "$OVERLAY" # toml++ asserted here: a Debug build aborted
expect_rc 0 "$CVM" list --available 13.4
assert_contains "$ERR" "$OVERLAY:2: a table header without a name"

# Bad input on the mirror: a garbled CUDA listing, a cuDNN manifest that is not JSON; what can be
# read is still added, and the run ends with exit 1 naming each problem.
printf '<html><a href="redistrib_\0\1\2 <<<<>>>> garbage' > "$R/index.html"
printf '<a href="redistrib_9.31.0.json">x</a><a href="redistrib_9.30.0.json">y</a>' > "$D/index.html"
printf 'this is not JSON {' > "$D/redistrib_9.31.0.json"
start_server "$M" "/redist/cudnn/=endless" # and a legacy listing that never ends
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
expect_rc 1 "$CVM" update
assert_contains "$ERR" "download of $CVM_MIRROR/redist/cudnn/ failed: larger than"
assert_contains "$ERR" "$CVM_MIRROR/cuda/redist/: the listing names no redistrib_X.Y.Z.json"
assert_contains "$ERR" "$CVM_MIRROR/cudnn/redist/redistrib_9.31.0.json"
assert_contains "$ERR" "added cuDNN 9.30.0.5"
assert_eq "$(overlay '[r["version"] for r in d["cudnn"]["release"]]')" "['9.30.0.5']" # 7.6.4 was in the garbled overlay

# --max: one manifest a run, the rest left for the next.
stop_server
start_server "$M"
export CVM_MIRROR="http://127.0.0.1:$HTTP_PORT"
rm "$OVERLAY"
cp "$TEST_TMP/cuda-index.html" "$R/index.html"
cp "$D/redistrib_9.30.0.json" "$D/redistrib_9.31.0.json"
sed -i 's/9\.30\.0/9.31.0/g' "$D/redistrib_9.31.0.json"
expect_rc 0 "$CVM" update --max 1
assert_contains "$ERR" "added CUDA 13.4.1"
assert_not_contains "$ERR" "added cuDNN"
assert_contains "$ERR" "more new releases left for the next run"

# A folder mirror (file://) is read without listings.
stop_server
rm "$OVERLAY"
CVM_MIRROR="file://$M" expect_rc 0 "$CVM" update
assert_contains "$ERR" "added CUDA 13.4.1"

# cache clean --all drops the overlay; the shipped registry remains.
expect_rc 0 "$CVM" cache clean --all
[[ ! -e $OVERLAY ]] || fail "cache clean --all left the overlay"
expect_rc 0 "$CVM" list --available 13.4
assert_contains "$OUT" "registry as shipped"
echo "ok"
