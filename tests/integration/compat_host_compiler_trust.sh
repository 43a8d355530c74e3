#!/usr/bin/env bash
# Issue 33, finding 5: cvm runs no program another user could change, and hands none to nvcc.
# A compiler (gcc, g++, clang++-14), python3 or nvidia-smi in a folder owned by another user
# (nobody), or in a folder every user may write, first on PATH, is skipped with a note and never
# run by `cvm use`, `cvm rehash`, `cvm env`, `cvm doctor` or the nvcc shim; and a host compiler
# remembered while its folder was trusted is not handed over once the folder is another user's or
# world-writable.
source "$(dirname "$0")/lib.sh"
[[ $(id -u) == 0 ]] || skip "needs root: a folder is given to nobody"
id nobody >/dev/null 2>&1 || skip "no user nobody"
T=$TEST_TMP
chmod 755 "$T"
marker=$T/ran
: > "$marker"

# fake DIR NAME BANNER...: a program that notes it was run in $marker and prints BANNER.
fake() {
    local dir=$1 name=$2; shift 2
    mkdir -p "$dir"
    { echo '#!/bin/sh'; echo "echo \"\$0 \$*\" >> '$marker'"; echo "cat <<'EOS'"; printf '%s\n' "$@"
      echo EOS; } > "$dir/$name"
    chmod 755 "$dir/$name"
}
# plant DIR: the programs another user would put there.
plant() {
    fake "$1" gcc "gcc (GCC) 11.4.0" "Copyright (C) 2021 Free Software Foundation, Inc."
    fake "$1" g++ "g++ (GCC) 11.4.0" "Copyright (C) 2021 Free Software Foundation, Inc."
    fake "$1" clang++-14 "Ubuntu clang version 14.0.6" "Target: x86_64-pc-linux-gnu"
    fake "$1" python3 "3.11.2"
    fake "$1" nvidia-smi "NVIDIA GeForce RTX 4090, 550.54"
}
# The trusted compiler cvm should hand over instead.
cc=$T/cc
fake "$cc" g++-11 "g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0" "Copyright (C) 2021 Free Software Foundation, Inc."

make_toolkit "$T/tk118" 11.8.0
mkdir -p "$T/tk118/include/crt"
printf '%s\n' '#if defined(__GNUC__)' '#if __GNUC__ > 11' '#error -- unsupported GNU version!' '#endif' \
    '#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__)' \
    '#if (__clang_major__ >= 15) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))' \
    '#error -- unsupported clang version!' '#endif' '#endif' '#endif' > "$T/tk118/include/crt/host_config.h"
sed -i 's/^exit /env | grep -E "^(NVCC_|CUDAHOSTC)" || true; exit /' "$T/tk118/bin/nvcc"
clean_path="$CVM_ROOT/shims:/usr/bin:/bin"
PATH=$clean_path expect_rc 0 "$CVM" import "$T/tk118"
mkdir -p "$T/p"
cd "$T/p"

# ran_from DIR: fails when a program of DIR was run.
not_run_from() {
    if grep -q "^$1/" "$marker"; then fail "cvm ran a program of $1 ($2): $(cat "$marker")"; fi
}

# check_skipped DIR: every command that runs or hands over programs, with DIR first on PATH.
check_skipped() {
    local bad=$1
    export PATH="$CVM_ROOT/shims:$bad:$cc:/usr/bin:/bin"
    expect_rc 0 "$CVM" use 11.8
    not_run_from "$bad" "cvm use"
    assert_contains "$ERR" "$bad/g++" "cvm use does not say that it skipped $bad/g++"
    assert_contains "$ERR" "host compiler: $cc/g++-11 is handed to nvcc"
    assert_not_contains "$ERR" "$bad/g++ is handed"
    expect_rc 0 "$CVM" rehash
    not_run_from "$bad" "cvm rehash"
    expect_rc 0 nvcc -c x.cu
    not_run_from "$bad" "the shim"
    assert_contains "$OUT" "args=-ccbin $cc/g++-11 -c x.cu"
    assert_not_contains "$OUT" "$bad/"
    expect_rc 0 "$CVM" env --shell bash
    assert_contains "$OUT" "CUDAHOSTCXX"
    assert_contains "$OUT" "$cc/g++-11"
    assert_not_contains "$OUT" "$bad/"
    "$CVM" doctor > "$T/doc.txt" 2>&1 || true
    not_run_from "$bad" "cvm doctor"
    "$CVM" doctor --json > "$T/doc.json" 2>/dev/null || true
    not_run_from "$bad" "cvm doctor --json"
    assert_not_contains "$(cat "$T/doc.json")" "\"$bad/g"
    expect_rc 0 "$CVM" current
    assert_not_contains "$OUT" "$bad/g++ is handed"
    export PATH=$clean_path
}

# Another user's folder.
theirs=$T/theirs
plant "$theirs"
chown -R nobody "$theirs"
check_skipped "$theirs"
# A folder every user may write (root's own).
open=$T/open
plant "$open"
chmod 777 "$open"
check_skipped "$open"
# A link to a trusted folder's program, from a trusted folder, that leads through another user's
# folder: as untrusted as the folder.
mkdir -p "$T/links"
ln -s "$theirs/g++" "$T/links/g++"
check_skipped "$T/links"

# A choice remembered while its folder was trusted is checked again when it is used.
later=$T/later
plant "$later"
chmod 755 "$later"
rm -rf "$CVM_ROOT/cache/host-compiler"
PATH="$CVM_ROOT/shims:$later:/usr/bin:/bin" expect_rc 0 "$CVM" use 11.8
# (gcc 11.4 of the trusted folder fits: pretend nvcc's default did not, to have a choice kept.)
keep_later() {
    printf 'ccbin %s\nvia arg\nwhy test\nline host compiler: %s is handed to nvcc (-ccbin, CUDAHOSTCXX): test\n' \
        "$later/g++" "$later/g++" > "$CVM_ROOT/cache/host-compiler/11.8.0"
}
for make_untrusted in "chown nobody $later" "chmod 777 $later" "chmod 777 $later/g++"; do
    chown root "$later"; chmod 755 "$later"; chmod 755 "$later/g++"
    keep_later # (`cvm current` below works the choice out again)
    expect_rc 0 nvcc -c x.cu
    assert_contains "$OUT" "args=-ccbin $later/g++ -c x.cu" "the kept choice of a trusted folder is handed over"
    $make_untrusted
    : > "$marker"
    expect_rc 0 nvcc -c x.cu
    assert_contains "$OUT" "args=-c x.cu" "after $make_untrusted, the shim"
    assert_not_contains "$OUT" "$later/"
    assert_contains "$ERR" "$later/g++"
    expect_rc 0 "$CVM" env --shell bash
    assert_not_contains "$OUT" "$later/" "after $make_untrusted, cvm env"
    assert_contains "$ERR" "$later/g++"
    [[ $(grep -c "$later/g++ is not handed" <<< "$ERR") == 1 ]] || fail "cvm env should warn once: $ERR"
    expect_rc 0 "$CVM" exec -- sh -c 'echo "CUDAHOSTCXX=${CUDAHOSTCXX:-}"'
    assert_not_contains "$OUT" "$later/" "after $make_untrusted, cvm exec"
    expect_rc 0 "$CVM" current
    assert_not_contains "$OUT" "$later/g++ is handed" "after $make_untrusted, cvm current"
    not_run_from "$later" "after $make_untrusted"
done
echo "compat_host_compiler_trust: ok"
