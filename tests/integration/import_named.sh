#!/usr/bin/env bash
# Two toolkits of one release side by side (issue 35, item 14): `cvm import DIR --as NAME`
# registers the second under a name that specs select (`cvm use NAME+CUDNN`), `--detect` names
# the command when it meets the second, and every command that takes a spec or an id takes it.
source "$(dirname "$0")/lib.sh"
unset CONDA_PREFIX VIRTUAL_ENV CUDA_PATH_V11_8 CVM_VERSION || true
export HOME="$TEST_TMP/home"
mkdir -p "$HOME"
M="$TEST_TMP/machine"
export CVM_DETECT_ROOT="$M"
export CVM_PYTHON=/bin/false
# The installer's 11.8 in the default folder, and a hand-made 11.8 that CUDA_PATH names.
make_toolkit "$M/usr/local/cuda-11.8" 11.8.0
hand="$TEST_TMP/hand-made-11.8"
make_toolkit "$hand" 11.8.0
sed -i 's/fake nvcc/hand-made nvcc/' "$hand/bin/nvcc"
export CUDA_PATH="$hand"

expect_rc 0 "$CVM" import --detect
assert_contains "$ERR" "imported cuda 11.8.0 from"
first=$("$CVM" list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cuda"][0]["path"])')
[[ $first == "$hand" ]] && other="$M/usr/local/cuda-11.8" || other=$hand
# The second is passed over with the command that keeps both.
assert_contains "$ERR" "cuda 11.8.0 in $other"
assert_contains "$ERR" "to keep both, register this one under a name: \`cvm import $other --as NAME\`"
expect_rc 1 "$CVM" import "$other"
assert_contains "$ERR" "cvm import $other --as NAME"

# Names that are no names, --as with --detect, --as of a folder without a toolkit: exit 2, nothing registered.
make_cudnn "$TEST_TMP/dnn" 8.9.7
for bad in latest cuda nccl2 con 'a/b' 'x y' '-x' 'mine.'; do
    expect_rc 2 "$CVM" import "$other" --as "$bad"
    assert_contains "$ERR" "is not a toolkit name"
done
expect_rc 2 "$CVM" import --detect --as mine
assert_contains "$ERR" "give DIR, not --detect"
expect_rc 2 "$CVM" import --cuda 11 "$TEST_TMP/dnn" --as mine
assert_contains "$ERR" "--as names a toolkit"
assert_eq "$("$CVM" list cuda | grep -c '(imported')" "1" "a refused --as registered something"

expect_rc 0 "$CVM" import "$other" --as deb-11.8
assert_contains "$ERR" "imported cuda deb-11.8 from $other"
assert_contains "$ERR" "cvm use deb-11.8"
expect_rc 0 "$CVM" import "$other" --as deb-11.8
assert_contains "$ERR" "is already registered"
expect_rc 0 "$CVM" import "$other"
assert_contains "$ERR" "already registered as deb-11.8"
expect_rc 1 "$CVM" import "$first" --as deb-11.8
assert_contains "$ERR" "a toolkit named deb-11.8 is already registered from $other; choose another name"
# --detect now passes over both quietly.
expect_rc 0 "$CVM" import --detect
assert_not_contains "$ERR" "skipped"
expect_rc 0 "$CVM" list cuda
assert_contains "$OUT" "deb-11.8"
assert_contains "$OUT" "(imported, CUDA 11.8.0)"

# Selected by name, with a cuDNN of its CUDA: the shim, exec, env and current agree.
expect_rc 0 "$CVM" import --cuda 11 "$TEST_TMP/dnn"
proj="$TEST_TMP/proj"
mkdir -p "$proj/sub"
cd "$proj"
expect_rc 0 "$CVM" use deb-11.8+8.9
assert_contains "$ERR" "selected deb-11.8+8.9.7-cuda11"
assert_eq "$(cat .cudaversion)" "deb-11.8+8.9" ".cudaversion"
cd sub
want=$([[ $other == "$hand" ]] && echo "hand-made nvcc" || echo "fake nvcc")
expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$OUT" "$want 11.8.0"
assert_contains "$OUT" "CVM_ACTIVE=deb-11.8+8.9.7-cuda11"
expect_rc 0 "$CVM" current
assert_contains "$OUT" "deb-11.8+8.9.7-cuda11"
expect_rc 0 "$CVM" exec -- nvcc
assert_contains "$OUT" "$want"
expect_rc 0 "$CVM" exec 11.8 -- nvcc
assert_not_contains "$OUT" "$want" "a number selected the named toolkit"
expect_rc 0 "$CVM" exec deb-11.8 -- nvcc
assert_contains "$OUT" "$want"
expect_rc 1 "$CVM" exec nosuch -- nvcc
assert_contains "$ERR" "no toolkit is named nosuch; \`cvm import DIR --as nosuch\`"
expect_rc 2 "$CVM" exec deb-11.8 nvcc
assert_contains "$ERR" "'deb-11.8' is a spec, not a program: put \`--\` after it"
expect_rc 0 "$CVM" env --shell bash
assert_contains "$OUT" "CVM_ACTIVE='deb-11.8+8.9.7-cuda11'"
expect_rc 0 "$CVM" verify
assert_contains "$OUT" "deb-11.8+8.9.7-cuda11"
cd "$proj"

# cvm use: a name nothing registered is refused (exit 1, nothing written); --force writes it.
expect_rc 1 "$CVM" use nosuch
assert_contains "$ERR" "nothing written: no toolkit is named nosuch"
assert_eq "$(cat .cudaversion)" "deb-11.8+8.9" ".cudaversion after a refusal"
expect_rc 2 "$CVM" use deb-11.8+8.0
assert_contains "$ERR" "is built for the toolkit deb-11.8 (CUDA 11.8.0)"
expect_rc 2 "$CVM" install nosuch+9
assert_contains "$ERR" "no toolkit is named nosuch"

# The lock records the name and its release, and reads back.
expect_rc 0 "$CVM" lock
assert_contains "$(cat cvm.lock)" 'id = "deb-11.8"'
assert_contains "$(cat cvm.lock)" 'version = "11.8.0"'
expect_rc 0 "$CVM" lock --check

# Lmod modules name it too.
expect_rc 0 "$CVM" export lmod "$TEST_TMP/modules"
[[ -f $TEST_TMP/modules/cuda/deb-11.8.lua ]] || fail "no module cuda/deb-11.8: $(ls -R "$TEST_TMP/modules")"

# Forgotten by its name; the other 11.8 stays, and a project on it says what is missing.
expect_rc 1 "$CVM" uninstall deb
assert_contains "$ERR" "deb is not installed"
expect_rc 0 "$CVM" uninstall --yes deb-11.8
assert_contains "$OUT$ERR" "deb-11.8"
expect_rc 0 "$CVM" list cuda
assert_not_contains "$OUT" "deb-11.8"
assert_contains "$OUT" "11.8.0"
echo "import_named: ok"

# --- a hand-made 11.8 beside the machine's real Debian CUDA 11.8 ---
need_debian_cuda
export CVM_ROOT=$TEST_TMP/real-root
unset CVM_DETECT_ROOT
expect_rc 0 "$CVM" import "$hand"
expect_rc 1 "$CVM" import /usr
assert_contains "$ERR" "cvm import /usr --as NAME"
expect_rc 0 "$CVM" import /usr --as debian
cd "$TEST_TMP"
expect_rc 0 "$CVM" exec debian -- nvcc --version
assert_contains "$OUT" "Cuda compilation tools, release 11.8"
expect_rc 0 "$CVM" exec 11.8 -- nvcc --version
assert_contains "$OUT" "hand-made nvcc 11.8.0"
echo "import_named: Debian's 11.8 beside a hand-made one ok"
