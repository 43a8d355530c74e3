#!/usr/bin/env bash
# Sets cvm up for this user on Debian/Ubuntu: installs what is missing, builds, installs cvm
# into ~/.local, registers the CUDA toolkits already on the machine and shows the selection.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
need_packages "${BUILD_PACKAGES[@]}"

prefix=${CVM_PREFIX:-$HOME/.local}
build=${CVM_BUILD_DIR:-build-release}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCVM_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$build" -j"$(nproc)"
cmake --install "$build" >/dev/null
cvm="$prefix/bin/cvm"
echo "cvm: installed $cvm"

# Register what NVIDIA's installers and packages left on the machine (/usr/local/cuda-*, ...).
"$cvm" import --detect
"$cvm" rehash
# A first global default, so `cvm current` answers: the newest toolkit with its newest cuDNN.
if [ ! -s "${CVM_ROOT:-${XDG_DATA_HOME:-$HOME/.local/share}/cvm}/version" ]; then
    newest=$("$cvm" list --json | python3 -c 'import json,sys
d=json.load(sys.stdin)
if d["cuda"]:
    t=d["cuda"][0]["id"]; maj=t.split(".")[0]
    dnn=[c["id"] for c in d["cudnn"] if c["cuda"].split(".")[0]==maj]
    print(t+("+"+dnn[0].split("-cuda")[0] if dnn else ""))' 2>/dev/null || true)
    [ -n "$newest" ] && "$cvm" use --global "$newest"
fi
echo
"$cvm" list
echo
"$cvm" current || true
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo; echo "cvm: add $prefix/bin to PATH" ;;
esac
echo "cvm: for shims and completion add to ~/.bashrc:  eval \"\$($cvm init bash)\""
