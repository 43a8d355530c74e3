#!/usr/bin/env bash
# `cvm list --available [KIND] [PREFIX]` and `cvm latest`: the columns, the filter, the marks,
# and JSON that agrees with what `cvm install` really accepts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_install.sh"
trap 'stop_server; cleanup_test_tmp' EXIT
# A closed loopback port: an install that gets past the registry fails on the network at once.
export CVM_MIRROR="http://127.0.0.1:9" CVM_RETRY_DELAY_MS=1

make_toolkit "$TEST_TMP/cuda-11.2" 11.2.2
make_cudnn "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77" 8.1.0
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-11.2"
expect_rc 0 "$CVM" import "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77"

# ---- the human table: ARGS|a line it holds (regex)|a line it must not hold (regex) ----------
S=$'\x1f'
rows=(
    "--available${S}^  VERSION +RELEASED +MIN DRIVER +HOW\$${S}^  [0-9]+\\.[0-9]+\\.[0-9]+ +[0-9]{4}-[0-9]{2}-[0-9]{2}"
    "--available${S}^\\* 11\\.2\\.2 +2021-03 +460\\.32\\.03 +installer\$${S}^  11\\.2\\.2 "
    "--available${S}^  11\\.4\\.0 +2021-06 +470\\.42\\.01 +manifest\$${S}redistrib_"
    "--available${S}^\\* installed\\. HOW: manifest = .cvm install. fetches it; archive = .*installer = ${S}^cudnn \\(available, "
    "--available 11${S}^cuda \\(available, 11\\*\\)\$${S}^  12\\."
    "--available 11${S}^\\* 8\\.1\\.0\\.77-cuda11\\.2 +2021-01 +11\\.0-11\\.2 +archive\$${S}-cuda12 "
    "--available 11.2${S}^  8\\.9\\.7\\.29-cuda11 +2023-12 +11\\.0-11\\.8 +manifest\$${S}^  11\\.3\\."
    "--available cuda 12.4${S}^  12\\.4\\.1 ${S}^cudnn"
    "--available cudnn 8.1${S}^  VERSION +RELEASED +CUDA +HOW\$${S}^  8\\.9\\."
    "--available cudnn 99${S}^  \\(none known\\)\$${S}^  [0-9]"
    "--available cuda${S}^  13\\.0\\.[0-9]+ ${S}^cudnn"
)
for row in "${rows[@]}"; do
    IFS=$S read -r args want unwanted <<<"$row"
    # shellcheck disable=SC2086
    expect_rc 0 "$CVM" list $args
    grep -Eq -- "$want" <<<"$OUT" || fail "cvm list $args: no line matching [$want] in:
$OUT"
    ! grep -Eq -- "$unwanted" <<<"$OUT" || fail "cvm list $args: a line matches [$unwanted]"
done
expect_rc 2 "$CVM" list --available 11.x
assert_contains "$ERR" "'11.x' is not a valid KIND"
expect_rc 2 "$CVM" list --available cuda 11.x
assert_contains "$ERR" "'11.x' is not a valid PREFIX"

# ---- JSON: what it calls installable is what `cvm install` accepts ----------------------------
expect_rc 0 "$CVM" list --available --json
json_get 'all(e["installable"] for k in ("cuda", "cudnn") for e in d[k] if e["how"] != "installer")' | grep -qx True ||
    fail "a release of a manifest or legacy archive is not installable"
# Before the manifests: installable exactly where the registry names an installer for this platform.
assert_eq "$(json_get '[e["id"] for e in d["cuda"] if e["how"] == "installer" and e["installable"]][-3:]')" \
    "['11.0.2', '10.2.89', '10.1.243']"
assert_eq "$(json_get '[e["id"] for e in d["cuda"] if e["how"] == "installer" and not e["installable"]][:2]')" \
    "['10.1.168', '10.1.105']"
assert_eq "$(json_get '[(e["how"], e["installable"], e["installed"], e["released"]) for e in d["cudnn"] if e["id"] == "8.1.0.77-cuda11.2"]')" \
    "[('archive', True, True, '2021-01')]"
assert_eq "$(json_get '[(e["min_driver"], e["driver_linux"]) for e in d["cuda"] if e["id"] == "11.2.2"]')" \
    "[('460.32.03', '460.32.03')]"
# Every 5th release of each kind, through the real install: refused by the registry (exit 2,
# not_installable) exactly when not installable, else off to the mirror (an empty folder served
# on loopback: 404).
mapfile -t sample < <(json_get '"\n".join(" ".join((k, e["id"], str(e["installable"])))
    for k in ("cuda", "cudnn") for e in d[k][::5])')
[[ ${#sample[@]} -gt 30 ]] || fail "too few releases sampled: ${#sample[@]}"
mkdir -p "$TEST_TMP/mirror" "$TEST_TMP/answers"
start_server "$TEST_TMP/mirror"
n=0
for s in "${sample[@]}"; do
    read -r kind id installable <<<"$s"
    if [[ $kind == cuda ]]; then args=(cuda "$id"); else args=(cudnn "${id%-cuda*}" --cuda "${id##*-cuda}"); fi
    if [[ $installable == True ]]; then want=(1 network); else want=(2 not_installable); fi
    CVM_MIRROR="http://127.0.0.1:$HTTP_PORT" expect_rc "${want[0]}" "$CVM" install "${args[@]}" --json
    n=$((n + 1))
    printf '%s\n' "$OUT" > "$TEST_TMP/answers/$n-${want[1]}.json"
done
stop_server
# All answers parsed at once: each is one error document with the expected code.
python3 - "$TEST_TMP/answers" <<'PY' || fail "install --json answers disagree with list --available --json"
import json, os, sys
folder = sys.argv[1]
for name in sorted(os.listdir(folder)):
    doc = json.load(open(os.path.join(folder, name)))
    want = name.split("-", 1)[1][:-len(".json")]
    assert list(doc) == ["error"] and doc["error"]["code"] == want, (name, doc)
PY

# ---- latest --------------------------------------------------------------------------------
# ARGS|RC|stdout (exact; empty for a failure)
latest_rows=(
    "11.2${S}0${S}11.2.2"
    "11.0.2${S}0${S}11.0.2"
    "10.1.168${S}1${S}"
    "11.4${S}0${S}11.4.4"
    "cuda 11${S}0${S}11.8.0"
    "cudnn 8.1${S}0${S}8.1.1.33"
    "cudnn 8${S}0${S}8.9.7.29"
    "11 --installed${S}0${S}11.2.2"
    "cudnn --installed${S}0${S}8.1.0.77-cuda11.2"
    "12 --installed${S}1${S}"
    "99${S}1${S}"
)
for row in "${latest_rows[@]}"; do
    IFS=$S read -r args rc want <<<"$row"
    # shellcheck disable=SC2086
    expect_rc "$rc" "$CVM" latest $args
    assert_eq "$OUT" "$want" "cvm latest $args"
done
expect_rc 0 "$CVM" latest
newest=$OUT
expect_rc 0 "$CVM" list --available cuda --json
assert_eq "$(json_get '[e["id"] for e in d["cuda"] if e["installable"]][0]')" "$newest" "latest is the newest installable"
expect_rc 0 "$CVM" latest 11.4 --json
assert_eq "$(json_get '(d["kind"], d["version"], d["installed"], d["how"])')" "('cuda', '11.4.4', False, 'manifest')"
expect_rc 0 "$CVM" latest --installed --json
assert_eq "$(json_get '(d["id"], d["installed"])')" "('11.2.2', True)"
echo ok
