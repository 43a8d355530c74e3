#!/usr/bin/env bash
# `cvm exec` argument passing, as a table: one row per invocation.
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
    "127${S}${S}12: command not found${S}12${S}nvcc"
    "126${S}${S}is not an executable file${S}./noexec"
    "2${S}${S}nothing to run${S}"
    "2${S}${S}nothing to run${S}--"
    "2${S}${S}nothing to run${S}11.2${S}--"
    "2${S}${S}unknown option --frob${S}--frob${S}nvcc"
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
# The program's exit code, whatever it is; a missing program's message is one line.
FAKE_NVCC_EXIT=42 expect_rc 42 "$CVM" exec nvcc
expect_rc 127 "$CVM" exec nosuchcmd
assert_eq "$(wc -l <<<"$ERR")" "1" "one line for a missing program"

echo "cli_exec_use: ok"
