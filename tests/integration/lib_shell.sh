# Helpers for the shell activation tests (sourced after lib.sh): a store under a hostile path,
# two imported toolkits, a cuDNN build, another toolkit that is not imported, and a PATH that
# holds all of them.
#
# The suites run a REAL shell on a driver script; the driver dumps its environment with
# `env -0` at each step into $OUTD, and the checks below compare the dumps byte for byte.

# Spaces, both quotes, $, %, ^, &, !, a backtick and non-ASCII letters.
HOSTILE="$TEST_TMP/my dir 'q' \"d\" \$HOME %PATH% ^&! \`tick\` ünï"
mkdir -p "$HOSTILE"
export CVM_ROOT="$HOSTILE/root"
TK_A="$HOSTILE/cuda-11.2"
TK_B="$HOSTILE/cuda-12.4"
CUDNN_B="$HOSTILE/cudnn-linux-x86_64-9.1.0.70_cuda12-archive"
OTHER="$HOSTILE/other/cuda-10.0" # on PATH, never imported: found by its nvcc
KEEP="$HOSTILE/keep me"          # an ordinary folder that must stay on PATH
make_toolkit "$TK_A" 11.2.2
make_toolkit "$TK_B" 12.4.1
make_toolkit "$OTHER" 10.0.130
make_cudnn "$CUDNN_B" 9.1.0
mkdir -p "$KEEP"
"$CVM" import "$TK_A" 2>/dev/null || fail "cvm import $TK_A failed"
"$CVM" import "$TK_B" 2>/dev/null || fail "cvm import $TK_B failed"
"$CVM" import "$CUDNN_B" 2>/dev/null || fail "cvm import $CUDNN_B failed"

OUTD="$TEST_TMP/out"
mkdir -p "$OUTD"

# The environment every driver starts from. PATH holds the shims (stay), another toolkit (goes),
# a folder under the store (goes), an imported toolkit that is not selected (goes), an ordinary
# folder (stays), an empty entry (dropped) and a trailing slash (kept as written).
ORIG_PATH="$CVM_ROOT/shims:$OTHER/bin:$CVM_ROOT/views/gone/bin:$TK_B/bin:$KEEP::/usr/bin:/bin/"
ORIG_CUDA_PATH="orig 'x' \$y \"z\" %q% ^&! ü"
ORIG_CUDNN_PATH="$HOSTILE/orig cudnn"
# set_expectations [EMPTY]: fish turns the empty entry into "." when it starts, which then stays.
set_expectations() {
    local dot=${1:-}
    SEEN_PATH=$ORIG_PATH
    [[ -z $dot ]] || SEEN_PATH="${ORIG_PATH/::/:$dot:}"
    EXPECT_PATH_A="$TK_A/bin:$CVM_ROOT/shims:$KEEP:${dot:+$dot:}/usr/bin:/bin/"
    EXPECT_PATH_B="$CVM_ROOT/views/12.4.1+9.1.0.70-cuda12/bin:$CVM_ROOT/shims:$KEEP:${dot:+$dot:}/usr/bin:/bin/"
}
set_expectations

# run_driver SHELL_BINARY ARGS... DRIVER: runs the driver in a clean, known environment.
run_driver() {
    local driver=${*: -1}
    local -a shell_cmd=("${@:1:$#-1}")
    (
        cd "$HOSTILE"
        env -i HOME="$HOME" TERM=dumb LANG=C.UTF-8 LC_ALL=C.UTF-8 \
            PATH="$ORIG_PATH" CVM_ROOT="$CVM_ROOT" CVM="$CVM" OUTD="$OUTD" SHELL="${shell_cmd[0]}" \
            SHELL_BIN="${shell_cmd[0]}" HOSTILE_DIR="$HOSTILE" \
            CUDA_PATH="$ORIG_CUDA_PATH" CUDA_HOME= CUDNN_PATH="$ORIG_CUDNN_PATH" \
            XDG_CONFIG_HOME="$TEST_TMP/config" XDG_DATA_HOME="$TEST_TMP/data" \
            "${shell_cmd[@]}" "$driver"
    ) > "$OUTD/driver.log" 2>&1 || fail "the driver failed under ${shell_cmd[*]}: $(cat "$OUTD/driver.log")"
}

# env_get FILE NAME: prints NAME's value from an `env -0` dump; status 1 when it is not there.
env_get() {
    local entry
    while IFS= read -r -d '' entry; do
        if [[ $entry == "$2="* ]]; then
            printf '%s' "${entry#"$2="}"
            return 0
        fi
    done < "$1"
    return 1
}

assert_var() { # FILE NAME EXPECTED
    local value
    value=$(env_get "$OUTD/$1" "$2"; printf x) || true
    env_get "$OUTD/$1" "$2" > /dev/null || fail "$1: $2 is unset, expected [$3]"
    assert_eq "${value%x}" "$3" "$1: $2"
}

assert_unset() { # FILE NAME
    if env_get "$OUTD/$1" "$2" > /dev/null; then
        fail "$1: $2 should be unset, it is [$(env_get "$OUTD/$1" "$2")]"
    fi
}

# Same variables with the same bytes, apart from what the shell itself keeps changing.
assert_same_env() { # FILE_A FILE_B
    local a b
    a=$(grep -zv -e '^_=' -e '^SHLVL=' "$OUTD/$1" | sort -z | od -An -c)
    b=$(grep -zv -e '^_=' -e '^SHLVL=' "$OUTD/$2" | sort -z | od -An -c)
    if [[ "$a" != "$b" ]]; then
        diff <(grep -zv -e '^_=' -e '^SHLVL=' "$OUTD/$1" | sort -z | tr '\0' '\n') \
             <(grep -zv -e '^_=' -e '^SHLVL=' "$OUTD/$2" | sort -z | tr '\0' '\n') >&2 || true
        fail "$2 differs from $1"
    fi
}

# The checks every shell suite shares (the drivers write the same dumps).
check_activation_dumps() {
    local view
    assert_var before PATH "$SEEN_PATH"
    assert_var before CUDA_PATH "$ORIG_CUDA_PATH"
    assert_var before CUDA_HOME ""
    assert_unset before LD_LIBRARY_PATH

    # a1: `cvm env` for 11.2 (shell detected from SHELL).
    assert_var a1 CUDA_PATH "$TK_A"
    assert_var a1 CUDA_HOME "$TK_A"
    assert_var a1 CUDA_PATH_V11_2 "$TK_A"
    assert_unset a1 CUDNN_PATH
    assert_var a1 CVM_ACTIVE 11.2.2
    assert_var a1 PATH "$EXPECT_PATH_A"
    assert_var a1 LD_LIBRARY_PATH "$TK_A/lib64"
    # What build systems read: the toolkit's nvcc, headers and libraries, no cuDNN of another's.
    assert_var a1 CUDACXX "$TK_A/bin/nvcc"
    assert_var a1 CPATH "$TK_A/include"
    assert_var a1 LIBRARY_PATH "$TK_A/lib64"
    assert_unset a1 CUDNN_ROOT
    assert_unset a1 CUDNN_INCLUDE_DIR
    assert_var a1 _CVM_OLD_PATH "$SEEN_PATH"
    assert_var a1 _CVM_OLD_CUDA_PATH "$ORIG_CUDA_PATH"
    assert_unset a1 _CVM_OLD_LD_LIBRARY_PATH
    assert_contains "$(cat "$OUTD/nvcc_a")" "CUDA_PATH=$TK_A"$'\n'
    assert_contains "$(cat "$OUTD/nvcc_a")" "self=$TK_A/bin/nvcc"
    # a2: the same again keeps the first saved state.
    assert_same_env a1 a2

    # b: switching to 12.4 + cuDNN 9 undoes 11.2 (CUDA_PATH_V11_2 goes) and keeps the state.
    view=$(env_get "$OUTD/b" CUDA_PATH) || fail "b: CUDA_PATH unset"
    assert_eq "$view" "$CVM_ROOT/views/12.4.1+9.1.0.70-cuda12" "b: CUDA_PATH is the merged view"
    [[ -e "$view/include/cudnn.h" && -e "$view/include/cuda.h" ]] || fail "the view lacks cudnn.h or cuda.h"
    assert_var b CUDA_HOME "$view"
    assert_var b CUDA_PATH_V12_4 "$view"
    assert_unset b CUDA_PATH_V11_2
    assert_var b CUDNN_PATH "$CUDNN_B"
    assert_var b CVM_ACTIVE 12.4.1+9.1.0.70-cuda12
    assert_var b PATH "$EXPECT_PATH_B"
    assert_var b LD_LIBRARY_PATH "$view/lib64"
    assert_var b LIBRARY_PATH "$view/lib64"
    assert_var b CPATH "$CUDNN_B/include:$view/include"
    assert_var b CUDACXX "$view/bin/nvcc"
    assert_var b CUDNN_ROOT "$CUDNN_B"
    assert_var b CUDNN_INCLUDE_DIR "$view/include"
    assert_var b CUDNN_LIB_DIR "$view/lib64"
    assert_var b _CVM_OLD_PATH "$SEEN_PATH"
    assert_var b _CVM_OLD_CUDNN_PATH "$ORIG_CUDNN_PATH"
    assert_contains "$(cat "$OUTD/nvcc_b")" "CUDA_PATH=$view"$'\n'
    # nvcc runs as the view's (it takes its include and library folders from there).
    assert_contains "$(cat "$OUTD/nvcc_b")" "self=$view/bin/nvcc"

    # cvm_deactivate restores every byte, unsets what was unset, and removes itself.
    assert_same_env before after
    [[ ! -e "$OUTD/func_left" ]] || fail "cvm_deactivate is still defined after running it"
    # `cvm deactivate` in a child shell that inherited the activation restores it too.
    assert_same_env before child_after

    # `system` selected: cvm env undoes the activation.
    assert_same_env before after_system

    # The standalone script, without cvm: same result as cvm env.
    assert_var s1 CUDA_PATH "$TK_A"
    assert_var s1 CUDA_PATH_V11_2 "$TK_A"
    assert_unset s1 CUDNN_PATH
    assert_var s1 CVM_ACTIVE 11.2.2
    assert_var s1 PATH "$EXPECT_PATH_A"
    assert_var s1 LD_LIBRARY_PATH "$TK_A/lib64"
    assert_var s1 CPATH "$TK_A/include"
    assert_var s1 LIBRARY_PATH "$TK_A/lib64"
    assert_var s1 CUDACXX "$TK_A/bin/nvcc"
    assert_contains "$(cat "$OUTD/nvcc_s")" "CUDA_PATH=$TK_A"$'\n'
    assert_same_env before after_s
    # The script after `cvm env 12.4+9`: it undoes that activation first.
    assert_same_env s1 s2
    assert_same_env before after_s2
}

mkdir -p "$HOSTILE/proj"
printf '# the project toolkit\n11.2\n' > "$HOSTILE/proj/.cudaversion"
mkdir -p "$HOSTILE/sys"
printf 'system\n' > "$HOSTILE/sys/.cudaversion"

# The driver for bash and zsh ($1: bash or zsh). It runs with nounset on.
write_posix_driver() {
    local sh=$1
    cat <<EOS
set -u
env -0 > "\$OUTD/before"
code=\$(env -C "\$HOSTILE_DIR/proj" "\$CVM" env) || exit 9
eval "\$code"
env -0 > "\$OUTD/a1"
nvcc > "\$OUTD/nvcc_a"
code=\$("\$CVM" env --shell $sh 11.2) || exit 9
eval "\$code"
env -0 > "\$OUTD/a2"
code=\$("\$CVM" env --shell $sh 12.4+9) || exit 9
eval "\$code"
env -0 > "\$OUTD/b"
nvcc > "\$OUTD/nvcc_b"
"\$SHELL_BIN" -c 'eval "\$("\$CVM" deactivate --shell $sh)"; env -0 > "\$OUTD/child_after"'
cvm_deactivate
env -0 > "\$OUTD/after"
if type cvm_deactivate > /dev/null 2>&1; then echo defined > "\$OUTD/func_left"; fi
eval "\$("\$CVM" env --shell $sh 11.2)"
code=\$(env -C "\$HOSTILE_DIR/sys" "\$CVM" env --shell $sh) || exit 9
eval "\$code"
env -0 > "\$OUTD/after_system"
. "\$OUTD/act.$sh"
env -0 > "\$OUTD/s1"
nvcc > "\$OUTD/nvcc_s"
cvm_deactivate
env -0 > "\$OUTD/after_s"
eval "\$("\$CVM" env --shell $sh 12.4+9)"
. "\$OUTD/act.$sh"
env -0 > "\$OUTD/s2"
cvm_deactivate
env -0 > "\$OUTD/after_s2"
EOS
}
