#!/usr/bin/env bash
# Shims never break a command: with nothing selected, `system` selected, or a program the
# selection lacks, a shim runs the next program of its name on PATH with the same argv,
# environment and exit code; stale shims of the machine's own programs (ls, git, python3, gcc)
# do no harm and `rehash` removes them; two copies of cvm-shim on PATH never loop.
source "$(dirname "$0")/lib.sh"

T=$TEST_TMP
make_toolkit "$T/cuda-11.2" 11.2.2
make_toolkit "$T/cuda-12.4" 12.4.1
make_toolkit "$T/cuda-12.0" 12.0.0
rm "$T/cuda-12.0/bin/nvcc" # a toolkit without nvcc (only ptxas)
printf '#!/bin/sh\necho "ncu of 12.4"\n' >"$T/cuda-12.4/bin/ncu"
# Wrappers of the host compiler, as Debian's /usr/lib/nvidia-cuda-toolkit/bin has: never shims.
for c in gcc g++; do printf '#!/bin/sh\necho "toolkit %s wrapper"\n' "$c" >"$T/cuda-11.2/bin/$c"; done
chmod +x "$T/cuda-12.4/bin/ncu" "$T/cuda-11.2/bin/gcc" "$T/cuda-11.2/bin/g++"
for d in cuda-11.2 cuda-12.4 cuda-12.0; do expect_rc 0 "$CVM" import "$T/$d"; done
S=$CVM_ROOT/shims
[[ -L $S/nvcc && -L $S/ptxas && -L $S/ncu ]] || fail "import did not make the shims"
[[ ! -e $S/gcc && ! -e $S/g++ ]] || fail "a host compiler got a shim"

# Stale shims from an older rehash: links to the launcher under the machine's programs' names.
shim=$(readlink "$S/nvcc")
for n in ls git python3 gcc; do ln -s "$shim" "$S/$n"; done

# The machine's nvcc: Debian's packaged CUDA in /usr/bin where installed, else a fake one in a
# folder late on PATH.
later=$T/later
mkdir -p "$later"
if [[ -x /usr/bin/nvcc ]] && /usr/bin/nvcc --version 2>/dev/null | grep -q 'Cuda compilation tools'; then
    sys_nvcc=/usr/bin/nvcc
else
    printf '#!/bin/sh\necho "Cuda compilation tools, the machine'"'"'s own"\n[ "$1" = --version ] && exit 0\nexit 1\n' >"$later/nvcc"
    chmod +x "$later/nvcc"
    sys_nvcc=$later/nvcc
fi
export PATH="$S:/usr/local/bin:/usr/bin:/bin:$later"

# same_as_real NAME ARGS...: the shim of NAME and the real program give the same output and exit code.
same_as_real() {
    local name=$1; shift
    local real want_out want_rc=0 got_rc=0
    real=$(PATH=${PATH#"$S:"} command -v "$name") || fail "no real $name on PATH"
    [[ $(command -v "$name") == "$S/$name" ]] || fail "$name is not the shim on PATH"
    # Both by name, so both see the same argv[0].
    want_out=$(PATH=${PATH#"$S:"} "$name" "$@" 2>&1) || want_rc=$?
    got_out=$("$name" "$@" 2>&1) || got_rc=$?
    [[ $got_rc == "$want_rc" ]] || fail "$where: $name $*: exit $got_rc through the shim, $want_rc from $real; output: $got_out"
    assert_eq "$got_out" "$want_out" "$where: $name $* through the shim"
}

mkdir -p "$T/none" "$T/sys" "$T/old" "$T/no-nvcc"
echo system >"$T/sys/.cudaversion"
echo 11.2 >"$T/old/.cudaversion"
echo 12.0 >"$T/no-nvcc/.cudaversion"
for where in none sys old no-nvcc; do
    cd "$T/$where"
    same_as_real ls "$T/$where" -a
    same_as_real ls "$T/missing" # exit 2
    same_as_real git --version
    same_as_real python3 -c 'print(1)'
    same_as_real python3 -c 'import sys; sys.exit(7)'
    # The environment is the caller's: no selection is applied on the way through.
    same_as_real python3 -c 'import os, sys; print(os.environ.get("CVM_ACTIVE"), os.environ.get("CUDA_PATH"), sys.argv)'
    if command -v gcc >/dev/null; then same_as_real gcc --version; fi
done
# nvcc falls through where nothing or `system` is selected, with its arguments and exit code.
for where in none sys; do
    cd "$T/$where"
    expect_rc 0 "$S/nvcc" --version
    assert_contains "$OUT" "Cuda compilation tools"
    same_as_real nvcc
done
# A selection whose toolkit has nvcc runs that one; one that lacks it names those that have it.
cd "$T/old"
expect_rc 0 nvcc --version
assert_contains "$OUT" "fake nvcc 11.2.2"
cd "$T/no-nvcc"
expect_rc 127 nvcc --version
assert_contains "$ERR" "nvcc is not part of CUDA 12.0.0"
assert_contains "$ERR" "12.4.1, 11.2.2"
assert_contains "$ERR" "cvm use SPEC"
cd "$T/old"
expect_rc 127 ncu
assert_contains "$ERR" "ncu is not part of CUDA 11.2.2"
assert_contains "$ERR" "12.4.1"
[[ $ERR != *$'\n'* ]] || fail "more than one line: $ERR"
expect_rc 0 "$CVM" which ls
assert_eq "$OUT" "$(PATH=${PATH#"$S:"} command -v ls)"
# A selection of something not installed: 127 and what to run, never the machine's nvcc.
cd "$T/none"
CVM_VERSION=10.2 expect_rc 127 nvcc --version
assert_contains "$ERR" "cvm install 10.2"

# rehash removes the stale shims and never makes host compilers' ones.
expect_rc 0 "$CVM" rehash
assert_contains "$ERR" "4 removed"
for n in ls git python3 gcc g++; do [[ ! -e $S/$n ]] || fail "rehash left $S/$n"; done
[[ -L $S/nvcc && -L $S/ncu ]] || fail "rehash removed a CUDA program's shim"

# Two copies of cvm-shim on PATH under one name (copied, not linked), nothing selected: 127 and
# a message, never a loop. First a link in the shims folder and a copy elsewhere...
cd "$T/none"
mkdir -p "$T/copy1" "$T/copy2"
ln -s "$shim" "$S/cvmloop"
cp "$shim" "$T/copy1/cvmloop"
PATH="$S:$T/copy1:/usr/bin:/bin" expect_rc 127 timeout 60 "$S/cvmloop"
assert_contains "$ERR" "cvmloop is not on PATH outside cvm's shims"
# ...then two copies outside the shims folder, which see each other as the next program.
cp "$shim" "$T/copy2/cvmloop"
PATH="$T/copy1:$T/copy2:/usr/bin:/bin" expect_rc 127 timeout 60 "$T/copy1/cvmloop"
assert_contains "$ERR" "cvm shims ran each other through PATH"
# The marker set for another process (a fallen-through git whose hook runs git) counts nothing.
rm "$S/cvmloop"
ln -s "$shim" "$S/ls"
where=marker CVM_SHIM_DEPTH=9:1 same_as_real ls /
echo "shim_fallthrough: ok"
