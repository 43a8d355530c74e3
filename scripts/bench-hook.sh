#!/usr/bin/env bash
# Benchmark the prompt hook of `cvm init SHELL` against `mise hook-env` when nothing changed.
#
#   scripts/bench-hook.sh [--cvm PATH] [--mise PATH] [--shells "bash zsh fish"] [--prompts N]
#                         [--runs N] [--work DIR]
#
# In one shell, in a project folder that each tool has applied already, runs the prompt hook N
# times (cvm: _cvm_hook; mise: what `mise activate SHELL` runs at a prompt: _mise_hook (bash),
# _mise_hook_precmd (zsh), __mise_env_eval_on_prompt (fish), each running `mise hook-env`); the
# same with no prompts gives the start-up cost, which is subtracted. hyperfine times the four side
# by side, for each shell. Goals: cvm at most 2 ms per prompt and at most 1/5 of mise's.
# mise comes from npm (@jdxcode/mise-linux-x64), installed into ~/.cache/cvm/bench-mise if missing.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cvm="${CVM:-}"
mise=""
shells="bash zsh fish"
prompts=200
runs=10
work=""
while [[ $# -gt 0 ]]; do
    case $1 in
        --cvm) cvm=$2; shift 2 ;;
        --mise) mise=$2; shift 2 ;;
        --shells) shells=$2; shift 2 ;;
        --prompts) prompts=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --work) work=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "bench-hook: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [[ -z $cvm ]]; then
    for c in "$here"/build*/bin/cvm; do [[ -x $c ]] && cvm=$c && break; done
fi
[[ -x $cvm ]] || { echo "bench-hook: no cvm binary; build it or pass --cvm" >&2; exit 2; }
source "$here/scripts/deps.sh"
need_packages hyperfine python3 bash zsh fish
if [[ -z $mise ]]; then
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/cvm/bench-mise"
    mise="$cache/node_modules/@jdxcode/mise-linux-x64/bin/mise"
    if [[ ! -x $mise ]]; then
        command -v npm > /dev/null || need_packages npm
        mkdir -p "$cache"
        npm install --no-audit --no-fund --prefix "$cache" @jdxcode/mise-linux-x64 > /dev/null
    fi
fi
[[ -x $mise ]] || { echo "bench-hook: no mise binary at $mise" >&2; exit 2; }

[[ -n $work ]] || work=$(mktemp -d "${TMPDIR:-/tmp}/cvm-bench-hook.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/proj/a/b/c"
export HOME="$work/home" CVM_ROOT="$work/root" XDG_CONFIG_HOME="$work/config"
export MISE_DATA_DIR="$work/mise-data" MISE_CONFIG_DIR="$work/mise-config" MISE_CACHE_DIR="$work/mise-cache"
export MISE_STATE_DIR="$work/mise-state"

# A toolkit for cvm, an environment for mise: each tool has something to apply in the folder.
tk="$work/cuda-12.4"
mkdir -p "$tk/bin" "$tk/lib64" "$tk/include"
printf '{"cuda":{"name":"CUDA SDK","version":"12.4.1"}}\n' > "$tk/version.json"
printf '#!/bin/sh\n' > "$tk/bin/nvcc" && chmod +x "$tk/bin/nvcc"
"$cvm" import "$tk" 2> /dev/null
printf '12.4\n' > "$work/proj/.cudaversion"
printf '[env]\nCUDA_HOME = "%s"\n_.path = ["%s/bin"]\n' "$tk" "$tk" > "$work/proj/mise.toml"
"$mise" trust -q "$work/proj/mise.toml" 2> /dev/null || "$mise" trust "$work/proj/mise.toml"
# fish compares file times in whole seconds: within the second of an edit its hook runs
# `cvm hook-env` again at each prompt (on purpose). The prompts measured come after that second.
sleep 1.1

report() {
python3 - "$work/times.json" "$prompts" "$1" <<'EOF'
import json, sys
runs = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
n = int(sys.argv[2])
cvm = (runs[f"cvm x{n}"] - runs["cvm x0"]) / n * 1000
mise = (runs[f"mise x{n}"] - runs["mise x0"]) / n * 1000
ratio = cvm / mise if mise > 0 else float("inf")
print(f"{sys.argv[3]}: per prompt, nothing changed: cvm {cvm:.3f} ms, mise hook-env {mise:.3f} ms, ratio {ratio:.3f}")
ok = cvm <= 2.0 and ratio <= 0.2
print(f"{sys.argv[3]}: goals (cvm <= 2 ms, cvm <= mise/5): {'met' if ok else 'NOT met'}")
sys.exit(0 if ok else 1)
EOF
}

deep="$work/proj/a/b/c"
# One driver per tool and shell, run as `SHELL DRIVER N`: set up the hook, apply once in the
# folder, then N prompts (the function each tool's hook runs at a prompt), then check that the
# tool applied its environment. bash and zsh share the driver's text.
for sh in bash zsh; do
    printf '%s\n' 'eval "$("$CVM_BIN" init '"$sh"')"' "cd '$deep'" '_cvm_hook' \
        'for ((i = 0; i < $1; i++)); do _cvm_hook; done' '[[ $CVM_ACTIVE == 12.4.1 ]]' > "$work/cvm.$sh"
done
printf '%s\n' 'eval "$("$MISE_BIN" activate bash)"' "cd '$deep'" '_mise_hook' \
    'for ((i = 0; i < $1; i++)); do _mise_hook; done' "[[ \$CUDA_HOME == '$tk' ]]" > "$work/mise.bash"
printf '%s\n' 'eval "$("$MISE_BIN" activate zsh)"' "cd '$deep'" '_mise_hook' \
    'for ((i = 0; i < $1; i++)); do _mise_hook_precmd; done' "[[ \$CUDA_HOME == '$tk' ]]" > "$work/mise.zsh"
printf '%s\n' '$CVM_BIN init fish | source' "cd '$deep'" '_cvm_hook' \
    'set i 0' 'while test $i -lt $argv[1]; _cvm_hook; set i (math $i + 1); end' 'test "$CVM_ACTIVE" = 12.4.1' \
    > "$work/cvm.fish"
printf '%s\n' '$MISE_BIN activate fish | source' "cd '$deep'" '__mise_env_eval' \
    'set i 0' 'while test $i -lt $argv[1]; __mise_env_eval_on_prompt; set i (math $i + 1); end' \
    "test \"\$CUDA_HOME\" = '$tk'" > "$work/mise.fish"
export CVM_BIN=$cvm MISE_BIN=$mise
run_shell() { # SHELL TOOL N
    case $1 in
        bash) echo "bash --norc --noprofile $work/$2.bash $3" ;;
        zsh) echo "zsh -f $work/$2.zsh $3" ;;
        fish) echo "fish --no-config $work/$2.fish $3" ;;
    esac
}

status=0
for sh in $shells; do
    command -v "$sh" > /dev/null || { echo "bench-hook: $sh is not installed" >&2; exit 2; }
    # Both must apply their environment, or the comparison means nothing.
    $(run_shell "$sh" cvm 1) || { echo "bench-hook: the cvm hook did not apply 12.4 in $deep ($sh)" >&2; exit 1; }
    $(run_shell "$sh" mise 1) || { echo "bench-hook: mise did not apply its environment in $deep ($sh)" >&2; exit 1; }
    hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/times.json" \
        -n "cvm x$prompts" "$(run_shell "$sh" cvm "$prompts")" -n "cvm x0" "$(run_shell "$sh" cvm 0)" \
        -n "mise x$prompts" "$(run_shell "$sh" mise "$prompts")" -n "mise x0" "$(run_shell "$sh" mise 0)" > /dev/null
    report "$sh" || status=1
done
exit $status
