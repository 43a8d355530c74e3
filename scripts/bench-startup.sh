#!/usr/bin/env bash
# Start-up cost of the everyday commands, side by side in one hyperfine run: /bin/true (the floor
# of starting any program), `cvm --version`, `cvm current`, `cvm env`, `cvm hook-env` (what the
# prompt hook runs at every prompt) and `cvm list`, in a folder six levels below a .cudaversion,
# with no config.toml and with one that lists a read-only store; pyenv's `version-name` (the
# same question) where /root/.pyenv exists, and mise's `hook-env` where mise is on PATH (it cannot
# be installed on the project's machine, which no longer reaches npm: the output says so). Prints medians, the differences from /bin/true and the ratios.
# Nothing here is a test: the figures go into the README's table.
# Usage: scripts/bench-startup.sh [build folder with bin/cvm]   (default: build-release, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bench-lib.sh
bench_prepare "${1:-}"

echo "libraries cvm loads: $(ldd "$cvm" 2>/dev/null | wc -l) (ldd lines), of them libcurl/libarchive: $(ldd "$cvm" 2>/dev/null | grep -c -E 'libcurl|libarchive' || true)"

tk="$tmp/cuda-12.4"
bench_toolkit "$tk" 12.4.1
"$cvm" import "$tk" 2>/dev/null
# A read-only store that the config file lists.
tk2="$tmp/cuda-11.8"
bench_toolkit "$tk2" 11.8.0
CVM_ROOT="$tmp/shared" "$cvm" import "$tk2" 2>/dev/null
printf 'store_path = ["%s"]\n' "$tmp/shared" > "$tmp/config.toml"
proj="$tmp/proj"
deep="$proj/1/2/3/4/5/6"
mkdir -p "$deep"
(cd "$proj" && "$cvm" use 12.4 2>/dev/null)
cd "$deep"
# The config file's answer is kept once its times are two seconds old (config/config_cache.h).
sleep 2.1
CVM_CONFIG="$tmp/config.toml" "$cvm" current > /dev/null

cmds=(-n true /bin/true
      -n "cvm --version" "$cvm --version"
      -n "cvm current" "$cvm current"
      -n "cvm env" "$cvm env --shell bash"
      -n "cvm hook-env" "$cvm hook-env --shell bash --pid $$"
      -n "cvm list" "$cvm list"
      -n "env true" "env CVM_CONFIG=$tmp/config.toml /bin/true"
      -n "cvm current (config.toml)" "env CVM_CONFIG=$tmp/config.toml $cvm current"
      -n "cvm hook-env (config.toml)" "env CVM_CONFIG=$tmp/config.toml $cvm hook-env --shell bash --pid $$")
if [ -x /root/.pyenv/libexec/pyenv ]; then
    export PYENV_ROOT="$tmp/pyenv"
    mkdir -p "$PYENV_ROOT/versions/bench/bin"
    (cd "$proj" && printf 'bench\n' > .python-version)
    cmds+=(-n "pyenv version-name" "/root/.pyenv/libexec/pyenv version-name")
fi
mise_note=
if command -v mise > /dev/null; then
    cmds+=(-n "mise hook-env" "mise hook-env -s bash")
else
    mise_note="mise: not measured, not installed here (this machine no longer reaches npm or mise's download site); issue 41 measured its hook-env at 3.2-3.7 ms"
fi

hyperfine -N --warmup 20 --min-runs 200 --export-json "$tmp/startup.json" "${cmds[@]}" > /dev/null 2>&1 ||
    hyperfine -N --warmup 20 --min-runs 200 --export-json "$tmp/startup.json" "${cmds[@]}"
python3 - "$tmp/startup.json" "$mise_note" << 'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
med = {k: r["median"] * 1000 for k, r in res.items()}
base = med["true"]
print(f"{'command':28s} {'median':>9s} {'- /bin/true':>12s} {'/ /bin/true':>12s}")
for k in med:
    floor = med["env true"] if "(config.toml)" in k else base
    print(f"{k:28s} {med[k]:7.3f} ms {med[k]-floor:+9.3f} ms {med[k]/floor:10.2f}x")
print()
print("(the config.toml rows run through env(1), as does their floor `env true`)")
worst = max(med[k] - (med["env true"] if "(config.toml)" in k else base)
            for k in med if k.startswith("cvm ") and "list" not in k and "version" not in k)
print(f"cvm current/env/hook-env: at most {worst:.3f} ms above /bin/true (target: within 3 ms)")
if "pyenv version-name" in med:
    print(f"pyenv version-name: {med['pyenv version-name']:.3f} ms; cvm current is "
          f"{med['pyenv version-name']/med['cvm current']:.1f}x faster")
if sys.argv[2]:
    print(sys.argv[2])
PY
