#!/usr/bin/env bash
# Benchmark `cvm install` against tar and bsdtar on archives of real NVIDIA binaries.
#
#   scripts/bench-install.sh [--cvm PATH] [--src CUDNN_DIR] [--work DIR] [--runs N] [--cores LIST]
#                            [--build-only] [--only single,zip,multi,toolkit]
#
# Builds, from the cuDNN 9 libraries in CUDNN_DIR (default /usr/local/cuda-13.0, else a wheel's
# nvidia/cudnn), the archives NVIDIA ships (cudnn-linux-x86_64-*-archive.tar.xz in one xz block,
# the same in several blocks as `xz -T2` writes, a .zip) and a toolkit split into four
# component archives behind a file:// manifest, then times side by side with hyperfine:
#   cvm install FILE.tar.xz         vs  tar -xJf FILE.tar.xz          (goal: at most 1.1x)
#   cvm install FILE.zip            vs  bsdtar -xf FILE.zip           (goal: at most 1.1x)
#   cvm install FILE-multiblock     vs  tar -xJf FILE-multiblock      (goal: at least 1.5x faster)
#   cvm install cuda (4 components) vs  tar -xJf of each, one by one  (goal: at least 1.5x faster)
# --cores pins everything to those CPUs (e.g. 0,1 to measure a 2-core machine on a larger one).
# Archives are kept in WORK (default /tmp/cvm-bench) and reused on the next run.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cvm="${CVM:-}"
src="${CUDNN_SRC:-}"
work="${BENCH_WORK:-/tmp/cvm-bench}"
runs=5
cores=""
build_only=0
only="single,zip,multi,toolkit"
while [[ $# -gt 0 ]]; do
    case $1 in
        --cvm) cvm=$2; shift 2 ;;
        --src) src=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --cores) cores=$2; shift 2 ;;
        --build-only) build_only=1; shift ;;
        --only) only=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "bench-install: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [[ -z $cvm ]]; then
    for c in "$here"/build*/bin/cvm "$here"/build/bin/cvm; do [[ -x $c ]] && cvm=$c && break; done
fi
[[ -x ${cvm%% *} || $cvm == *" "* ]] || { echo "bench-install: no cvm binary; build it or pass --cvm" >&2; exit 2; }
if [[ -z $src ]]; then
    for c in /usr/local/cuda-13.0 /usr/local/cuda $(python3 -c 'import nvidia.cudnn,os;print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else list(nvidia.cudnn.__path__)[0])' 2>/dev/null); do
        if compgen -G "$c/lib/libcudnn_engines_precompiled.so.9*" > /dev/null; then src=$c; break; fi
    done
fi
[[ -n $src ]] || { echo "bench-install: no cuDNN 9 libraries found; pass --src DIR (with include/ and lib/)" >&2; exit 2; }
for tool in hyperfine tar xz bsdtar zip python3; do
    command -v "$tool" > /dev/null || { echo "bench-install: $tool is missing" >&2; exit 2; }
done
pin=()
[[ -n $cores ]] && pin=(taskset -c "$cores")

hdr="$src/include/cudnn_version.h"
major=$(awk '/#define CUDNN_MAJOR /{print $3}' "$hdr")
minor=$(awk '/#define CUDNN_MINOR /{print $3}' "$hdr")
patch=$(awk '/#define CUDNN_PATCHLEVEL /{print $3}' "$hdr")
version="$major.$minor.$patch.0"
name="cudnn-linux-x86_64-${version}_cuda13-archive"
mkdir -p "$work"
cd "$work"

# --- archives (built once) -----------------------------------------------------------------------
if [[ ! -d tree/$name ]]; then
    rm -rf tree && mkdir -p "tree/$name/include" "tree/$name/lib"
    cp -a "$src"/include/cudnn*.h "tree/$name/include/"
    cp -a "$src"/lib/libcudnn*.so* "tree/$name/lib/"
    # A wheel ships only libX.so.9; NVIDIA's archives add the unversioned links.
    for f in "tree/$name"/lib/libcudnn*.so.9; do
        [[ -e ${f%.9} ]] || ln -s "$(basename "$f")" "${f%.9}"
    done
    echo "NVIDIA cuDNN license (placeholder for the benchmark)" > "tree/$name/LICENSE"
fi
echo "bench: $(du -sh --apparent-size "tree/$name" | cut -f1) unpacked from $src (cuDNN $version)"
threads=$(nproc)
# Compressing takes minutes on one core: the archives are made side by side.
jobs_pids=()
want() { [[ ",$only," == *",$1,"* ]]; }
want single && [[ ! -f single/$name.tar.xz ]] && { mkdir -p single; (tar -C tree -cf - "$name" | xz -T1 -6 > "single/$name.tar.xz.tmp" && mv "single/$name.tar.xz.tmp" "single/$name.tar.xz") & jobs_pids+=($!); }
want multi && [[ ! -f multi/$name.tar.xz ]] && { mkdir -p multi; (tar -C tree -cf - "$name" | xz -T"$threads" -6 > "multi/$name.tar.xz.tmp" && mv "multi/$name.tar.xz.tmp" "multi/$name.tar.xz") & jobs_pids+=($!); }
want zip && [[ ! -f zip/$name.zip ]] && { mkdir -p zip; (cd tree && zip -qry "../zip/$name.zip.tmp" "$name" && mv "../zip/$name.zip.tmp" "../zip/$name.zip") & jobs_pids+=($!); }

# A toolkit of four component archives (the cuDNN libraries split by size), behind a manifest.
tk=13.0.0
comps=(cuda_alpha cuda_beta cuda_gamma cuda_delta)
groups=("libcudnn_engines_precompiled.so*" "libcudnn_adv.so* libcudnn_cnn.so* libcudnn_graph.so*"
        "libcudnn_heuristic.so* libcudnn.so*" "libcudnn_ops.so* libcudnn_engines_runtime_compiled.so*")
if want toolkit && [[ ! -f mirror/cuda/redist/redistrib_$tk.json ]]; then
    rm -rf mirror comp-tree && mkdir -p mirror/cuda/redist comp-tree
    manifest='{"release_date":"2025-08-01"'
    comp_pids=()
    for i in "${!comps[@]}"; do
        c=${comps[$i]}
        top="$c-linux-x86_64-$tk-archive"
        mkdir -p "comp-tree/$top/lib"
        (cd "tree/$name/lib" && cp -a ${groups[$i]} "$work/comp-tree/$top/lib/")
        echo "license" > "comp-tree/$top/LICENSE"
        mkdir -p "mirror/cuda/redist/$c/linux-x86_64"
        tar -C comp-tree -cf - "$top" | xz -T1 -6 > "mirror/cuda/redist/$c/linux-x86_64/$top.tar.xz" &
        comp_pids+=($!)
    done
    wait "${comp_pids[@]}"
    for i in "${!comps[@]}"; do
        c=${comps[$i]}
        top="$c-linux-x86_64-$tk-archive"
        rel="$c/linux-x86_64/$top.tar.xz"
        sum=$(sha256sum "mirror/cuda/redist/$rel" | cut -c1-64)
        size=$(stat -c %s "mirror/cuda/redist/$rel")
        manifest+=",\"$c\":{\"name\":\"$c\",\"license\":\"x\",\"version\":\"$tk\",\"linux-x86_64\":{\"relative_path\":\"$rel\",\"sha256\":\"$sum\",\"md5\":\"\",\"size\":\"$size\"}}"
    done
    echo "$manifest}" > "mirror/cuda/redist/redistrib_$tk.json"
fi
[[ ${#jobs_pids[@]} == 0 ]] || wait "${jobs_pids[@]}"
want single && echo "bench: xz blocks in the single-block file: $(xz --robot -lv "single/$name.tar.xz" | awk '$1=="block"' | wc -l)"
want multi && echo "bench: xz blocks in the multi-block file: $(xz --robot -lv "multi/$name.tar.xz" | awk '$1=="block"' | wc -l)"
[[ $build_only == 1 ]] && exit 0
comp_files=$(for c in "${comps[@]}"; do echo "$work/mirror/cuda/redist/$c/linux-x86_64/$c-linux-x86_64-$tk-archive.tar.xz"; done)
serial_tar=""
for f in $comp_files; do serial_tar+="tar -xJf $f -C out; "; done

# --- measurements --------------------------------------------------------------------------------
export CVM_PROGRESS=none CVM_MIRROR="file://$work/mirror" CVM_REGISTRY_DIR="$here/registry"
prep='rm -rf out && mkdir out'
bench() { # bench NAME CMD_REFERENCE CMD_CVM
    "${pin[@]}" hyperfine --style basic --runs "$runs" --warmup 1 --prepare "$prep" \
        --export-json "$work/$1.json" -n reference "$2" -n cvm "$3" > "$work/$1.log" 2>&1 ||
        { cat "$work/$1.log"; exit 1; }
}
want single && bench single "tar -xJf $work/single/$name.tar.xz -C out" "CVM_ROOT=out/root $cvm install $work/single/$name.tar.xz"
want zip && bench zip "bsdtar -xf $work/zip/$name.zip -C out" "CVM_ROOT=out/root $cvm install $work/zip/$name.zip"
want multi && bench multi "tar -xJf $work/multi/$name.tar.xz -C out" "CVM_ROOT=out/root $cvm install $work/multi/$name.tar.xz"
want toolkit && bench toolkit "$serial_tar" "CVM_ROOT=out/root $cvm install cuda $tk --components $(IFS=,; echo "${comps[*]}")"

python3 - "$work" "$only" <<'PY'
import json, sys
work, only = sys.argv[1], sys.argv[2].split(",")
rows = [("single", "tar.xz, one block:  cvm / tar -xJf", "max", 1.1),
        ("zip", "zip:                cvm / bsdtar -xf", "max", 1.1),
        ("multi", "tar.xz, xz -T2:     tar -xJf / cvm", "min", 1.5),
        ("toolkit", "4 components:       tar one by one / cvm", "min", 1.5)]
failed = False
for key, label, kind, goal in rows:
    if key not in only:
        continue
    r = {x["command"]: x for x in json.load(open(f"{work}/{key}.json"))["results"]}
    ref, cvm = r["reference"]["mean"], r["cvm"]["mean"]
    ratio = cvm / ref if kind == "max" else ref / cvm
    ok = ratio <= goal if kind == "max" else ratio >= goal
    failed |= not ok
    print(f"{label:45s} {ratio:5.2f}  (reference {ref:6.2f} s, cvm {cvm:6.2f} s; goal {'<=' if kind == 'max' else '>='} {goal})  {'ok' if ok else 'MISSED'}")
sys.exit(1 if failed else 0)
PY
