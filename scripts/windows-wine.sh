#!/usr/bin/env bash
# Run a Windows program under Wine, headless and quiet:  scripts/windows-wine.sh prog.exe [args...]
# The CMake cross-compiling emulator of cmake/toolchain-mingw64.cmake (try_run, ctest).
#
# - WINEPREFIX defaults to $CVM_WINEPREFIX, else ~/.cache/cvm/wineprefix (created on first use,
#   which takes a few seconds; later starts are fast while wineserver runs).
# - WINEDEBUG defaults to -all (no fixme/err noise on stderr).
# - The exit status is the program's exit code.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 PROGRAM.exe [ARGS...]" >&2
  exit 2
fi

export WINEDEBUG="${WINEDEBUG:--all}"
export WINEPREFIX="${WINEPREFIX:-${CVM_WINEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/cvm/wineprefix}}"
# No desktop integration, no Mono/Gecko install prompts in a fresh prefix.
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-winemenubuilder.exe=d;mscoree=d;mshtml=d}"
unset DISPLAY WAYLAND_DISPLAY

# Debian 12 ships /usr/bin/wine (a wrapper picking wine64 when wine32 is absent); the wine64
# loader itself lives in /usr/lib/wine/. Newer packages install /usr/bin/wine64 too.
wine=""
for candidate in wine64 /usr/lib/wine/wine64 wine; do
  if command -v "$candidate" >/dev/null 2>&1; then
    wine="$(command -v "$candidate")"
    break
  fi
done
if [[ -z "$wine" ]]; then
  echo "$0: wine not found; install it with: apt-get install wine wine64" >&2
  exit 127
fi
if [[ "$wine" == */wine64 && -z "${WINELOADER:-}" ]]; then
  export WINELOADER="$wine"
fi

if [[ ! -d "$WINEPREFIX" ]]; then
  mkdir -p "$(dirname "$WINEPREFIX")"
  # Create the prefix once, with output hidden (wineboot reports missing 32-bit parts).
  "$wine" wineboot --init >/dev/null 2>&1 || true
fi

exec "$wine" "$@"
