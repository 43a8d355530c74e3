#!/usr/bin/env bash
# `cvm exec` argument passing and `cvm use` checks, as tables: one row per invocation.
source "$(dirname "$0")/lib.sh"

make_toolkit "$TEST_TMP/cuda-11.2" 11.2.2
make_toolkit "$TEST_TMP/cuda-12.4" 12.4.1
make_cudnn "$TEST_TMP/cudnn-11.2-linux-x64-v8.1.0.77" 8.1.0
make_cudnn "$TEST_TMP/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" 9.1.0
for d in cuda-11.2 cuda-12.4 cudnn-11.2-linux-x64-v8.1.0.77 cudnn-linux-x86_64-9.1.0.70_cuda12-archive; do
    expect_rc 0 "$CVM" import "$TEST_TMP/$d"
done

proj=$TEST_TMP/proj
mkdir -p "$proj"
cd "$proj"
echo 12.4 > .cudaversion
printf 'not a program\n' > noexec

# ---- exec ----------------------------------------------------------------------------------
# Each row: RC|STDOUT (exact, or *TEXT* for "contains")|STDERR contains (may be empty)|ARGS...
# separated by the unit separator \x1f so that arguments may hold anything else.
S=$'\x1f'
exec_rows=(
    "0${S}-o out in.cu${S}${S}echo${S}-o${S}out${S}in.cu"
    "0${S}1${S}${S}python3${S}-c${S}print(1)"
    "0${S}a b${S}${S}sh${S}-c${S}echo \$0 \$1${S}a${S}b"
    "0${S}a b${S}${S}--${S}sh${S}-c${S}echo \$0 \$1${S}a${S}b"
    "0${S}a|--|b|${S}${S}printf${S}%s|${S}a${S}--${S}b"
    "0${S}--|x|${S}${S}--${S}printf${S}%s|${S}--${S}x"
    "0${S}*args=--version*${S}${S}nvcc${S}--version"
    "0${S}*fake nvcc 12.4.1*${S}${S}nvcc${S}--version"
    "0${S}*args=-h*${S}${S}nvcc${S}-h"
    "0${S}*args=--help -x*${S}${S}nvcc${S}--help${S}-x"
    "0${S}*args=--spec 9*${S}${S}nvcc${S}--spec${S}9"
    "0${S}*fake nvcc 11.2.2*${S}${S}--spec${S}11.2${S}nvcc${S}-V"
    "0${S}*args=-V*${S}${S}--spec${S}11.2${S}nvcc${S}-V"
    "0${S}*fake nvcc 11.2.2*${S}${S}11.2${S}--${S}nvcc${S}x"
    "0${S}*args=x*${S}${S}11.2${S}--${S}nvcc${S}x"
    "0${S}*fake nvcc 11.2.2*${S}${S}--version${S}11.2${S}--${S}nvcc"
    "0${S}*fake nvcc 11.2.2*${S}${S}--spec${S}11.2${S}--${S}nvcc"
    "0${S}*CUDA_PATH=$TEST_TMP/cuda-12.4*${S}${S}env"
    "0${S}*--spec*${S}${S}--help"
    "0${S}*--spec*${S}${S}-h${S}nvcc"
    "7${S}${S}${S}sh${S}-c${S}exit 7"
    "7${S}${S}${S}--${S}sh${S}-c${S}exit 7"
    "127${S}${S}nosuchcmd: command not found in the selected environment (PATH=${S}nosuchcmd${S}-h"
    "127${S}${S}nosuchcmd: command not found in the selected environment${S}--${S}nosuchcmd"
    "127${S}${S}nosuchcmd: command not found${S}11.2${S}--${S}nosuchcmd"
    "2${S}${S}cvm exec: '12' is a spec, not a program: put \`--\` after it, \`cvm exec 12 -- nvcc\`${S}12${S}nvcc"
    "2${S}${S}cvm exec: '11.2' is a spec, not a program: put \`--\` after it, \`cvm exec 11.2 -- nvcc --version\`${S}11.2${S}nvcc${S}--version"
    "2${S}${S}cvm exec: '12.4+9' is a spec, not a program: put \`--\` after it, e.g. \`cvm exec 12.4+9 -- nvcc --version\`${S}12.4+9"
    "126${S}${S}is not an executable file${S}./noexec"
    "2${S}${S}nothing to run${S}"
    "2${S}${S}nothing to run${S}--"
    "2${S}${S}nothing to run${S}11.2${S}--"
    "2${S}${S}cvm exec: unknown option '--frob'; cvm's options go before CMD; see cvm help exec${S}--frob${S}nvcc"
    "2${S}${S}two specs${S}--spec${S}11.2${S}12${S}--${S}nvcc"
    "2${S}${S}${S}--spec${S}11.2${S}--version${S}12${S}nvcc"
    "2${S}${S}SPEC${S}--spec${S}11.2;rm${S}nvcc"
)
for row in "${exec_rows[@]}"; do
    IFS=$S read -r -a f <<<"$row"
    want_rc=${f[0]} want_out=${f[1]} want_err=${f[2]}
    args=("${f[@]:3}")
    expect_rc "$want_rc" "$CVM" exec "${args[@]}"
    case $want_out in
    \**\*) assert_contains "$OUT" "${want_out:1:${#want_out}-2}" "cvm exec ${args[*]}" ;;
    *) [[ $want_rc != 0 && -z $want_out ]] || assert_eq "$OUT" "$want_out" "cvm exec ${args[*]}" ;;
    esac
    [[ -z $want_err ]] || assert_contains "$ERR" "$want_err" "cvm exec ${args[*]}"
done
# A spec without `--` is one line, not a "command not found" with PATH, selection or none (issue 35).
(cd "$TEST_TMP" && expect_rc 2 "$CVM" exec 11.8 nvcc --version &&
    assert_eq "$ERR" "cvm exec: '11.8' is a spec, not a program: put \`--\` after it, \`cvm exec 11.8 -- nvcc --version\`" &&
    assert_not_contains "$ERR" "PATH=")
# A program of that name on PATH is still run.
mkdir -p "$TEST_TMP/specbin"
printf '#!/bin/sh\necho ran 11.8\n' > "$TEST_TMP/specbin/11.8"
chmod +x "$TEST_TMP/specbin/11.8"
PATH="$TEST_TMP/specbin:$PATH" expect_rc 0 "$CVM" exec 11.8 x
assert_eq "$OUT" "ran 11.8"
# The program's exit code, whatever it is; a missing program's message is one line.
FAKE_NVCC_EXIT=42 expect_rc 42 "$CVM" exec nvcc
expect_rc 127 "$CVM" exec nosuchcmd
assert_eq "$(wc -l <<<"$ERR")" "1" "one line for a missing program"

# ---- use -----------------------------------------------------------------------------------
# Each row: RC|FILE CONTENT after (- for no file)|STDERR contains|ARGS... run in a fresh folder
# (the global file is removed first).
use_rows=(
    "2${S}-${S}no known CUDA release is 99${S}99"
    "2${S}-${S}nothing written${S}13+8.9"
    "2${S}-${S}no known cuDNN 8.9 is built for CUDA 13${S}13+8.9"
    "2${S}-${S}no known cuDNN release is 7.9${S}12+7.9"
    "2${S}-${S}cvm use --force 99${S}99"
    "2${S}-${S}SPEC${S}11.2;rm"
    "2${S}-${S}--unset takes no SPEC${S}--unset${S}12"
    "2${S}-${S}--force needs a SPEC${S}--force"
    "0${S}99  # --force: no known CUDA release is 99*${S}--force${S}--force${S}99"
    "0${S}13+8.9  # --force: no known cuDNN 8.9 is built for CUDA 13*${S}--force${S}13+8.9${S}--force"
    "1${S}-${S}nothing written: CUDA 12.8 is not installed; run \`cvm install 12.8\`${S}12.8"
    "1${S}-${S}no cuDNN 9.14 is installed; run \`cvm install 12.4+9.14\`${S}12.4+9.14"
    "1${S}-${S}\`cvm use --force 12.4+9.14\` writes it anyway${S}12.4+9.14"
    "0${S}12.8${S}wrote 12.8 in${S}--force${S}12.8"
    "0${S}12.4+9.14${S}cvm install 12.4+9.14${S}12.4+9.14${S}--force"
    "0${S}12.4${S}selected 12.4.1 in${S}12.4"
    "0${S}12.4${S}cvm use 12.4+9.1.0.70${S}12.4"
    "0${S}11.2${S}cuDNN 8.1.0.77-cuda11.2 is installed for this toolkit but not selected${S}11.2"
    "0${S}11.2${S}cvm use 11.2+8.1.0.77${S}11.2"
    "0${S}11.2+8${S}selected 11.2.2+8.1.0.77-cuda11.2 in${S}11.2+8"
    "0${S}system${S}system${S}system"
)
n=0
for row in "${use_rows[@]}"; do
    IFS=$S read -r -a f <<<"$row"
    want_rc=${f[0]} want_file=${f[1]} want_err=${f[2]}
    args=("${f[@]:3}")
    n=$((n + 1))
    mkdir -p "$TEST_TMP/use$n"
    cd "$TEST_TMP/use$n"
    rm -f "$CVM_ROOT/version"
    expect_rc "$want_rc" "$CVM" use "${args[@]}"
    [[ -z $want_err ]] || assert_contains "$ERR" "$want_err" "cvm use ${args[*]}"
    if [[ $want_file == - ]]; then
        [[ ! -e .cudaversion ]] || fail "cvm use ${args[*]} wrote .cudaversion"
    elif [[ $want_file == *\* ]]; then # a prefix
        [[ $(cat .cudaversion) == "${want_file%\*}"* ]] || fail "cvm use ${args[*]}: .cudaversion is [$(cat .cudaversion)]"
    else
        assert_eq "$(cat .cudaversion)" "$want_file" "cvm use ${args[*]}"
    fi
    [[ ! -e "$CVM_ROOT/version" ]] || fail "cvm use ${args[*]} wrote the global file"
    # The note about an installed cuDNN is only for a toolkit chosen without one.
    [[ ${args[0]} != *+* ]] || assert_not_contains "$ERR" "not selected" "cvm use ${args[*]}"
done

# A spec written with --force says why wherever it stops something: nothing can install it.
mkdir -p "$TEST_TMP/forced" && cd "$TEST_TMP/forced"
expect_rc 0 "$CVM" use --force 12.4+7.9
expect_rc 1 "$CVM" current
assert_contains "$ERR" "was written with \`cvm use --force\` and no known release satisfies it (no known cuDNN release is 7.9"
assert_not_contains "$ERR" "cvm install"
expect_rc 127 env PATH="$CVM_ROOT/shims:$PATH" nvcc --version
assert_contains "$ERR" "nothing can install it; run \`cvm use SPEC\` with one that exists"
"$CVM" doctor --json > "$TEST_TMP/forced.json" 2>/dev/null || true
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); f=[f for f in d["findings"] if f["code"]=="selection-unresolved"][0]; assert "cvm install" not in f["fix"] and "--force" in f["message"], f' "$TEST_TMP/forced.json" ||
    fail "doctor's selection-unresolved for a forced spec: $(cat "$TEST_TMP/forced.json")"

# A release the registry does not know becomes known once a store holds it: an import here, or
# an entry of a read-only layer (CVM_STORE_PATH).
mkdir -p "$TEST_TMP/known" && cd "$TEST_TMP/known"
expect_rc 2 "$CVM" use 12.10
assert_contains "$ERR" "no known CUDA release is 12.10"
make_toolkit "$TEST_TMP/cuda-12.10" 12.10.0
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.10"
expect_rc 0 "$CVM" use 12.10
assert_contains "$ERR" "selected 12.10.0 in"
assert_contains "$ERR" "cvm use 12.10+9.1.0.70"
rm .cudaversion
make_toolkit "$TEST_TMP/cuda-12.11" 12.11.0
CVM_ROOT="$TEST_TMP/team" expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.11"
expect_rc 2 "$CVM" use 12.11
CVM_STORE_PATH="$TEST_TMP/team" expect_rc 0 "$CVM" use 12.11
assert_eq "$(cat .cudaversion)" "12.11"
assert_contains "$ERR" "selected 12.11.0 in"

# --global: the same checks, the other file.
mkdir -p "$TEST_TMP/g" && cd "$TEST_TMP/g"
expect_rc 2 "$CVM" use -g 99
[[ ! -e "$CVM_ROOT/version" ]] || fail "cvm use -g 99 wrote the global file"
expect_rc 2 "$CVM" use --global 13+8.9
[[ ! -e "$CVM_ROOT/version" ]] || fail "cvm use --global 13+8.9 wrote the global file"
expect_rc 0 "$CVM" use -g 11.2
assert_eq "$(cat "$CVM_ROOT/version")" "11.2"
assert_contains "$ERR" "cvm use --global 11.2+8.1.0.77"
[[ ! -e .cudaversion ]] || fail "cvm use -g wrote .cudaversion"

# Bare `cvm use`: the selection in effect here and where it came from; -g: the global one.
expect_rc 0 "$CVM" use
assert_eq "$OUT" "11.2 (set by global ($CVM_ROOT/version))"
expect_rc 0 "$CVM" use 12.4+9
expect_rc 0 "$CVM" use
assert_eq "$OUT" "12.4+9 (set by $TEST_TMP/g/.cudaversion:1)"
expect_rc 0 "$CVM" use -g
assert_eq "$OUT" "11.2 (set by global ($CVM_ROOT/version))"

# --unset: the local file (then the global default applies), again (none), the global one.
expect_rc 0 "$CVM" use --unset
[[ ! -e .cudaversion ]] || fail "cvm use --unset left .cudaversion"
assert_contains "$ERR" "removed $TEST_TMP/g/.cudaversion"
assert_contains "$ERR" "the selection here is now 11.2"
expect_rc 0 "$CVM" use --unset
assert_contains "$ERR" "nothing to unset"
expect_rc 0 "$CVM" use --unset --global
[[ ! -e "$CVM_ROOT/version" ]] || fail "cvm use --unset --global left the global file"
expect_rc 0 "$CVM" use --unset -g
assert_contains "$ERR" "nothing to unset"
expect_rc 0 "$CVM" use
assert_eq "$OUT" ""
assert_contains "$ERR" "no CUDA version is selected here; run \`cvm use SPEC\`"
# Only a regular file is removed: a link (or a folder) named .cudaversion is left alone.
echo 12 > "$TEST_TMP/elsewhere"
ln -s "$TEST_TMP/elsewhere" .cudaversion
expect_rc 1 "$CVM" use --unset
assert_contains "$ERR" "is not a regular file"
[[ -L .cudaversion && -e "$TEST_TMP/elsewhere" ]] || fail "cvm use --unset removed a link"
rm .cudaversion
mkdir .cudaversion
expect_rc 1 "$CVM" use --unset
[[ -d .cudaversion ]] || fail "cvm use --unset removed a folder"
echo "cli_exec_use: ok"
