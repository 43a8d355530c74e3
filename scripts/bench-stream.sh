#!/usr/bin/env bash
# Benchmark streaming installs: an archive downloaded from a loopback server throttled to a fixed
# rate is extracted while it arrives, so `cvm install URL` should take about as long as the longer
# of downloading it alone and extracting it alone, not their sum.
#
#   scripts/bench-stream.sh [--cvm PATH] [--work DIR] [--rate BYTES_PER_S] [--runs N]
#                           [--only xz,zip] [--cores LIST]
#
# Archives: the real cuDNN 9 files of /usr/local/cuda-13.0 (or --src DIR), as NVIDIA ships them
# (one-block .tar.xz, and a .zip), built once by scripts/bench-install.sh --build-only into WORK
# (default ~/.cache/cvm/bench-stream). Served by tests/integration/http_server.py on 127.0.0.1
# at RATE (default 40000000 bytes/s, a good home line). In one hyperfine run per format:
#   download alone:  curl -o FILE URL
#   extract alone:   cvm install FILE              (a fresh CVM_ROOT each run)
#   streamed:        cvm install URL --sha256 SUM  (a fresh CVM_ROOT and download cache)
# and prints the medians and install / max(download, extract) of the medians; goal: at most 1.15.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cvm="${CVM:-}"
src=()
work="${BENCH_WORK:-$HOME/.cache/cvm/bench-stream}"
rate=40000000
runs=3
only="xz,zip"
cores=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --cvm) cvm=$2; shift 2 ;;
        --src) src=(--src "$2"); shift 2 ;;
        --work) work=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --cores) cores=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "bench-stream: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [[ -z $cvm ]]; then
    for c in "$here"/build*/bin/cvm; do [[ -x $c ]] && cvm=$c && break; done
fi
[[ -x $cvm ]] || { echo "bench-stream: no cvm binary; build it or pass --cvm" >&2; exit 2; }
for tool in hyperfine curl python3; do
    command -v "$tool" > /dev/null || { echo "bench-stream: $tool is missing (scripts/deps.sh)" >&2; exit 2; }
done
pin=()
[[ -n $cores ]] && pin=(taskset -c "$cores")

"$here/scripts/bench-install.sh" --cvm "$cvm" --work "$work" "${src[@]}" --build-only --only single,zip
archive() { # FORMAT -> the archive's path
    case $1 in
        xz) compgen -G "$work/single/*.tar.xz" | head -1 ;;
        zip) compgen -G "$work/zip/*.zip" | head -1 ;;
    esac
}

server_pid=""
trap '[[ -n $server_pid ]] && kill "$server_pid" 2> /dev/null; rm -rf "$work/out"' EXIT
exec {server_fd}< <(python3 "$here/tests/integration/http_server.py" --root "$work" \
    --timeout 7200 --rule "/*=slow:$rate" & echo "PID $!"; wait)
read -r line <&"$server_fd"; server_pid=${line#PID }
read -r port <&"$server_fd"
[[ -n $port ]] || { echo "bench-stream: the HTTP server did not start" >&2; exit 1; }

export CVM_PROGRESS=none CVM_REGISTRY_DIR="$here/registry"
echo "bench: serving at $rate bytes/s on 127.0.0.1:$port; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for format in ${only//,/ }; do
    file=$(archive "$format")
    [[ -n $file ]] || { echo "bench-stream: no $format archive in $work" >&2; exit 1; }
    name=$(basename "$file")
    sum=$(sha256sum "$file" | cut -c1-64)
    url="http://127.0.0.1:$port/${file#"$work"/}"
    echo "bench: $name, $(($(stat -L -c %s "$file") / 1000000)) MB"
    "${pin[@]}" hyperfine --style basic --runs "$runs" --prepare "rm -rf $work/out && mkdir $work/out" \
        --export-json "$work/stream-$format.json" \
        -n download "curl -sf -o $work/out/$name $url" \
        -n extract "CVM_ROOT=$work/out/root $cvm install $file" \
        -n install "CVM_ROOT=$work/out/root $cvm install $url --sha256 $sum" > "$work/stream-$format.log" 2>&1 ||
        { cat "$work/stream-$format.log"; exit 1; }
done

python3 - "$work" "$only" <<'PY'
import json, sys
work, only = sys.argv[1], sys.argv[2].split(",")
failed = False
for fmt in only:
    # Medians: one run slowed by another process on a shared machine moves a mean far more.
    r = {x["command"]: x["median"] for x in json.load(open(f"{work}/stream-{fmt}.json"))["results"]}
    longer = max(r["download"], r["extract"])
    ratio = r["install"] / longer
    ok = ratio <= 1.15
    failed |= not ok
    print(f"{fmt:4s} medians: download {r['download']:6.2f} s, extract {r['extract']:6.2f} s, "
          f"install {r['install']:6.2f} s (sum {r['download'] + r['extract']:6.2f} s): "
          f"install / max = {ratio:4.2f}  (goal <= 1.15)  {'ok' if ok else 'MISSED'}")
sys.exit(1 if failed else 0)
PY
