#!/usr/bin/env bash
# --json everywhere: every command that prints data prints one document that parses, and every
# failure under --json prints {"error": {"code", "message"}} on stdout with the exit code it
# has without --json. As tables: one row per invocation.
source "$(dirname "$0")/lib.sh"
export CVM_REGISTRY_DIR="$CVM_SOURCE_DIR/registry"
# Nothing here may reach a network: a mirror on a closed loopback port fails at once.
export CVM_MIRROR="http://127.0.0.1:9" CVM_RETRY_DELAY_MS=1

make_toolkit "$TEST_TMP/cuda-11.2" 11.2.2
make_toolkit "$TEST_TMP/cuda-12.4" 12.4.1
make_cudnn "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77" 8.1.0
make_cudnn "$TEST_TMP/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" 9.1.0
proj=$TEST_TMP/proj
mkdir -p "$proj"
cd "$proj"

# json_get FILTER: evaluates a python expression on the parsed stdout `d` (fails unless it parses
# as exactly one JSON document).

# ---- failures: RC|CODE|message contains|ARGS... ---------------------------------------------
S=$'\x1f'
error_rows=(
    "2${S}usage${S}unknown option '--frob'${S}list${S}--frob${S}--json"
    "2${S}usage${S}not a valid KIND${S}list${S}--available${S}foo${S}--json"
    "2${S}usage${S}only applies with --available${S}list${S}11${S}--json"
    "2${S}invalid_input${S}no known CUDA release is 99${S}use${S}99${S}--json"
    "2${S}invalid_input${S}SPEC${S}use${S}12;x${S}--json"
    "1${S}not_installed${S}11.8.0 is not installed${S}uninstall${S}11.8.0${S}--json"
    "2${S}not_selected${S}nothing is selected here to install${S}install${S}--json"
    "2${S}not_found${S}has no build for CUDA 13${S}install${S}cudnn${S}8.9${S}--cuda${S}13${S}--json"
    "2${S}not_installable${S}CUDA 10.1.168 has no redistributable manifest${S}install${S}10.1.168${S}--json"
    "1${S}network${S}cannot read NVIDIA's checksums of CUDA 11.2.2${S}install${S}11.2.2+8.1.0.77${S}--json"
    "2${S}not_found${S}cuDNN 8.1.0.77 has no build for CUDA 12${S}install${S}cudnn${S}8.1.0.77${S}--cuda${S}12${S}--json"
    "1${S}network${S}download of http://127.0.0.1:9/redist/cudnn/v8.1.0/cudnn-11.2-linux-x64-v8.1.0.77.tgz failed${S}install${S}8.1.0.77-cuda11.2${S}--json"
    "2${S}not_found${S}no cuDNN 8.1 in cvm's release list supports CUDA 12.4.1${S}install${S}12.4+8.1${S}--json"
    "2${S}not_found${S}is not in cvm's release list${S}install${S}cuda${S}10.9${S}--json"
    "1${S}network${S}download of http://127.0.0.1:9/cuda/redist/redistrib_12.4.1.json failed${S}install${S}cuda${S}12.4.1${S}--json"
    "1${S}not_found${S}no CUDA release that cvm can install starts with 99${S}latest${S}99${S}--json"
    "1${S}not_installed${S}no installed CUDA toolkit starts with 12${S}latest${S}12${S}--installed${S}--json"
    "1${S}not_found${S}is not on PATH${S}which${S}no-such-tool-here${S}--json"
    "1${S}not_installed${S}nothing written: CUDA 12 is not installed${S}use${S}12${S}--json"
    "1${S}network${S}nothing was changed${S}update${S}--json"
)
mkdir -p "$TEST_TMP/answers"
n=0
for row in "${error_rows[@]}"; do
    IFS=$S read -r -a f <<<"$row"
    args=("${f[@]:3}")
    expect_rc "${f[0]}" env PATH="$TEST_TMP/nothing:$PATH" "$CVM" "${args[@]}"
    assert_contains "$ERR" "${f[2]}" "stderr of cvm ${args[*]}"
    n=$((n + 1))
    printf '%s\n' "$OUT" > "$TEST_TMP/answers/$n.json"
    printf '%s\n%s\n' "${f[1]}" "${f[2]}" > "$TEST_TMP/answers/$n.want"
    # Without --json: the same exit code, nothing on stdout.
    plain=()
    for a in "${args[@]}"; do [[ $a == --json ]] || plain+=("$a"); done
    expect_rc "${f[0]}" env PATH="$TEST_TMP/nothing:$PATH" "$CVM" "${plain[@]}"
    assert_eq "$OUT" "" "stdout of cvm ${plain[*]}"
done
# Each answer parses as one document holding only the error, with its code and message.
python3 - "$TEST_TMP/answers" "$n" <<'PY' || fail "--json errors"
import json, sys
folder, count = sys.argv[1], int(sys.argv[2])
for i in range(1, count + 1):
    doc = json.load(open(f"{folder}/{i}.json"))
    code, message = open(f"{folder}/{i}.want").read().splitlines()
    assert list(doc) == ["error"], (i, doc)
    assert doc["error"]["code"] == code, (i, code, doc)
    assert message in doc["error"]["message"], (i, message, doc)
PY

# ---- documents: one per command, parsed ---------------------------------------------------
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-11.2" --json
assert_eq "$(json_get '[(e["kind"], e["id"], e["status"]) for e in d["imported"]]')" "[('cuda', '11.2.2', 'imported')]"
assert_eq "$(json_get 'd["skipped"]')" "[]"
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-11.2" --json
assert_eq "$(json_get 'd["imported"][0]["status"]')" "already_registered"
for d in cuda-12.4 cudnn-11.2-linux-x64-v8.1.0.77 cudnn-linux-x86_64-9.1.0.70_cuda12-archive; do
    expect_rc 0 "$CVM" import "$TEST_TMP/$d"
done

# use: writing, showing, unsetting.
expect_rc 0 "$CVM" use 11.2+8.1 --json
assert_eq "$(json_get '(d["spec"], d["active"], d["global"], d["file"])')" \
    "('11.2+8.1', '11.2.2+8.1.0.77-cuda11.2', False, '$proj/.cudaversion')"
expect_rc 0 "$CVM" use --json
assert_eq "$(json_get '(d["spec"], d["file"], d["line"])')" "('11.2+8.1', '$proj/.cudaversion', 1)"
expect_rc 0 "$CVM" use -g 12.4 --json
assert_eq "$(json_get '(d["spec"], d["active"], d["global"])')" "('12.4', '12.4.1', True)"
expect_rc 0 "$CVM" use 11.8 --json --force # known, not installed: written with --force, nothing active
assert_eq "$(json_get '(d["spec"], d["active"])')" "('11.8', None)"
expect_rc 0 "$CVM" use --unset --json
assert_eq "$(json_get '(d["file"], d["removed"])')" "('$proj/.cudaversion', True)"
expect_rc 0 "$CVM" use --unset --json
assert_eq "$(json_get 'd["removed"]')" "False"
expect_rc 0 "$CVM" use --json
assert_eq "$(json_get '(d["spec"], d["set_by"])')" "('12.4', 'global ($CVM_ROOT/version)')"

# which: from the toolkit, and a fall-through to PATH.
expect_rc 0 "$CVM" which nvcc --json
assert_eq "$(json_get '(d["tool"], d["path"], d["source"])')" "('nvcc', '$TEST_TMP/cuda-12.4/bin/nvcc', 'toolkit')"
expect_rc 0 "$CVM" which sh --json
assert_eq "$(json_get '(d["tool"], d["source"])')" "('sh', 'path')"

# exec's words after its own options are the program's: --json there is no request for JSON.
expect_rc 127 "$CVM" exec nosuchcmd --json
assert_eq "$OUT" "" "exec nosuchcmd --json"

expect_rc 0 "$CVM" rehash --json
assert_eq "$(json_get 'd["shims"] >= 1 and d["folder"] == "'"$CVM_ROOT/shims"'"')" "True"
expect_rc 0 "$CVM" current --json
assert_eq "$(json_get 'd["active"]')" "12.4.1"
expect_rc 0 "$CVM" uninstall 9.1.0.70-cuda12 --json
assert_eq "$(json_get 'd["removed"]')" "[{'id': '9.1.0.70-cuda12', 'kind': 'cudnn', 'path': '$TEST_TMP/cudnn-linux-x86_64-9.1.0.70_cuda12-archive', 'status': 'forgotten'}]"
expect_rc 0 "$CVM" list --json
assert_eq "$(json_get '[e["id"] for e in d["cuda"]] + [e["id"] for e in d["cudnn"]]')" "['12.4.1', '11.2.2', '8.1.0.77-cuda11.2']"
echo "ok"
