#!/usr/bin/env bash
# Which integration tests a change touches, for scripts/test.sh --quick.
# Usage: scripts/test-areas.sh FILE...   (paths relative to the checkout)
# Prints the tests' name patterns for ctest -R, separated by spaces, or "all" when a file every
# test depends on changed (tests/integration/lib.sh, the build's own files, the contract).
# The areas are the tests' name prefixes (tests/integration/<area>_*.sh), the labels ctest gives.
set -euo pipefail

declare -A want=()
add() { local a; for a in "$@"; do want[$a]=1; done; }
all=0
# users FILE: the tests that use a helper of tests/integration (lib_*.sh, *.py), read off the
# tests themselves: those that name it, and those of the helpers that name it in turn. lib.sh,
# which every test sources, naming it means every test.
declare -A seen=()
users() {
    local name=${1##*/} f
    [ -n "${seen[$name]:-}" ] && return 0
    seen[$name]=1
    for f in $(grep -lF "$name" tests/integration/*.sh 2>/dev/null); do
        case $f in
            */lib.sh) all=1 ;;
            */lib_*.sh) users "$f" ;;
            *) n=${f##*/}; add "${n%.sh}" ;;
        esac
    done
}
for f in "$@"; do
    case "$f" in
        tests/integration/lib.sh | CMakeLists.txt | cmake/Dependencies.cmake | tests/CMakeLists.txt | \
            docs/cli-contract.md)
            all=1 ;;
        tests/integration/lib_*.sh | tests/integration/*.py) users "$f" ;;
        tests/integration/*_*.sh) n=${f#tests/integration/}; add "${n%.sh}" ;;
        tests/windows/*) add 'windows_.*' '.*_wine' ;;
        tests/probe_fakes/* | src/probe/*) add 'probe_.*' 'doctor_.*' ;;
        tests/fault/*) add 'install_integrity' 'image_oci' 'core_link_writes' ;;
        tests/unit/* | tests/fuzz/*) ;; # the unit tests always run; the fuzzers build with them
        scripts/build-windows.sh | scripts/windows-*.sh | src/platform/windows/*) add 'windows_.*' '.*_wine' ;;
        src/cli/*) add 'cli_.*' 'complete_.*' 'shell_.*' 'teams_.*' 'pwsh_.*' 'make_.*' ;;
        src/install/* | src/registry/* | registry/*) add 'install_.*' 'import_.*' 'registry_.*' ;;
        src/doctor/*) add 'doctor_.*' ;;
        src/compat/*) add 'compat_.*' ;;
        src/image/*) add 'image_.*' ;;
        src/binary/*) add 'doctor_.*' 'compat_.*' 'import_.*' ;;
        src/layouts/*) add 'core_.*' 'import_.*' 'build_.*' ;;
        src/text/* | src/config/* | src/spec/* | src/store/* | src/project/* | src/activation/* | \
            src/shells/* | src/modules/* | src/platform/* | src/toml/* | shims/*)
            add 'core_.*' 'shim_.*' 'cli_.*' 'shell_.*' 'build_.*' ;;
        src/*/CMakeLists.txt | cmake/*) add 'build_.*' 'package_.*' ;;
        scripts/package.sh) add 'package_.*' ;;
        *) ;; # documents, benchmarks, other scripts: nothing runs them
    esac
done
# Every change to a source folder keeps its includes to the floors and its names unique.
for f in "$@"; do
    case "$f" in src/* | shims/* | tests/unit/*) add build_layering build_unity_names ;; esac
done
if [ $all = 1 ]; then echo all; exit 0; fi
echo "${!want[@]}" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//'
echo
