# Shared helpers for the integration tests (sourced). Each test gets a fresh temp folder and
# store; nothing outside it is written but the download cache (CVM_TEST_CACHE, below).
set -euo pipefail
: "${CVM_BIN:?CVM_BIN must name the folder with the built cvm}"
CVM="$CVM_BIN/cvm"
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cvm-it.XXXXXX")
cleanup_test_tmp() { chmod -R u+w "$TEST_TMP" 2>/dev/null || true; rm -rf "$TEST_TMP"; }
trap cleanup_test_tmp EXIT
# What a test downloads from outside (framework wheels from PyPI, NVIDIA's wheels) is kept across
# runs and checkouts in $CVM_TEST_CACHE, never in the checkout: a cold run fills it once.
export CVM_TEST_CACHE="${CVM_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cvm-tests}"
# stop_tmux_server SOCKET: ends a test's tmux server and waits until the shells in its panes have
# exited (one still running its prompt hook would write into the folder being removed).
stop_tmux_server() {
    local pids pid i
    pids=$(tmux -S "$1" list-panes -a -F '#{pane_pid}' 2> /dev/null) || pids=
    tmux -S "$1" kill-server 2> /dev/null || true
    for pid in $pids; do
        for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
        kill -KILL "$pid" 2> /dev/null || true
    done
}
# wait_until SECONDS CMD...: runs CMD every twentieth of a second until it succeeds, for at most
# SECONDS (then returns 1). The limit only ends a wait for what never comes: make it generous,
# since a busy machine is slow, not broken.
wait_until() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < end)) || return 1
        sleep 0.05
    done
}
# A test waiting on a program it started in the background never waits for good: a hang fails
# the test while ctest still shows its output, naming what was waited for and what still runs
# (ctest's TIMEOUT kills a test silently). The limits are generous: a busy machine is slow.
# running_processes: what this test still runs, for a hang's message: the test shell's
# descendants (a program, its Wine processes, a server), each as pid, state, seconds and command.
running_processes() {
    local pids me=$BASHPID
    pids=$(ps -eo pid=,ppid= 2> /dev/null | awk -v top=$$ -v self=$me '
        { parent[$1] = $2 }
        END {
            mine[top] = 1
            do {
                more = 0
                for (p in parent) if (!(p in mine) && (parent[p] in mine)) { mine[p] = 1; more = 1 }
            } while (more)
            for (p in mine) if (p != top && p != self) printf "%s,", p
        }')
    [[ -n $pids ]] || { echo "(nothing)"; return 0; }
    ps -o pid=,stat=,etimes=,args= -p "${pids%,}" 2> /dev/null | cut -c1-200 | grep -v -E ' ps -o | awk -v top' || true
}
hung() { fail "$*; still running: $(running_processes)"; }
# wait_running PID SECONDS CMD...: waits while PID runs and CMD fails (CMD's verdict, or PID's
# end, is the caller's to check); fails once SECONDS pass with PID running and CMD failing.
wait_running() {
    local pid=$1 limit=$2
    local end=$((SECONDS + limit))
    shift 2
    while kill -0 "$pid" 2> /dev/null && ! "$@"; do
        ((SECONDS < end)) || hung "waited $limit s for [$*] while pid $pid ran"
        sleep 0.05
    done
}
# finish PID SECONDS [WHAT]: waits for the background job PID, its exit code in RC; fails when it
# still runs after SECONDS.
finish() {
    local pid=$1 limit=$2 what=${3:-pid $1}
    local end=$((SECONDS + limit))
    while kill -0 "$pid" 2> /dev/null; do
        ((SECONDS < end)) || hung "$what still ran after $limit s"
        sleep 0.05
    done
    RC=0
    wait "$pid" || RC=$?
}
export CVM_ROOT="$TEST_TMP/root"
unset CVM_VERSION CVM_STORE_PATH CUDA_PATH CUDA_HOME CUDNN_PATH CVM_ACTIVE CUDACXX CUDAHOSTCXX NVCC_CCBIN \
    CUDNN_ROOT CUDNN_INCLUDE_DIR CUDNN_LIB_DIR NCCL_HOME NCCL_ROOT LIBRARY_PATH CPATH _CVM_CCBIN _CVM_SAVED \
    _CVM_HOOK NCCL_INCLUDE_DIR NCCL_LIB_DIR || true
# Config files of this test only (absent unless a test writes them), never the machine's.
export CVM_CONFIG="$TEST_TMP/config/cvm/config.toml" CVM_SYSTEM_CONFIG="$TEST_TMP/etc/cvm/config.toml"
export NO_COLOR=1
# The distribution's package lists are not asked which compilers it packages (the tests that
# check what cvm names give a stand-in apt-cache); asking costs seconds where apt has no cache.
export CVM_APT_CACHE=

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
# need_tools TOOL...: a skip when one is missing, but a failure under scripts/test.sh (CI), which
# installed scripts/deps.sh's packages first (CVM_TEST_DEPS=installed): CI never skips silently.
need_tools() {
    local t
    for t in "$@"; do
        command -v "$t" > /dev/null 2>&1 && continue
        [[ ${CVM_TEST_DEPS:-} != installed ]] || fail "$t is missing, though scripts/test.sh installed scripts/deps.sh's packages; add its package there"
        skip "$t is not installed (scripts/deps.sh lists its package)"
    done
}
# need_debian_cuda: Debian's packaged CUDA 11.8 (nvidia-cuda-toolkit, non-free), which
# scripts/test.sh installs (scripts/deps.sh's NONFREE_TEST_PACKAGES): a skip elsewhere, a failure there.
need_debian_cuda() {
    [[ -x /usr/lib/nvidia-cuda-toolkit/bin/nvcc ]] && /usr/bin/nvcc --version 2>/dev/null | grep -q 'release 11.8' && return 0
    [[ ${CVM_TEST_DEPS:-} != installed ]] || fail "Debian's nvidia-cuda-toolkit (CUDA 11.8) is absent, though scripts/test.sh installs it (scripts/deps.sh)"
    skip "Debian's nvidia-cuda-toolkit (CUDA 11.8) is absent"
}
# windows_missing REASON: a skip, but a failure where scripts/test.sh built the Windows programs
# (CVM_TEST_WINDOWS=built, so mingw-w64 and Wine are installed).
windows_missing() {
    [[ ${CVM_TEST_WINDOWS:-} != built ]] || fail "$* (scripts/test.sh built for Windows, so this test must run)"
    skip "$*"
}
assert_eq() { [[ "$1" == "$2" ]] || fail "${3:-values differ}: expected [$2], got [$1]"; }
assert_contains() { [[ "$1" == *"$2"* ]] || fail "${3:-missing text}: [$2] not in [$1]"; }
assert_not_contains() { [[ "$1" != *"$2"* ]] || fail "${3:-unexpected text}: [$2] in [$1]"; }
# one_line TEXT: TEXT is a single line (an error is one line).
one_line() { [[ $1 != *$'\n'* ]] || fail "more than one line: $1"; }
# json_get EXPR: evaluates a Python expression over the JSON document in $OUT (bound to d).
json_get() { python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1" <<<"$OUT"; }
# fake_driver VERSION [GPU [CC]]: what /proc and nvidia-smi report (CVM_PROC_DRIVER_VERSION,
# CVM_NVIDIA_SMI): the driver VERSION; GPU's name; with CC, the compute capability query answered.
fake_driver() {
    printf 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Thu Oct  2 19:00:00 UTC 2025\n' "$1" \
        > "$CVM_PROC_DRIVER_VERSION"
    if [[ -n ${3:-} ]]; then
        printf '#!/bin/sh\ncase "$1" in\n--query-gpu=name,compute_cap) echo "%s, %s" ;;\n*) echo "%s, %s" ;;\nesac\n' \
            "$2" "$3" "$2" "$1" > "$CVM_NVIDIA_SMI"
    else
        printf '#!/bin/sh\necho "%s, %s"\n' "${2:-NVIDIA Test GPU}" "$1" > "$CVM_NVIDIA_SMI"
    fi
    chmod +x "$CVM_NVIDIA_SMI"
}
# make_venv DIR [NAME]: a virtual environment as `python -m venv` makes it around $PY (set by
# the test): DIR/bin/NAME (python3 unless given) and DIR/pyvenv.cfg. Sets VENV_SITE to its
# lib/pythonX.Y/site-packages (made), which that python puts on sys.path.
make_venv() {
    local dir=$1 name=${2:-python3}
    mkdir -p "$dir/bin"
    ln -s "$PY" "$dir/bin/$name"
    printf 'home = %s\ninclude-system-site-packages = false\nversion = %s\n' "$(dirname "$PY")" \
        "$("$PY" -c 'import platform; print(platform.python_version())')" > "$dir/pyvenv.cfg"
    VENV_SITE=$dir/lib/$("$PY" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')/site-packages
    mkdir -p "$VENV_SITE"
}

# expect_rc CODE CMD...: runs CMD, captures stdout in $OUT and stderr in $ERR.
expect_rc() {
    local want=$1; shift
    local rc=0
    OUT=$("$@" 2>"$TEST_TMP/.stderr") || rc=$?
    ERR=$(cat "$TEST_TMP/.stderr")
    [[ $rc == "$want" ]] || fail "expected exit $want from [$*], got $rc; stderr: $ERR"
}
# expect_refused TEXT CMD...: CMD refuses its input as cvm does: exit 2, and one line on stderr
# that holds TEXT.
expect_refused() {
    local text=$1; shift
    expect_rc 2 "$@"
    assert_contains "$ERR" "$text"
    one_line "$ERR"
}

# is_system_folder DIR: true for the folders cvm never adds, moves or removes on PATH and
# LD_LIBRARY_PATH (as is_system_folder in src/activation/environment.cpp).
is_system_folder() {
    local d=${1%/}
    case $d in
    /bin | /sbin | /usr/bin | /usr/sbin | /usr/local/bin | /usr/local/sbin | /lib | /lib64 | /lib32 | \
        /usr/lib | /usr/lib64 | /usr/lib32 | /usr/local/lib | /usr/local/lib64) return 0 ;;
    /usr/lib/*-linux-gnu | /lib/*-linux-gnu) [[ ${d#/*lib/} != */* ]] ;;
    *) return 1 ;;
    esac
}

# make_toolkit DIR VERSION: a fake toolkit whose nvcc prints what it sees.
make_toolkit() {
    local dir=$1 version=$2
    local major=${version%%.*} rest=${version#*.}
    local minor=${rest%%.*}
    mkdir -p "$dir/bin" "$dir/include" "$dir/lib64"
    printf '{"cuda":{"name":"CUDA SDK","version":"%s"}}\n' "$version" > "$dir/version.json"
    printf '#define CUDA_VERSION %d\n' $((major * 1000 + minor * 10)) > "$dir/include/cuda.h"
    cat > "$dir/bin/nvcc" <<EOS
#!/bin/sh
echo "fake nvcc $version"
echo "self=\$0"
echo "CUDA_PATH=\$CUDA_PATH"
echo "CVM_ACTIVE=\$CVM_ACTIVE"
echo "PATH=\$PATH"
echo "LD_LIBRARY_PATH=\${LD_LIBRARY_PATH:-}"
echo "args=\$*"
exit \${FAKE_NVCC_EXIT:-0}
EOS
    chmod +x "$dir/bin/nvcc"
    printf '#!/bin/sh\necho ptxas %s\n' "$version" > "$dir/bin/ptxas"
    chmod +x "$dir/bin/ptxas"
    : > "$dir/lib64/libcudart.so.$major"
}

# import_sample_store DIR: toolkits 11.2.2 and 12.4.1 and cuDNN 9.1.0.70 for CUDA 12, made in DIR
# and imported into the test's store.
import_sample_store() {
    local d
    make_toolkit "$1/cuda-11.2" 11.2.2
    make_toolkit "$1/cuda-12.4" 12.4.1
    make_cudnn "$1/cudnn-linux-x86_64-9.1.0.70_cuda12-archive" 9.1.0
    for d in cuda-11.2 cuda-12.4 cudnn-linux-x86_64-9.1.0.70_cuda12-archive; do
        "$CVM" import "$1/$d" 2>/dev/null || fail "import $d"
    done
}

# make_apt_cudnn ROOT VERSION(4 numbers) CUDA_MAJOR: NVIDIA's apt packages libcudnnN-cuda-M and
# libcudnnN-dev-cuda-M under ROOT (usr/lib/x86_64-linux-gnu, versioned headers chosen through
# etc/alternatives, var/lib/dpkg/status), with placeholder libraries unless LIBS_FROM names a
# folder whose libcudnn*.so.N files are copied in.
make_apt_cudnn() {
    local m=$1 version=$2 cuda=$3
    IFS=. read -r ma mi pa _ <<<"$version"
    local lib="$m/usr/lib/x86_64-linux-gnu" inc="$m/usr/include/x86_64-linux-gnu"
    mkdir -p "$lib" "$inc" "$m/etc/alternatives" "$m/var/lib/dpkg"
    printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n' "$ma" "$mi" "$pa" \
        > "$inc/cudnn_version_v$ma.h"
    echo "#include <cudnn_version_v$ma.h>" > "$inc/cudnn_v$ma.h"
    echo ops > "$inc/cudnn_ops_v$ma.h"
    ln -s "$inc/cudnn_v$ma.h" "$m/etc/alternatives/libcudnn"
    ln -s "$m/etc/alternatives/libcudnn" "$m/usr/include/cudnn.h"
    for s in "" _ops _cnn _graph _adv _heuristic _engines_precompiled _engines_runtime_compiled; do
        if [ -n "${LIBS_FROM:-}" ] && [ -e "$LIBS_FROM/libcudnn$s.so.$ma" ]; then
            cp "$LIBS_FROM/libcudnn$s.so.$ma" "$lib/libcudnn$s.so.$ma.$mi.$pa"
        else
            echo elf > "$lib/libcudnn$s.so.$ma.$mi.$pa"
        fi
        ln -s "libcudnn$s.so.$ma.$mi.$pa" "$lib/libcudnn$s.so.$ma"
    done
    printf 'Package: libcudnn%s-cuda-%s\nStatus: install ok installed\nVersion: %s-1\n\nPackage: libcudnn%s-dev-cuda-%s\nStatus: install ok installed\nVersion: %s-1\n' \
        "$ma" "$cuda" "$version" "$ma" "$cuda" "$version" > "$m/var/lib/dpkg/status"
}

# make_cudnn DIR VERSION(3 numbers): a fake cuDNN folder in the redist layout.
make_cudnn() {
    local dir=$1 version=$2
    IFS=. read -r ma mi pa <<<"$version"
    mkdir -p "$dir/include" "$dir/lib"
    printf '#define CUDNN_MAJOR %s\n#define CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n' "$ma" "$mi" "$pa" \
        > "$dir/include/cudnn_version.h"
    : > "$dir/include/cudnn.h"
    : > "$dir/lib/libcudnn.so.$ma"
}
