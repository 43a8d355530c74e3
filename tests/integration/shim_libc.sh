#!/usr/bin/env bash
# The shim's static build against musl (shims/CMakeLists.txt): where musl is installed (CI installs
# it: scripts/deps.sh), the shim must be that build and not glibc's, and what musl changes under
# GCC's own libstdc++ must work through it: C++ exceptions (the unwinder finds its tables through
# glibc_abi.c's _dl_find_object), toml++ reading a float (std::from_chars, no C++ locale), the
# user database (getpwuid) and the environment handed to the tool.
source "$(dirname "$0")/lib.sh"

SHIM=$CVM_BIN/cvm-shim
file -L "$SHIM" | grep -q 'statically linked' ||
    skip "this build's shim is not static (a sanitizer build links it dynamically)"
if [[ -f /usr/lib/x86_64-linux-musl/libc.a && $(uname -m) == x86_64 ]]; then
    # glibc's start files put an ABI note (NT_GNU_ABI_TAG) into every program; musl's do not.
    # (Each output whole before grep -q: leaving early could kill the writer and hide a match.)
    if grep -q NT_GNU_ABI_TAG <<<"$(readelf -n "$SHIM")"; then
        fail "musl is installed but $SHIM was linked against glibc (CVM_SHIM_MUSL=OFF?)"
    fi
    # The CPU-feature probing of glibc's static start-up is what the musl build avoids.
    if grep -q -E ' (init_cpu_features|handle_amd|handle_intel)' <<<"$(nm "$SHIM")"; then
        fail "$SHIM carries glibc's start-up"
    fi
else
    echo "musl is not installed here: checking the glibc build of the shim"
fi

T=$TEST_TMP
make_toolkit "$T/cuda-12.4" 12.4.1
expect_rc 0 "$CVM" import "$T/cuda-12.4"
mkdir -p "$T/proj/deep/er"
(cd "$T/proj" && expect_rc 0 "$CVM" use 12.4)
cd "$T/proj/deep/er"

# The tool runs with the selection's environment and its own arguments.
expect_rc 0 "$CVM_ROOT/shims/nvcc" -o out "a b.cu"
assert_contains "$OUT" "fake nvcc 12.4.1"
assert_contains "$OUT" "args=-o out a b.cu"
assert_contains "$OUT" "CUDA_PATH=$T/cuda-12.4" "CUDA_PATH through the shim"
assert_contains "$OUT" "LD_LIBRARY_PATH=$T/cuda-12.4/lib64"
assert_contains "$OUT" "PATH=$T/cuda-12.4/bin:"
assert_contains "$OUT" "CVM_ACTIVE=12.4.1"

# Exceptions thrown deep in the core and caught in main: a bad spec (exit 2) and a selection
# that names nothing installed (exit 127), each with its one line.
CVM_VERSION='12.4 x' expect_rc 2 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$ERR" "CVM_VERSION: '12.4 x' is not a version spec"
CVM_VERSION=11.8 expect_rc 127 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$ERR" "CUDA 11.8 is not installed; run \`cvm install 11.8\`"

# A config file with a float in it: toml++ reads it (from_chars), then cvm refuses the unknown
# setting with an exception that names the file and line.
mkdir -p "$(dirname "$CVM_CONFIG")"
printf 'store_path = []\nratio = 2.5e-1\n' >"$CVM_CONFIG"
expect_rc 2 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$ERR" "$CVM_CONFIG:2: unknown setting 'ratio'"
# A well-formed one with a second store layer, whose toolkit the shim then runs.
make_toolkit "$T/cuda-11.8" 11.8.0
rm "$CVM_CONFIG"
CVM_ROOT=$T/shared expect_rc 0 "$CVM" import "$T/cuda-11.8"
printf 'store_path = ["%s"]\n' "$T/shared" >"$CVM_CONFIG"
CVM_VERSION=11.8 expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
assert_contains "$OUT" "fake nvcc 11.8.0"

# A group-writable store folder: allowed only when the group is the user's own private group,
# which the shim asks the user database about (getpwuid, getgrgid): root's group root is
# accepted, nogroup refused.
if [[ $(id -u) == 0 ]] && getent group nogroup >/dev/null && [[ -z $(getent group root | cut -d: -f4) ]]; then
    chmod g+w "$CVM_ROOT/cuda"
    chgrp root "$CVM_ROOT/cuda"
    expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
    chgrp nogroup "$CVM_ROOT/cuda"
    expect_rc 2 "$CVM_ROOT/shims/nvcc" --version
    assert_contains "$ERR" "refusing the store folder $CVM_ROOT/cuda: the folder is writable by its group"
    chmod g-w "$CVM_ROOT/cuda"
    expect_rc 0 "$CVM_ROOT/shims/nvcc" --version
fi
echo "ok"
