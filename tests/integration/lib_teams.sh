# Helpers for the teams_* integration tests (sourced after lib.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib_http.sh"

# lmod_init: prints the path of Lmod's bash init, or nothing when Lmod is not installed
# (Debian: `apt-get install -y lmod`).
lmod_init() {
    local f
    for f in /usr/share/lmod/lmod/init/bash /usr/share/lmod/8.*/init/bash /opt/lmod/lmod/init/bash; do
        [[ -f $f ]] && { echo "$f"; return 0; }
    done
    return 0
}

# need_lmod: sets LMOD_INIT, or skips the test where Lmod is not installed.
need_lmod() {
    LMOD_INIT=$(lmod_init)
    [[ -n $LMOD_INIT ]] || skip "Lmod is not installed (apt-get install -y lmod)"
}

# in_lmod MODULEPATH SCRIPT: runs SCRIPT in a clean bash where `module` is Lmod's and only
# MODULEPATH is searched. The caller's CVM_ROOT and PATH pass through; HOME is the test's (no
# ~/.lmodrc.lua or Lmod cache of the machine's, none shared with another test).
in_lmod() {
    local modulepath=$1 script=$2
    env -u LOADEDMODULES -u _LMFILES_ -u MODULEPATH_ROOT \
        HOME="$TEST_TMP" LMOD_INIT="$LMOD_INIT" MODULEPATH="$modulepath" LMOD_REDIRECT=no LMOD_PAGER=none \
        LMOD_COLORIZE=no LMOD_TERM_WIDTH=1000 LMOD_SHORT_TIME=86400 LMOD_IGNORE_CACHE=1 \
        bash --noprofile --norc -c "set -e; source \"\$LMOD_INIT\"; unset MODULEPATH_ROOT; export MODULEPATH=\"$modulepath\"; $script"
}

# env_of_exec SPEC: the environment `cvm exec` gives a program for SPEC, one VAR=value a line.
env_of_exec() {
    "$CVM" exec --version "$1" -- env
}

# value_in TEXT NAME: the value of NAME in env-style TEXT (empty when absent).
value_in() {
    local line
    while IFS= read -r line; do
        [[ $line == "$2="* ]] && { printf '%s' "${line#"$2="}"; return 0; }
    done <<<"$1"
    return 0
}

# snapshot DIR: every path under DIR with its type, size, mode and modification time.
snapshot() {
    find "$1" -printf '%p %y %s %m %T@\n' | LC_ALL=C sort
}

# as_nobody CMD...: runs CMD as the unprivileged user nobody (root ignores file modes, so a
# read-only store is only read-only for someone else). Returns 77 when no way works here.
as_nobody() {
    if [[ $(id -u) != 0 ]]; then
        "$@"
    elif command -v setpriv >/dev/null; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env -- \
            env HOME=/nonexistent CVM_ROOT="$CVM_ROOT" CVM_STORE_PATH="${CVM_STORE_PATH:-}" \
            PATH="$PATH" "$@"
    else
        return 77
    fi
}

# make_mirror DIR [SALT]: a small NVIDIA-shaped mirror: CUDA 12.4.1 (cuda_nvcc, cuda_cudart)
# and cuDNN 9.1.0.70 for CUDA 12, as real .tar.xz archives with manifests and checksums. A
# different SALT changes nvcc's bytes (and so the archive's SHA-256, which the manifest follows).
make_mirror() {
    python3 - "$1" "${2:-}" <<'PY'
import hashlib, io, json, lzma, os, sys, tarfile
root, salt = sys.argv[1], sys.argv[2]

def archive(path, top, files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mode, info.mtime = len(data), mode, 1700000000
            tar.addfile(info, io.BytesIO(data))
    raw = lzma.compress(buf.getvalue(), format=lzma.FORMAT_XZ)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(raw)
    return {"sha256": hashlib.sha256(raw).hexdigest(), "md5": hashlib.md5(raw).hexdigest(),
            "size": str(len(raw))}

def entry(product, key, name, version, files, variant=None):
    plat = "linux-x86_64"
    top = f"{key}-{plat}-{version}" + (f"_cuda{variant}" if variant else "") + "-archive"
    rel = f"{key}/{plat}/{top}.tar.xz"
    art = archive(os.path.join(root, product, "redist", rel), top, files)
    art["relative_path"] = rel
    comp = {"name": name, "license": "test", "version": version}
    if variant:
        comp["cuda_variant"] = [variant]
        comp[plat] = {f"cuda{variant}": art}
    else:
        comp[plat] = art
    return comp

nvcc = f"#!/bin/sh\necho fake nvcc 12.4.131 {salt}\n".encode()
cuda = {"release_date": "2024-04-01", "release_label": "12.4.1", "release_product": "cuda",
        "cuda_nvcc": entry("cuda", "cuda_nvcc", "CUDA NVCC", "12.4.131",
                           {"bin/nvcc": (nvcc, 0o755), "include/crt/host_config.h": (b"", 0o644),
                            "LICENSE": (b"test\n", 0o644)}),
        "cuda_cudart": entry("cuda", "cuda_cudart", "CUDA Runtime (cudart)", "12.4.127",
                             {"include/cuda_runtime.h": (b"", 0o644),
                              "lib/libcudart.so.12": (b"", 0o644), "LICENSE": (b"test\n", 0o644)})}
with open(os.path.join(root, "cuda", "redist", "redistrib_12.4.1.json"), "w") as f:
    json.dump(cuda, f, indent=2)
libs = ["libcudnn.so.9"] + [f"libcudnn_{s}.so.9" for s in
        ("ops", "cnn", "adv", "graph", "heuristic", "engines_precompiled", "engines_runtime_compiled")]
files = {f"lib/{l}": (b"", 0o644) for l in libs}
files["include/cudnn_version.h"] = (b"#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n", 0o644)
files["include/cudnn.h"] = (b"", 0o644)
files["LICENSE"] = (b"test\n", 0o644)
cudnn = {"release_date": "2024-04-01", "release_label": "9.1.0", "release_product": "cudnn",
         "cudnn": entry("cudnn", "cudnn", "NVIDIA CUDA Deep Neural Network library", "9.1.0.70",
                        files, variant="12")}
with open(os.path.join(root, "cudnn", "redist", "redistrib_9.1.0.json"), "w") as f:
    json.dump(cudnn, f, indent=2)
PY
}

# serve DIR: serves DIR on 127.0.0.1 with tests/integration/http_server.py; sets SERVER_PID and
# MIRROR_URL (the caller kills SERVER_PID).
serve() {
    HTTP_TIMEOUT=600 start_server "$1"
    SERVER_PID=$HTTP_PID
    HTTP_PID=
    MIRROR_URL="http://127.0.0.1:$HTTP_PORT"
}
