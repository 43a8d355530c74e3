#!/usr/bin/env bash
# Windows, under Wine: `cvm export --oci` from a Windows store is refused in one line (images hold
# Linux toolkits), nothing is written; `cvm export lmod` still parses as before.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"
CVM_EXE="$WINDOWS_BIN/cvm.exe"
export CVM_ROOT="$WIN_C_WIN\\store"
wexpect 2 "$CVM_EXE" export --oci "$(winpath "$WIN_C/image")" --json
assert_contains "$ERR" "cvm export: --oci: a Windows store holds Windows toolkits, and container images hold Linux ones"
assert_eq "$(jq -r .error.code <<<"$OUT")" "invalid_input"
[[ ! -e $WIN_C/image ]] || fail "a refused export made $WIN_C/image"
wexpect 2 "$CVM_EXE" export --oci "$(winpath "$WIN_C/image")" 11.2 extra
assert_contains "$ERR" "unexpected argument 'extra'"
wexpect 2 "$CVM_EXE" export lmod
assert_contains "$ERR" "cvm export: missing DIR"
echo "windows_export_oci: ok"
