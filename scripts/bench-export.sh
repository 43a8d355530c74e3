#!/usr/bin/env bash
# Benchmark `cvm export --oci` against the same tree written by hand with tar and gzip (and pigz
# where installed): the real CUDA 13.0 toolkit with cuDNN inside it (or --src DIR), imported into
# a private store.
#
#   scripts/bench-export.sh [--cvm PATH] [--src DIR] [--work DIR] [--runs N] [--cores LIST]
#
#   cvm export --oci WORK/image SPEC               (one layer: tar, gzip -6 in parallel blocks, both
#                                                   SHA-256 computed while writing)
#   tar --sort=name ... -cf - -C SRC . | gzip -6 -n   (one core, no digests)
#   tar --sort=name ... -cf - -C SRC . | pigz -6 -n   (every core, no digests; when pigz is there)
# Prints the median wall time of each and cvm's ratio to each reference. --cores pins everything
# to those CPUs (taskset).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cvm=""
src=/usr/local/cuda-13.0
work=/tmp/cvm-bench-export
runs=3
cores=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --cvm) cvm=$2; shift 2 ;;
        --src) src=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --cores) cores=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "bench-export: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [[ -z $cvm ]]; then
    for c in "$here"/build*/bin/cvm; do [[ -x $c ]] && cvm=$c && break; done
fi
[[ -x $cvm ]] || { echo "bench-export: no cvm binary; build it or pass --cvm" >&2; exit 2; }
[[ -d $src ]] || { echo "bench-export: no $src; pass --src DIR (a CUDA toolkit folder)" >&2; exit 2; }
pin=()
[[ -n $cores ]] && pin=(taskset -c "$cores")

rm -rf "$work"
mkdir -p "$work"
export CVM_ROOT="$work/store" CVM_CONFIG="" CVM_SYSTEM_CONFIG="" CVM_PROGRESS=none
unset SOURCE_DATE_EPOCH CVM_VERSION
"$cvm" import "$src" 2> "$work/import.log" || { cat "$work/import.log" >&2; exit 1; }
# The toolkit, with the cuDNN imported from the same folder when there is one.
spec=$("$cvm" list --json | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(d["cuda"][0]["id"] + ("+" + d["cudnn"][0]["version"] if d.get("cudnn") else ""))')
echo "bench-export: $(du -sh --apparent-size "$src" | cut -f1) in $src (CUDA $spec), $runs runs, ${cores:-all} cores" >&2

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
timed() { # NAME COMMAND...: runs it $runs times, prints the median seconds
    local name=$1 t0 t1
    shift
    for ((i = 0; i < runs; i++)); do
        rm -rf "$work/out" "$work/out.tar.gz"
        t0=$(date +%s.%N)
        "${pin[@]}" "$@" > /dev/null
        t1=$(date +%s.%N)
        echo "$t1 - $t0" | bc
    done | median
}
tarred() { tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@315532800 -cf - -C "$src" .; }
export -f tarred
export src work

cvm_s=$(timed cvm "$cvm" export --oci "$work/out" "$spec")
size=$("$cvm" export --oci "$work/out" "$spec" --json 2> /dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["layer"]["size"])')
gzip_s=$(timed gzip bash -c 'tarred | gzip -6 -n > "$work/out.tar.gz"')
gzip_size=$(stat -c %s "$work/out.tar.gz")
printf '%-44s %8.1f s  %6.2f GB\n' "cvm export --oci" "$cvm_s" "$(echo "$size / 10^9" | bc -l)"
printf '%-44s %8.1f s  %6.2f GB   cvm: %.2fx its time\n' "tar | gzip -6 -n" "$gzip_s" \
    "$(echo "$gzip_size / 10^9" | bc -l)" "$(echo "$cvm_s / $gzip_s" | bc -l)"
if command -v pigz > /dev/null; then
    pigz_s=$(timed pigz bash -c 'tarred | pigz -6 -n > "$work/out.tar.gz"')
    printf '%-44s %8.1f s  %6.2f GB   cvm: %.2fx its time\n' "tar | pigz -6 -n ($(nproc) threads)" "$pigz_s" \
        "$(echo "$(stat -c %s "$work/out.tar.gz") / 10^9" | bc -l)" "$(echo "$cvm_s / $pigz_s" | bc -l)"
fi
rm -rf "$work"
