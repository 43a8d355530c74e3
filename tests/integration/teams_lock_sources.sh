#!/usr/bin/env bash
# cvm install --locked trusts cvm.lock for what to install, not for where it comes from: it
# downloads only releases the registry knows, from NVIDIA's site or CVM_MIRROR; another URL needs
# --allow-lock-urls; a locked sum that differs from the manifest's is refused naming both.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"
: "${CVM_SOURCE_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
export CVM_REGISTRY_DIR="$CVM_SOURCE_DIR/registry" CVM_PROGRESS=plain
T=$TEST_TMP
SERVER_PID= OTHER_PID=
trap '[[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null; [[ -n $OTHER_PID ]] && kill "$OTHER_PID" 2>/dev/null; cleanup_test_tmp' EXIT

make_mirror "$T/mirror"
DNN_NAME=cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz
mkdir -p "$T/elsewhere/files"
cp "$T/mirror/cudnn/redist/cudnn/linux-x86_64/$DNN_NAME" "$T/elsewhere/files/"
DNN_SHA=$(sha256sum "$T/elsewhere/files/$DNN_NAME" | cut -d' ' -f1)
# Another server, not the mirror: its log shows whether cvm fetched from it.
HTTP_TIMEOUT=600 start_server "$T/elsewhere"
OTHER_PID=$HTTP_PID OTHER_LOG=$HTTP_LOG OTHER_URL="http://127.0.0.1:$HTTP_PORT"
HTTP_PID=
serve "$T/mirror"
export CVM_MIRROR=$MIRROR_URL

# Store A: the toolkit from the mirror, the cuDNN from the other server's URL.
A=$T/storeA
CVM_ROOT=$A "$CVM" install cuda 12.4.1 --components cuda_nvcc,cuda_cudart 2>/dev/null || fail "install cuda"
CVM_ROOT=$A "$CVM" install "$OTHER_URL/files/$DNN_NAME" --sha256 "$DNN_SHA" 2>/dev/null || fail "install cudnn by URL"
mkdir -p "$T/team"
cd "$T/team"
CVM_ROOT=$A "$CVM" use "12.4+9.1" 2>/dev/null || fail "use 12.4+9.1 in store A"
CVM_ROOT=$A "$CVM" lock 2>/dev/null || fail "lock"
L=$T/team/cvm.lock
grep -q "$OTHER_URL/files/$DNN_NAME" "$L" || fail "the lock does not name the other URL: $(cat "$L")"
: >"$OTHER_LOG"

# A URL that is neither NVIDIA's nor the mirror's: refused, nothing fetched or installed.
B=$T/storeB
CVM_ROOT=$B expect_rc 2 "$CVM" install --locked
assert_contains "$ERR" "$OTHER_URL/files/$DNN_NAME is neither NVIDIA's"
assert_contains "$ERR" "CVM_MIRROR=$MIRROR_URL"
assert_contains "$ERR" "--allow-lock-urls"
assert_contains "$ERR" "nothing was installed"
[[ ! -e $B/cuda/12.4.1 && ! -e $B/cudnn/9.1.0.70-cuda12 ]] || fail "install --locked installed from a refused lock"
[[ ! -s $OTHER_LOG ]] || fail "cvm fetched from a URL it refused: $(cat "$OTHER_LOG")"
CVM_ROOT=$B expect_rc 2 "$CVM" install --allow-lock-urls 12.4
assert_contains "$ERR" "only applies to \`cvm install --locked\`"

# Allowed: fetched from there, checked against the locked sum.
CVM_ROOT=$B expect_rc 0 "$CVM" install --locked --allow-lock-urls
grep -q "GET /files/$DNN_NAME" "$OTHER_LOG" || fail "the allowed URL was not fetched"
CVM_ROOT=$B expect_rc 0 "$CVM" lock --check

# The mirror's URLs for known releases need no flag: a lock of store B with the cuDNN from the
# mirror (its URL under another address of the mirror is fetched from CVM_MIRROR).
CVM_ROOT=$B "$CVM" uninstall 9.1.0.70-cuda12 2>/dev/null
CVM_ROOT=$B "$CVM" install cudnn 9.1.0 --cuda 12 2>/dev/null || fail "install cudnn from the mirror"
CVM_ROOT=$B "$CVM" lock 2>/dev/null || fail "lock B"
grep -q "$MIRROR_URL/cudnn/redist/" "$L" || fail "the lock does not name the mirror: $(cat "$L")"
cp "$L" "$T/good.lock"
kill "$SERVER_PID"
serve "$T/mirror"
export CVM_MIRROR=$MIRROR_URL
C=$T/storeC
CVM_ROOT=$C expect_rc 0 "$CVM" install --locked
[[ -d $C/cudnn/9.1.0.70-cuda12 ]] || fail "the locked cuDNN was not installed from the mirror"

# A locked sum that differs from the manifest's: refused, naming both.
nvcc_sha=$(python3 -c 'import sys, tomllib; d = tomllib.load(open(sys.argv[1], "rb")); print([a["sha256"] for a in d["cuda"]["archive"] if "nvcc" in a["name"]][0])' "$L")
fake=$(printf 'a%.0s' $(seq 64))
sed -i "s/$nvcc_sha/$fake/" "$L"
D=$T/storeD
CVM_ROOT=$D expect_rc 1 "$CVM" install --locked
assert_contains "$ERR" "$fake"
assert_contains "$ERR" "$nvcc_sha"
assert_contains "$ERR" "nothing was downloaded"
[[ ! -e $D/cuda/12.4.1 ]] || fail "a toolkit was installed against a wrong locked sum"

# A release the registry does not know: refused without the flag, before any download.
cp "$T/good.lock" "$L"
sed -i 's/^id = "12.4.1"/id = "12.4.9"/; s/^active = "12.4.1+/active = "12.4.9+/' "$L"
E=$T/storeE
CVM_ROOT=$E expect_rc 2 "$CVM" install --locked
assert_contains "$ERR" "cuda 12.4.9 is not a release in cvm's registry"
if compgen -G "$E/cache/downloads/*" >/dev/null; then fail "downloaded for an unknown release"; fi
# The lock's cuDNN refused after its toolkit was fetched: the toolkit is taken back, so the
# store never holds half a lock.
cp "$T/good.lock" "$L"
dnn_sha=$(python3 -c 'import sys, tomllib; d = tomllib.load(open(sys.argv[1], "rb")); print(d["cudnn"]["archive"][0]["sha256"])' "$L")
sed -i "s/$dnn_sha/$fake/" "$L"
F=$T/storeF
CVM_ROOT=$F expect_rc 1 "$CVM" install --locked
assert_contains "$ERR" "$fake"
assert_contains "$ERR" "removed cuda 12.4.1 again: cvm.lock is installed whole or not at all"
[[ ! -e $F/cuda/12.4.1 ]] || fail "install --locked left the toolkit when the lock's cuDNN was refused"
[[ ! -e $F/cudnn/9.1.0.70-cuda12 ]] || fail "a refused cuDNN was installed"
echo "teams_lock_sources: ok"
