#!/usr/bin/env bash
# Issue 40: `cvm probe --python` runs the guide's own check (torch.backends.cudnn.version(), the
# cuDNN files the process maps; a convolution where a GPU is seen) with the real PyTorch wheel,
# in an isolated interpreter under the selection's environment, and its verdict agrees with what
# `cvm doctor` predicts from files:
#  - the real torch 2.15.0 wheel (its cuDNN 9.26 front library has DT_RPATH $ORIGIN): its own
#    cuDNN whole under another selection; pass.
#  - a copy with DT_RUNPATH (as cuDNN 9.19's wheel has): an older selection is refused (exit 1,
#    PyTorch's own words, the way out), a newer one is a mixed set PyTorch accepts (a warning),
#    its own release is clean.
#  - nothing of the project folder is imported (a torch/ there that would say so);
#  - bad input: a Python that hangs (bounded by CVM_PROBE_PYTHON_TIMEOUT), prints garbage,
#    crashes, has no framework, another user could change, or is not there.
# No GPU is needed here: PyTorch checks cuDNN's version without one, and the probe says that the
# convolution was not checked.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_wheels.sh"
torch_real_store

# A project folder whose own torch/ would announce itself if imported.
project=$TEST_TMP/project
mkdir -p "$project/torch"
printf 'open("%s", "w").write("imported")\nraise SystemExit("the project folder'"'"'s torch was imported")\n' \
    "$TEST_TMP/project-torch-imported" > "$project/torch/__init__.py"
cd "$project"

# probe SPEC [ARGS...]: `cvm probe SPEC --python --json` in the project folder; the document in $OUT.
probe() {
    local rc=0 spec=$1
    shift
    OUT=$("$CVM" probe "$spec" --python --json "$@" 2> "$TEST_TMP/.stderr") || rc=$?
    ERR=$(cat "$TEST_TMP/.stderr")
    PROBE_RC=$rc
    jq -e . <<< "$OUT" > /dev/null || fail "cvm probe $spec --python --json printed no JSON (exit $rc): $OUT $ERR"
}
# --- the real wheel: its own cuDNN whole, whatever is selected ---
export CVM_PYTHON=$torch_venv/bin/python
probe 13.0+9.19
assert_eq "$PROBE_RC" 0 "the real wheel under 13.0+9.19: exit"
assert_eq "$(jq -c '[.ok, .frameworks[0].framework, .frameworks[0].cudnn_version, .frameworks[0].cudnn_folders]' <<< "$OUT")" \
    "[true,\"torch\",92600,[\"$own/lib\"]]" "the real wheel under 13.0+9.19"
assert_eq "$(jq -r '.frameworks[0].cudnn_built + " " + .frameworks[0].nccl_version' <<< "$OUT")" "9.26.0 2.30.7" \
    "the cuDNN it was built with and the NCCL it reports"
assert_contains "$(jq -r '.not_checked[]' <<< "$OUT")" "convolution on the GPU (it sees no GPU)"
doctor_code 13.0+9.19
assert_eq "$DOCTOR_CODE" "note:framework-own-cudnn" "doctor predicts what the probe saw"
# Another NCCL selected too (13.0's 2.28.9): PyTorch's DT_RPATH and preload keep its own 2.30.7, as
# doctor's framework-own-nccl says.
probe 13.0+9.19+nccl2.28
assert_eq "$(jq -r '[.frameworks[0].loaded[] | select(test("libnccl"))] | join(" ")' <<< "$OUT") $(jq -r '.frameworks[0].nccl_version' <<< "$OUT")" \
    "$torch_site/nvidia/nccl/lib/libnccl.so.2 2.30.7" "the NCCL PyTorch loads with another selected"
rc=0
OUT=$(CVM_VERSION=13.0+9.19+nccl2.28 "$CVM" doctor --json 2> /dev/null) || rc=$?
assert_contains "$(jq -r '.findings[] | select(.code == "framework-own-nccl") | .message' <<< "$OUT")" \
    "brings its own NCCL 2.30.7 ($torch_site/nvidia/nccl/lib/libnccl.so.2, its library's own text): the selected NCCL does not change what it loads"
[[ ! -e $TEST_TMP/project-torch-imported ]] || fail "the project folder's torch/ was imported"
# The text: what it reports, what was not checked, the result.
expect_rc 0 "$CVM" probe 13.0+9.19 --python
assert_contains "$OUT" "PyTorch 2.15.0+cu132: built for CUDA 13.2, cuDNN 9.26.0"
assert_contains "$OUT" "cuDNN files from $own/lib: "
assert_contains "$OUT" "result: OK, PyTorch 2.15.0+cu132 loads cuDNN 92600 and accepts it"

# --- DT_RUNPATH, as cuDNN 9.19's wheel has: the selection's sub-libraries come first ---
runpath_venv "$torch_venv" "$TEST_TMP/venv"
# An older release: PyTorch refuses it; the probe fails with its words and the way out, and the
# selection comes from .cudaversion as a user's does.
echo 13.0+9.19 > "$project/.cudaversion"
rc=0
OUT=$("$CVM" probe --python --json 2> /dev/null) || rc=$?
assert_eq "$rc" 1 "13.0+9.19 with RUNPATH: exit"
assert_eq "$(jq -r '[.problems[].kind] | join(",")' <<< "$OUT")" "cudnn_refused"
assert_contains "$(jq -r '.problems[0].message' <<< "$OUT")" \
    "refuses the cuDNN it loads under this selection: RuntimeError: cuDNN version incompatibility"
assert_contains "$(jq -r '.problems[0].fix' <<< "$OUT")" "cvm import $site/nvidia/cudnn\`, then \`cvm use 13.0.2+9.26.0.51\`"
assert_eq "$(jq -c '.warnings[0].kind, .frameworks[0].cudnn_folders' <<< "$OUT" | tr -d '\n')" \
    "\"mixed_cudnn\"[\"$cuda130/lib\",\"$lib\"]" "the mixed set PyTorch mapped"
doctor_code 13.0+9.19
assert_eq "$DOCTOR_CODE" "error:framework-cudnn-refused" "doctor predicted the refusal"
# A standalone activation script activates it without `cvm use`: it says the same before.
expect_rc 0 "$CVM" script 13.0+9.19 --shell bash -o -
assert_contains "$ERR" "error ahead: PyTorch 2.15.0+cu132 in $CVM_PYTHON would load a mixed cuDNN"
rm "$project/.cudaversion"
# A newer release: a mixed set PyTorch accepts: exit 0 with a warning, as doctor predicts.
probe 13.0+9.28
assert_eq "$PROBE_RC" 0 "13.0+9.28 with RUNPATH: exit"
assert_eq "$(jq -r '[.warnings[].kind] | join(",")' <<< "$OUT") $(jq -r '.frameworks[0].cudnn_version' <<< "$OUT")" \
    "mixed_cudnn 92801" "13.0+9.28: a mixed set, reporting the sub-library's release"
doctor_code 13.0+9.28
assert_eq "$DOCTOR_CODE" "warning:framework-cudnn-mixed" "doctor predicted the mixed set"
# Its own release, imported as the fix says: nothing mixed.
expect_rc 0 "$CVM" import "$site/nvidia/cudnn"
probe 13.0+9.26
assert_eq "$(jq -c '[.ok, .warnings, .frameworks[0].cudnn_folders]' <<< "$OUT")" "[true,[],[\"$lib\"]]" \
    "its own release selected"
echo "probe_python_real: every verdict matched doctor's prediction"

# --- bad input ---
# A torch pip left half-installed (its version.py gone, as an interrupted upgrade leaves it):
# importing it really fails; doctor names it with the reinstall, `use --for .` refuses with the same
# line, the probe reports the import's own failure.
cp -al "$torch_venv" "$TEST_TMP/half"
half_site=$(compgen -G "$TEST_TMP/half/lib/python3*/site-packages")
rm "$half_site/torch/version.py"
export CVM_PYTHON=$TEST_TMP/half/bin/python
! "$CVM_PYTHON" -I -c 'import torch' 2> /dev/null || fail "torch without version.py still imports"
rc=0
OUT=$(CVM_VERSION=13.0 "$CVM" doctor --json 2> /dev/null) || rc=$?
assert_eq "$(jq -r '[.findings[] | select(.code == "framework-damaged") | .severity] | join(",")' <<< "$OUT")" "error" \
    "doctor: a half-installed torch"
assert_contains "$(jq -r '.findings[] | select(.code == "framework-damaged") | .message + " | " + .fix' <<< "$OUT")" \
    "$half_site/torch/version.py is missing or unreadable, so importing it fails | reinstall it: \`$CVM_PYTHON -m pip install --force-reinstall --no-deps torch==2.15.0\` (from the index it came from)"
expect_rc 2 "$CVM" use --for .
assert_contains "$ERR" "use --for .: $half_site/torch is half-installed"
[[ ! -e $project/.cudaversion ]] || fail "use --for . wrote a selection for a half-installed torch"
probe 13.0
assert_eq "$PROBE_RC $(jq -r '.problems[0].kind + " " + .frameworks[0].error.step' <<< "$OUT")" "1 framework_error import" \
    "the probe: a half-installed torch"
assert_contains "$(jq -r '.problems[0].message' <<< "$OUT")" "torch.version"
# A Python wrapper that misbehaves for the framework check (4 arguments) or, with *-all, also when
# asked for its search path (3); "noise" prints a line before its search path, as a chatty
# sitecustomize does.
fake=$TEST_TMP/fake/bin
mkdir -p "$fake"
cat > "$fake/python" << EOF
#!/bin/sh
case "\$FAKE:\$#" in
    hang:4 | hang-all:*) echo \$\$ > "$TEST_TMP/hang.pid"; exec sleep 600 ;;
    garbage:4 | garbage-all:*) echo 'Fatal Python error: init_import_site: Failed to import the site module'; exit 1 ;;
    crash:4) kill -SEGV \$\$ ;;
    noise:3) echo 'sitecustomize: hello' ;;
esac
exec "$torch_venv/bin/python" "\$@"
EOF
chmod 755 "$fake/python" "$fake" "$TEST_TMP/fake"
export CVM_PYTHON=$fake/python
FAKE=hang CVM_PROBE_PYTHON_TIMEOUT=2 probe 13.0
assert_eq "$PROBE_RC" 1 "a Python that hangs"
assert_eq "$(jq -r '.problems | map(.kind) | unique | join(",")' <<< "$OUT")" "timed_out"
assert_contains "$(jq -r '.problems[0].message' <<< "$OUT")" "did not finish checking PyTorch within 2 s and was stopped"
! kill -0 "$(cat "$TEST_TMP/hang.pid")" 2> /dev/null || fail "the hung check was left running"
FAKE=garbage probe 13.0
assert_eq "$PROBE_RC $(jq -r '.problems[0].kind' <<< "$OUT")" "1 no_report" "a Python that prints garbage"
assert_contains "$(jq -r '.problems[0].message' <<< "$OUT")" "printed no report while checking PyTorch (exit 1); its last line: Fatal Python error"
FAKE=crash probe 13.0
assert_eq "$PROBE_RC $(jq -r '.problems[0].kind' <<< "$OUT")" "1 crashed" "a Python that crashes"
assert_contains "$(jq -r '.problems[0].message' <<< "$OUT")" "was killed by SIGSEGV while checking PyTorch"
# The same Python asked only for its search path (doctor, cvm use): a line saying so, in bounded
# time; a line printed before the search path is passed over.
FAKE=hang-all expect_rc 0 "$CVM" use 13.0+9.19
assert_contains "$ERR" "note: $fake/python did not say where its packages are within 10 s and was stopped, so what its frameworks would load under 13.0.2+9.19.0.56-cuda13 was not checked"
! kill -0 "$(cat "$TEST_TMP/hang.pid")" 2> /dev/null || fail "the hung python was left running"
rm -f "$project/.cudaversion"
rc=0
OUT=$(FAKE=garbage-all CVM_VERSION=13.0+9.19 "$CVM" doctor --json 2> /dev/null) || rc=$?
assert_eq "$(jq -r '.findings[] | select(.code == "python-unanswered") | .severity + ": " + .message' <<< "$OUT")" \
    "warning: $fake/python printed no search path (exit 1): Fatal Python error: init_import_site: Failed to import the site module: what its frameworks load was not checked"
rc=0
OUT=$(FAKE=noise CVM_VERSION=13.0+9.19 "$CVM" doctor --json 2> /dev/null) || rc=$?
assert_eq "$(jq -r '[.findings[] | select(.code | test("^(python-unanswered|framework-own-cudnn)$")) | .code] | join(",")' <<< "$OUT")" \
    "framework-own-cudnn" "a line before the search path"
CVM_PROBE_PYTHON_TIMEOUT=soon expect_rc 2 "$CVM" probe 13.0 --python
assert_contains "$ERR" "CVM_PROBE_PYTHON_TIMEOUT=soon is not a number of seconds"
# No framework in it: exit 2, nothing else to say.
python3 -m venv --without-pip "$TEST_TMP/bare" 2> /dev/null || python3 -m venv "$TEST_TMP/bare"
expect_rc 2 "$CVM" probe 13.0 --python="$TEST_TMP/bare/bin/python"
assert_contains "$ERR" "has none of torch, jax and tensorflow installed"
expect_rc 2 "$CVM" probe 13.0 --python="$TEST_TMP/nowhere/python"
assert_contains "$ERR" "is not an executable file"
# A Python in a folder every user may write: not run.
mkdir -p "$TEST_TMP/open" && chmod 777 "$TEST_TMP/open"
ln -s "$torch_venv/bin/python" "$TEST_TMP/open/python"
expect_rc 2 "$CVM" probe 13.0 --python="$TEST_TMP/open/python"
assert_contains "$ERR" "could be changed by another user"
expect_rc 2 "$CVM" probe 13.0 --python --nccl
assert_contains "$ERR" "--python runs the frameworks' own checks"
echo PASS
