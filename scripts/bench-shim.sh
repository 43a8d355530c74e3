#!/usr/bin/env bash
# Shim overhead, side by side in one hyperfine run: the tool called directly, through cvm's shim
# from a folder six levels below the .cudaversion, the same with a config.toml that lists a
# read-only store (through env(1), which sets CVM_CONFIG, against the direct call through env),
# through cvm's shim from a folder with no selection (fall-through to the same tool later on
# PATH), and through pyenv's bash shim (where /root/.pyenv exists). Also times `cvm env`. Prints
# medians, the differences and the ratios. (scripts/bench-startup.sh times cvm's own commands.)
# Usage: scripts/bench-shim.sh [build folder with bin/cvm]   (default: build-release, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh
bench_prepare "${1:-}"

# A toolkit whose tool is a real (tiny, compiled) program, so the figures show launch cost only.
tk="$tmp/cuda-12.4"
bench_toolkit "$tk" 12.4.1
printf 'int main(void){return 0;}\n' > "$tmp/t.c"
cc -O2 -o "$tk/bin/cvmbench" "$tmp/t.c"
mkdir -p "$tmp/dnn/include" "$tmp/dnn/lib"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n' > "$tmp/dnn/include/cudnn_version.h"
: > "$tmp/dnn/lib/libcudnn.so.9"
"$cvm" import "$tk" 2>/dev/null
"$cvm" import --cuda 12 "$tmp/dnn" 2>/dev/null
proj="$tmp/proj"
deep="$proj/1/2/3/4/5/6"
mkdir -p "$deep"
(cd "$proj" && "$cvm" use 12.4+9 2>/dev/null)
cd "$deep"
"$CVM_ROOT/shims/cvmbench"   # creates the merged view once, as the first real use would

# A config.toml that lists a read-only store (holding another toolkit), as a cluster's would.
# Its answer is kept, precompiled, once its times are two seconds old (config/config_cache.h).
bench_toolkit "$tmp/cuda-11.8" 11.8.0
CVM_ROOT="$tmp/shared" "$cvm" import "$tmp/cuda-11.8" 2>/dev/null
printf 'store_path = ["%s"]\n' "$tmp/shared" > "$tmp/config.toml"
sleep 2.1
CVM_CONFIG="$tmp/config.toml" "$CVM_ROOT/shims/cvmbench"
[ -f "$CVM_ROOT/cache/config" ] || echo "(this build keeps no precompiled answer of the config file: it reads the TOML at each run)" >&2

# Fall-through: nothing selected in $tmp/none; the shim runs the next cvmbench on PATH, which is
# a copy in a folder after six others (as a machine's /usr/bin comes after the user's folders).
mkdir -p "$tmp/none" "$tmp/sysbin"
cp "$tk/bin/cvmbench" "$tmp/sysbin/"
fall_path="$CVM_ROOT/shims:$tmp/p1:$tmp/p2:$tmp/p3:$tmp/p4:$tmp/p5:$tmp/p6:$tmp/sysbin"
fall() { (cd "$tmp/none" && PATH=$fall_path "$@"); }
[ "$(fall /bin/sh -c 'command -v cvmbench')" = "$CVM_ROOT/shims/cvmbench" ] || { echo "fall-through set-up is wrong" >&2; exit 1; }
# The floor of any launcher that execs the tool: a static program that does nothing else. Its
# cost is the kernel's exec and the C library's start-up (with glibc, on some virtual machines
# mostly the CPU-feature queries of its static start-up, which trap to the hypervisor: the
# reason the shim links musl where it can).
printf '#include <unistd.h>\nint main(int c, char** v) { (void)c; execv("%s", v); return 127; }\n' \
    "$tk/bin/cvmbench" > "$tmp/floor.c"
cmds=(-n direct "$tk/bin/cvmbench" -n cvm-shim "$CVM_ROOT/shims/cvmbench"
      -n env-direct-config "env CVM_CONFIG=$tmp/config.toml $tk/bin/cvmbench"
      -n cvm-shim-config "env CVM_CONFIG=$tmp/config.toml $CVM_ROOT/shims/cvmbench")
# Built as the shim is: against musl where the shim is (shims/CMakeLists.txt), else glibc.
floor_cc=cc
if command -v musl-gcc >/dev/null && ! readelf -n "$CVM_ROOT/shims/cvmbench" | grep -q NT_GNU_ABI_TAG; then
    floor_cc=musl-gcc
fi
"$floor_cc" -O2 -static -o "$tmp/exec-floor" "$tmp/floor.c" 2>/dev/null && cmds+=(-n exec-floor "$tmp/exec-floor")
if fall "$CVM_ROOT/shims/cvmbench"; then
    cmds+=(-n direct-system "$tmp/sysbin/cvmbench"
           -n cvm-fallthrough "env -C $tmp/none PATH=$fall_path $CVM_ROOT/shims/cvmbench"
           -n env-direct "env -C $tmp/none PATH=$fall_path $tmp/sysbin/cvmbench")
else
    echo "(this build's shim does not fall through; that case is left out)" >&2
fi
if [ -x /root/.pyenv/libexec/pyenv ]; then
    # pyenv's own shim for the same tool, in a scratch PYENV_ROOT.
    export PYENV_ROOT="$tmp/pyenv"
    mkdir -p "$PYENV_ROOT/versions/bench/bin"
    cp "$tk/bin/cvmbench" "$PYENV_ROOT/versions/bench/bin/"
    /root/.pyenv/libexec/pyenv rehash
    export PYENV_VERSION=bench
    cmds+=(-n pyenv-shim "$PYENV_ROOT/shims/cvmbench")
fi
if [ -x /usr/local/cuda-13.0/bin/nvcc ]; then
    # The real nvcc, as a tool of the selected toolkit (nvcc finds its files through /proc/self/exe).
    ln -s /usr/local/cuda-13.0/bin/nvcc "$tk/bin/nvcc"
    "$cvm" rehash 2>/dev/null
    cmds+=(-n "nvcc-direct" "$tk/bin/nvcc --version" -n "nvcc-shim" "$CVM_ROOT/shims/nvcc --version")
fi
cmds+=(-n "cvm-env" "$cvm env --shell bash")

hyperfine -N --warmup 20 --min-runs 200 --export-json "$tmp/shim.json" "${cmds[@]}" >/dev/null 2>&1 || \
    hyperfine -N --warmup 20 --min-runs 200 --export-json "$tmp/shim.json" "${cmds[@]}"
python3 - "$tmp/shim.json" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
med = {k: r["median"] * 1000 for k, r in res.items()}
for k in med:
    print(f"{k:17s} median {med[k]:8.3f} ms   mean {res[k]['mean']*1000:8.3f} ms ± {res[k]['stddev']*1000:.3f}")
print()
d = med["cvm-shim"] - med["direct"]
print(f"cvm shim, selected: overhead {d:.3f} ms over the direct call ({med['direct']:.3f} ms), "
      f"overhead/direct {d/med['direct']:.2f} (target: at most 1 ms and 1.0), shim/direct {med['cvm-shim']/med['direct']:.2f}x")
c = med["cvm-shim-config"] - med["env-direct-config"]
print(f"cvm shim, selected, with a config.toml: overhead {c:.3f} ms over the direct call through env "
      f"({med['env-direct-config']:.3f} ms), overhead/direct {c/med['direct']:.2f} (target: at most 1 ms and 1.0), "
      f"shim/direct {med['cvm-shim-config']/med['env-direct-config']:.2f}x")
if "exec-floor" in med:
    fl = med["exec-floor"] - med["direct"]
    print(f"  floor (a static program that only execs the tool): overhead {fl:.3f} ms ({fl/med['direct']:.2f} of the direct call); "
          f"the shim's own work above it {d - fl:.3f} ms")
# Fall-through runs through env(1) (for the folder and PATH); its direct call goes through env too.
if "cvm-fallthrough" in med:
    f = med["cvm-fallthrough"] - med["env-direct"]
    print(f"cvm shim, fall-through: overhead {f:.3f} ms over the direct call through env ({med['env-direct']:.3f} ms; "
          f"without env {med['direct-system']:.3f} ms), overhead/direct {f/med['direct-system']:.2f} "
          f"(target: at most 1 ms and 1.0), shim/direct {med['cvm-fallthrough']/med['env-direct']:.2f}x")
if "pyenv-shim" in med:
    print(f"pyenv shim overhead: {med['pyenv-shim'] - med['direct']:.3f} ms; cvm's shim is {med['pyenv-shim']/med['cvm-shim']:.1f}x faster than pyenv's")
if "nvcc-shim" in med:
    print(f"real nvcc --version: direct {med['nvcc-direct']:.3f} ms, through the shim {med['nvcc-shim']:.3f} ms (+{med['nvcc-shim']-med['nvcc-direct']:.3f} ms)")
print(f"cvm env: {med['cvm-env']:.3f} ms median (target: under 5 ms)")
PY
