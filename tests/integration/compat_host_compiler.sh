#!/usr/bin/env bash
# host_compiler = "auto": a toolkit whose nvcc refuses the machine's gcc gets a supported
# installed compiler through the shim (-ccbin, or NVCC_CCBIN for an nvcc that reads it), never
# over the user's own choice; `cvm doctor` names the problem. Fake compilers print real banners;
# Debian's real CUDA 11.8 with gcc 12 and clang 14 is compiled with where installed.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
cc=$T/cc
mkdir -p "$cc"
fake_cc() { # fake_cc NAME BANNER...
    local name=$1; shift
    { echo '#!/bin/sh'; echo '[ "$1" = --version ] || exit 3'; echo "cat <<'EOS'"; printf '%s\n' "$@"; echo EOS; } > "$cc/$name"
    chmod +x "$cc/$name"
}
fake_cc gcc "gcc (GCC) 14.2.0" "Copyright (C) 2024 Free Software Foundation, Inc."
fake_cc g++-11 "g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0" "Copyright (C) 2021 Free Software Foundation, Inc."
fake_cc g++-13 "g++ (GCC) 13.3.0" "Copyright (C) 2023 Free Software Foundation, Inc."
fake_cc clang++-19 "Ubuntu clang version 19.1.1 (1ubuntu1)" "Target: x86_64-pc-linux-gnu"

# host_config.h with the checks of CUDA 11.8 (gcc up to 11, clang up to 14).
host_config() {
    mkdir -p "$1/include/crt"
    printf '%s\n' '#if defined(__GNUC__)' '#if __GNUC__ > 11' '#error -- unsupported GNU version!' '#endif' \
        '#if defined(__clang__) && !defined(__ibmxl_vrm__) && !defined(__ICC) && !defined(__HORIZON__) && !defined(__APPLE__)' \
        '#if (__clang_major__ >= 15) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))' \
        '#error -- unsupported clang version!' '#endif' '#endif' '#endif' > "$1/include/crt/host_config.h"
}
make_toolkit "$T/tk118" 11.8.0
host_config "$T/tk118"
make_toolkit "$T/tk124" 12.4.1
# This nvcc reads NVCC_CCBIN (its program holds the name, as NVIDIA's does from 12.0 on).
cat >> "$T/tk124/bin/nvcc" <<'EOS'
# NVCC_CCBIN
EOS
# Both print the host compiler variables they get (the pattern keeps 11.8's program free of the name).
sed -i 's/^exit /env | grep -E "^(NVCC_|CUDAHOSTC)" || true; exit /' "$T/tk118/bin/nvcc" "$T/tk124/bin/nvcc"

export PATH="$CVM_ROOT/shims:$cc:/usr/bin:/bin"
expect_rc 0 "$CVM" import "$T/tk118"
expect_rc 0 "$CVM" import "$T/tk124"
mkdir -p "$T/p118" "$T/p124"

cd "$T/p118"
expect_rc 0 "$CVM" use 11.8
assert_contains "$ERR" "host compiler: $cc/g++-11 is handed to nvcc (-ccbin, CUDAHOSTCXX): gcc 14.2.0 ($cc/gcc, PATH) is newer than CUDA 11.8.0 supports (gcc up to 11, clang 3.3 to 14)"
expect_rc 0 nvcc -c x.cu
assert_contains "$OUT" "args=-ccbin $cc/g++-11 -c x.cu"
assert_contains "$OUT" "CUDAHOSTCXX=$cc/g++-11"
assert_not_contains "$OUT" "NVCC_CCBIN="
assert_not_contains "$OUT" "NVCC_PREPEND_FLAGS=" # nvcc refuses a second -ccbin there
# The user's own choice always wins, wherever it is made (the environment is the selection's all
# the same: CUDAHOSTCXX is for CMake, nvcc reads the command line).
expect_rc 0 nvcc -ccbin clang++-19 -c x.cu
assert_contains "$OUT" "args=-ccbin clang++-19 -c x.cu"
# A NVCC_CCBIN of the user's is their choice too; this nvcc does not read it, so it is passed on.
expect_rc 0 env NVCC_CCBIN=clang++-19 nvcc -c x.cu
assert_contains "$OUT" "args=-ccbin clang++-19 -c x.cu"

# Outside the shim: the toolkit has a view of its own whose nvcc is cvm's, so `$CUDA_HOME/bin/nvcc`
# (a Makefile) and a typed nvcc in an activated shell get the compiler too, and the real nvcc is
# started as the view's (nvcc takes its folders from the path it was started by).
view=$CVM_ROOT/views/11.8.0
[[ -L $view/bin/nvcc && $(readlink -f "$view/bin/nvcc") == "$(readlink -f "$CVM_BIN/cvm-shim")" ]] ||
    fail "the view's nvcc of 11.8 is not cvm's shim: $(ls -l "$view/bin/nvcc" 2>&1)"
printf '#include <stdio.h>\nint main(int c, char **v) { printf("argv0=%%s args=", v[0]); for (int i = 1; i < c; i++) printf("%%s ", v[i]); printf("\\n"); return 0; }\n' > "$T/argv.c"
cc -o "$T/argv" "$T/argv.c" || fail "cannot build the argv printer"
cp "$T/tk118/bin/nvcc" "$T/nvcc-script"
cp "$T/argv" "$T/tk118/bin/nvcc"
expect_rc 0 "$CVM" exec -- sh -c '"$CUDA_HOME/bin/nvcc" -c x.cu'
assert_contains "$OUT" "argv0=$view/bin/nvcc args=-ccbin $cc/g++-11 -c x.cu"
expect_rc 0 bash --norc -c 'eval "$("$0" env --shell bash)"; PATH=${PATH//$CVM_ROOT\/shims:/}; nvcc -c x.cu; echo "CUDA_HOME=$CUDA_HOME CUDACXX=$CUDACXX CUDAHOSTCXX=$CUDAHOSTCXX"' "$CVM"
assert_contains "$OUT" "args=-ccbin $cc/g++-11 -c x.cu"
assert_contains "$OUT" "CUDA_HOME=$view CUDACXX=$view/bin/nvcc CUDAHOSTCXX=$cc/g++-11"
# The shim starts the real nvcc as the view's too.
expect_rc 0 nvcc -c x.cu
assert_contains "$OUT" "argv0=$view/bin/nvcc args=-ccbin $cc/g++-11 -c x.cu"
# A user's -ccbin wins there as well.
expect_rc 0 "$CVM" exec -- sh -c '"$CUDA_HOME/bin/nvcc" -ccbin /opt/cc -c x.cu'
assert_contains "$OUT" "args=-ccbin /opt/cc -c x.cu"
cp "$T/nvcc-script" "$T/tk118/bin/nvcc"
expect_rc 0 nvcc --compiler-bindir=/opt/cc -c x.cu
assert_contains "$OUT" "args=--compiler-bindir=/opt/cc -c x.cu"
expect_rc 0 env NVCC_PREPEND_FLAGS="-O2 -ccbin clang++-19" nvcc -c x.cu
assert_contains "$OUT" "args=-c x.cu"
expect_rc 0 env CVM_HOST_COMPILER=off nvcc -c x.cu
assert_contains "$OUT" "args=-c x.cu"
# A choice file another user could have written names nothing the shim runs: nvcc gets no -ccbin.
choice="$CVM_ROOT/cache/host-compiler/11.8.0"
[[ -f $choice ]] || fail "no cached host compiler choice at $choice"
chmod o+w "$choice"
expect_rc 0 nvcc -c x.cu
assert_contains "$OUT" "args=-c x.cu"
assert_contains "$ERR" "$choice"
chmod o-w "$choice"
# `cvm current` says so, once, from what `cvm use` kept (it runs no compiler); --json names it.
expect_rc 0 env PATH=/nowhere "$CVM" current
assert_contains "$OUT" "host compiler: $cc/g++-11 is handed to nvcc"
expect_rc 0 "$CVM" current --json
assert_contains "$OUT" "\"ccbin\": \"$cc/g++-11\""
# doctor: a note when cvm hands one over; an error naming the place for the user's unsupported one.
"$CVM" doctor --json > "$T/doc.json" 2>/dev/null || true # the fake toolkit has other problems
assert_contains "$(cat "$T/doc.json")" '"code": "host-compiler-auto"'
assert_not_contains "$(cat "$T/doc.json")" 'host-compiler-unsupported'
rc=0; NVCC_APPEND_FLAGS="-ccbin clang++-19" "$CVM" doctor > "$T/doc.txt" 2>&1 || rc=$?
[[ $rc == 1 ]] || fail "doctor with an unsupported -ccbin in NVCC_APPEND_FLAGS exited $rc"
doc=$(cat "$T/doc.txt")
assert_contains "$doc" "clang 19.1.1 ($cc/clang++-19, NVCC_APPEND_FLAGS) is newer than CUDA 11.8.0 supports"
assert_contains "$doc" "[host-compiler-unsupported]"
assert_contains "$doc" "fix: name a supported compiler in NVCC_APPEND_FLAGS"

# An nvcc that reads NVCC_CCBIN gets it there, and a command-line -ccbin still overrides it.
cd "$T/p124"
expect_rc 0 "$CVM" use 12.4
assert_contains "$ERR" "(NVCC_CCBIN, CUDAHOSTCXX)"
expect_rc 0 nvcc -c x.cu
assert_contains "$OUT" "args=-c x.cu"
assert_contains "$OUT" "NVCC_CCBIN=$cc/g++-13"
assert_not_contains "$OUT" "NVCC_PREPEND_FLAGS="
expect_rc 0 nvcc -ccbin clang++-19 -c x.cu
assert_contains "$OUT" "args=-ccbin clang++-19 -c x.cu"
# The user's own NVCC_CCBIN is kept, and cvm's CUDAHOSTCXX goes (it is their choice).
expect_rc 0 env NVCC_CCBIN=/opt/mine/g++ nvcc -c x.cu
assert_contains "$OUT" "NVCC_CCBIN=/opt/mine/g++"
assert_not_contains "$OUT" "CUDAHOSTCXX="

# host_compiler = "off" in the config: after `cvm rehash` the shim hands nothing over.
mkdir -p "$(dirname "$CVM_CONFIG")"
echo 'host_compiler = "off"' > "$CVM_CONFIG"
expect_rc 0 "$CVM" rehash
[[ ! -e $CVM_ROOT/cache/host-compiler/12.4.1 ]] || fail "the cached choice outlived host_compiler = off"
expect_rc 0 nvcc -c x.cu
assert_not_contains "$OUT" "NVCC_CCBIN="
"$CVM" doctor > "$T/doc.txt" 2>&1 || true
assert_contains "$(cat "$T/doc.txt")" 'so that cvm hands nvcc'
assert_contains "$(cat "$T/doc.txt")" '[host-compiler-unsupported]'
echo 'host_compiler = "sometimes"' > "$CVM_CONFIG"
expect_rc 2 "$CVM" current
assert_contains "$ERR" 'host_compiler must be "auto" or "off"'
rm "$CVM_CONFIG"

# With nothing supported installed, cvm says what to install.
rm "$cc/g++-11" "$cc/g++-13"
cd "$T/p118"
# Packages are named only where the distribution has them (apt-cache policy; a stand-in here).
cat > "$T/apt-cache" <<'EOS'
#!/bin/sh
shift
for p in "$@"; do
    case $p in g++-11|clang-14|clang-13) c=1.0-1 ;; *) c='(none)' ;; esac
    printf '%s:\n  Installed: (none)\n  Candidate: %s\n' "$p" "$c"
done
EOS
chmod +x "$T/apt-cache"
expect_rc 0 env PATH="$cc" CVM_APT_CACHE="$T/apt-cache" "$CVM" use 11.8 # only the fake compilers: the machine's may fit
assert_contains "$ERR" "no installed compiler fits: install a supported compiler, e.g. g++-11 (apt install g++-11) or clang-14 (apt install clang-14)"
# A distribution without any of them (Debian 12 for CUDA 11.2): the versions only.
printf '#!/bin/sh\nshift\nfor p; do printf "%%s:\\n  Candidate: (none)\\n" "$p"; done\n' > "$T/apt-cache"
expect_rc 0 env PATH="$cc" CVM_APT_CACHE="$T/apt-cache" "$CVM" rehash
expect_rc 0 env PATH="$cc" CVM_APT_CACHE="$T/apt-cache" "$CVM" current
assert_not_contains "$ERR$OUT" "apt install"
expect_rc 0 nvcc -c x.cu
assert_contains "$OUT" "args=-c x.cu"

# No compiler at all: a machine that runs programs; doctor notes it and stays healthy about it.
CVM_COMPILER_PATH=/nowhere "$CVM" doctor --json > "$T/none.json" 2>/dev/null || true
assert_contains "$(cat "$T/none.json")" '"code": "host-compiler-missing"'
assert_not_contains "$(cat "$T/none.json")" 'host-compiler-unsupported'

# The real thing: Debian's CUDA 11.8 refuses its gcc 12; through the shim it compiles with clang 14.
deb=/usr/lib/nvidia-cuda-toolkit
if [[ -x $deb/bin/nvcc && -x /usr/bin/clang++-14 ]] && ! /usr/bin/g++-11 --version >/dev/null 2>&1; then
    rm -rf "$CVM_ROOT"
    export PATH="$CVM_ROOT/shims:/usr/bin:/bin"
    expect_rc 0 "$CVM" import "$deb"
    mkdir -p "$T/real" && cd "$T/real"
    printf '__global__ void k(int *p) { *p = 1; }\nint main() { k<<<1, 1>>>(nullptr); return 0; }\n' > x.cu
    rc=0; /usr/bin/nvcc -c x.cu 2>/dev/null || rc=$?
    [[ $rc != 0 ]] || fail "Debian's nvcc compiled with gcc 12 unaided; this test expects it to refuse"
    expect_rc 0 "$CVM" use 11.8
    assert_contains "$ERR" "host compiler: /usr/bin/clang++-14 is handed to nvcc (-ccbin, CUDAHOSTCXX)"
    expect_rc 0 nvcc -c x.cu -o auto.o
    [[ -s auto.o ]] || fail "no object from nvcc -c through the shim"
    expect_rc 0 nvcc -ccbin clang-14 -c x.cu -o explicit.o
    [[ -s explicit.o ]] || fail "no object from nvcc -ccbin clang-14 through the shim"
    rc=0; CVM_HOST_COMPILER=off nvcc -c x.cu -o off.o 2>/dev/null || rc=$?
    [[ $rc != 0 ]] || fail "with CVM_HOST_COMPILER=off Debian's nvcc should refuse gcc 12"
fi

# The real CUDA 13.0 nvcc reads NVCC_CCBIN: with a gcc newer than it supports first on PATH, the
# shim hands g++-12 over through NVCC_CCBIN (no -ccbin added), and a command-line -ccbin still wins.
cuda13=/usr/local/cuda-13.0
if [[ -x $cuda13/bin/nvcc && -x /usr/bin/g++-12 ]]; then
    rm -rf "$CVM_ROOT"
    mkdir -p "$T/cc16" "$T/real13"
    for name in gcc g++; do
        printf '#!/bin/sh\necho "%s (GCC) 16.1.0"\necho "Copyright (C) 2026 Free Software Foundation, Inc."\n[ "$1" = --version ] && exit 0\necho "gcc 16 stand-in was run" >&2\nexit 1\n' "$name" > "$T/cc16/$name"
        chmod +x "$T/cc16/$name"
    done
    export PATH="$CVM_ROOT/shims:$T/cc16:/usr/bin:/bin"
    expect_rc 0 "$CVM" import "$cuda13"
    cd "$T/real13"
    printf '__global__ void k(int *p) { *p = 1; }\nint main() { k<<<1, 1>>>(nullptr); return 0; }\n' > x.cu
    rc=0; "$cuda13/bin/nvcc" -c x.cu -o unaided.o 2>/dev/null || rc=$?
    [[ $rc != 0 ]] || fail "CUDA 13.0's nvcc compiled with the gcc 16 stand-in; this test expects it to fail"
    expect_rc 0 "$CVM" use 13.0.2
    assert_contains "$ERR" "host compiler: /usr/bin/g++-12 is handed to nvcc (NVCC_CCBIN, CUDAHOSTCXX): gcc 16.1.0 ($T/cc16/gcc, PATH) is newer than CUDA 13.0.2 supports"
    expect_rc 0 nvcc -c x.cu -o auto.o
    [[ -s auto.o ]] || fail "no object from CUDA 13.0's nvcc through the shim (NVCC_CCBIN)"
    expect_rc 0 nvcc -ccbin /usr/bin/g++-12 -c x.cu -o explicit.o
    [[ -s explicit.o ]] || fail "no object from nvcc -ccbin through the shim"
    # The variable is the shim's, for this nvcc only: `cvm current` says so once.
    expect_rc 0 "$CVM" current
    [[ $(grep -c 'host compiler:' <<< "$OUT") == 1 ]] || fail "cvm current should say the host compiler once: $OUT"
fi
echo "compat_host_compiler: ok"
