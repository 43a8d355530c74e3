#!/usr/bin/env bash
# Everyday use tells the truth (issue 35, items 3 and 16): `cvm use` (and -g, --for) writes only a
# selection that resolves, as `pyenv local` and `pyenv global` do, unless --install or --force;
# `cvm uninstall` takes a KIND word as `cvm list` does; `-q` leaves out `cvm use`'s reports; and
# `cvm current` with nothing selected says "system", as the shims then run the system's programs.
source "$(dirname "$0")/lib.sh"
T=$TEST_TMP
# The machine: no driver, no GPU, compilers from $T/cc only (one g++ 11 and gcc 14, so that CUDA
# 11.8 gets a host compiler handed over, and says so in one line).
export CVM_PROC_DRIVER_VERSION="$T/proc-driver-version" CVM_NVIDIA_SMI="$T/nvidia-smi" CVM_LIBCUDA=""
export CVM_COMPILER_PATH="$T/cc"
mkdir -p "$T/cc"
fake_cc() { # fake_cc NAME BANNER...
    local name=$1; shift
    { echo '#!/bin/sh'; echo '[ "$1" = --version ] || exit 3'; echo "cat <<'EOS'"; printf '%s\n' "$@"; echo EOS; } > "$T/cc/$name"
    chmod +x "$T/cc/$name"
}
fake_cc gcc "gcc (GCC) 14.2.0" "Copyright (C) 2024 Free Software Foundation, Inc."
fake_cc g++-11 "g++ (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0" "Copyright (C) 2021 Free Software Foundation, Inc."
make_toolkit "$T/tk118" 11.8.0
mkdir -p "$T/tk118/include/crt"
printf '%s\n' '#if defined(__GNUC__)' '#if __GNUC__ > 11' '#error -- unsupported GNU version!' '#endif' '#endif' \
    > "$T/tk118/include/crt/host_config.h"
# A cuDNN for CUDA 12, and no CUDA 12 toolkit.
make_cudnn "$T/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" 9.1.0
export PATH="$CVM_ROOT/shims:$T/cc:/usr/bin:/bin"
expect_rc 0 "$CVM" import "$T/tk118"
expect_rc 0 "$CVM" import "$T/cudnn-linux-x86_64-9.1.0.70_cuda12-archive"
# The hint after it never names a selection that cannot resolve.
assert_contains "$ERR" "next: cvm install 12 (no CUDA 12 toolkit is installed; then cvm use 12+9.1.0.70)"
assert_not_contains "$ERR" "next: cvm use"

mkdir -p "$T/p" && cd "$T/p"

# ---- item 3: what is not installed is refused, exit 1, nothing written, the install named ----
expect_rc 1 "$CVM" use 12
assert_contains "$ERR" "cvm use: nothing written: CUDA 12 is not installed; run \`cvm install 12\`"
assert_contains "$ERR" "\`cvm use --install 12\` installs and selects it, \`cvm use --force 12\` writes it anyway"
[[ ! -e .cudaversion ]] || fail "cvm use 12 wrote .cudaversion: $(cat .cudaversion)"
expect_rc 1 "$CVM" use 12+9.1.0.70
assert_contains "$ERR" "CUDA 12 is not installed; run \`cvm install 12+9.1.0.70\`"
[[ ! -e .cudaversion ]] || fail "cvm use 12+9.1.0.70 wrote .cudaversion"
# A cuDNN the toolkit has none of: the same, naming the whole spec to install.
expect_rc 1 "$CVM" use 11.8+8.9.7
assert_contains "$ERR" "no cuDNN 8.9.7 is installed; run \`cvm install 11.8+8.9.7\`"
# --json: the error document, code not_installed.
expect_rc 1 "$CVM" use 12 --json
assert_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin)["error"]; print(d["code"])' <<<"$OUT")" "not_installed"
# The global default too, as `pyenv global`.
expect_rc 1 "$CVM" use --global 12
assert_contains "$ERR" "\`cvm use --global --force 12\` writes it anyway"
[[ ! -e $CVM_ROOT/version ]] || fail "cvm use -g 12 wrote the global default"
# --force writes it anyway, saying it is not installed; the spec is still checked (exit 2).
expect_rc 0 "$CVM" use --force 12
assert_eq "$(cat .cudaversion)" "12"
assert_contains "$ERR" "wrote 12 in $T/p/.cudaversion; CUDA 12 is not installed"
expect_rc 2 "$CVM" use --force 'garbage;rm'
assert_eq "$(cat .cudaversion)" "12"
expect_rc 2 "$CVM" use --force ''
rm .cudaversion
# What is installed, and system, are written as before.
expect_rc 0 "$CVM" use 11.8
assert_eq "$(cat .cudaversion)" "11.8"
assert_contains "$ERR" "selected 11.8.0 in $T/p/.cudaversion"
assert_contains "$ERR" "host compiler: $T/cc/g++-11 is handed to nvcc"
expect_rc 0 "$CVM" use system
assert_eq "$(cat .cudaversion)" "system"
rm .cudaversion

# `cvm use --for`: its choice, when not installed, is refused the same way (--force writes it).
expect_rc 1 "$CVM" use --for tensorflow==2.10
assert_contains "$ERR" "use --for tensorflow==2.10: nothing written: 11.2.2+8.1.1.33 is the choice, and CUDA 11.2.2 and cuDNN 8.1.1.33-cuda11.2 are not installed"
assert_contains "$ERR" "\`cvm use --for tensorflow==2.10 --install\` installs and selects it"
[[ ! -e .cudaversion ]] || fail "cvm use --for wrote .cudaversion"
expect_rc 0 "$CVM" use --for tensorflow==2.10 --force
assert_eq "$(cat .cudaversion)" "11.2.2+8.1.1.33"
rm .cudaversion

# `cvm shell` refuses the same (it already did): exit 1, nothing printed to evaluate.
expect_rc 1 "$CVM" shell 12 --shell bash
assert_eq "$OUT" ""

# ---- item 16: -q, uninstall KIND, current with nothing selected ----------------------------
# -q: no "selected" line and no host compiler report; a refusal still says why.
expect_rc 0 "$CVM" -q use 11.8
assert_eq "$ERR" ""
expect_rc 0 "$CVM" use -q --unset
assert_not_contains "$ERR" "removed"
[[ ! -e .cudaversion ]] || fail "cvm use -q --unset left .cudaversion"
expect_rc 1 "$CVM" -q use 12
assert_contains "$ERR" "nothing written"

# cvm current with nothing selected: "system" and where the shims' programs come from, exit 0.
mkdir -p "$T/sysbin"
printf '#!/bin/sh\necho system nvcc\n' > "$T/sysbin/nvcc" && chmod +x "$T/sysbin/nvcc"
expect_rc 0 env PATH="$CVM_ROOT/shims:$T/cc" "$CVM" current
assert_eq "$OUT" "system (nothing is selected; the shims run the programs on PATH outside cvm: no nvcc there)"
expect_rc 0 env PATH="$CVM_ROOT/shims:$T/sysbin:/usr/bin:/bin" "$CVM" current
assert_eq "$OUT" "system (nothing is selected; the shims run the programs on PATH outside cvm: nvcc is $T/sysbin/nvcc)"
expect_rc 0 env PATH="$CVM_ROOT/shims:$T/sysbin:/usr/bin:/bin" "$CVM" current --json
assert_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["origin"], d["spec"], d["active"], d["nvcc"])' <<<"$OUT")" \
    "none None system $T/sysbin/nvcc"
expect_rc 0 env PATH="$CVM_ROOT/shims:$T/cc" "$CVM" current --json
assert_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["active"], d["nvcc"])' <<<"$OUT")" "system None"
# ... which is what the shim runs then.
expect_rc 0 "$CVM" rehash
expect_rc 0 env PATH="$CVM_ROOT/shims:$T/sysbin:/usr/bin:/bin" nvcc
assert_eq "$OUT" "system nvcc"

# uninstall takes a KIND word first, as list and install do.
expect_rc 2 "$CVM" uninstall cudnn
assert_contains "$ERR" "uninstall: cudnn needs an id or a prefix of one; e.g. cvm uninstall cudnn 9.2"
expect_rc 1 "$CVM" uninstall cudnn 9.2
assert_contains "$ERR" "uninstall: cuDNN 9.2 is not installed (no cuDNN id is or starts with it); see \`cvm list cudnn\`"
expect_rc 1 "$CVM" uninstall cuda 9.1
assert_contains "$ERR" "uninstall: toolkit 9.1 is not installed"
expect_rc 0 "$CVM" uninstall cudnn 9.1
assert_contains "$ERR" "forgot cudnn 9.1.0.70-cuda12"
expect_rc 0 "$CVM" uninstall cuda 11.8
assert_contains "$ERR" "forgot cuda 11.8.0"
expect_rc 0 "$CVM" list --json
assert_eq "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["cuda"]), len(d["cudnn"]))' <<<"$OUT")" "0 0"
echo "cli_use_truth: ok"
