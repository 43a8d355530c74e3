#!/usr/bin/env bash
# Windows, under Wine: the host compiler of a toolkit with the cross-built cvm.exe. nvcc finds
# cl.exe only on PATH ("Cannot find compiler 'cl.exe' in PATH" outside a Developer Command Prompt).
# CUDA 11.8's include\crt\host_config.h accepts _MSC_VER 1910 to 1939: the newest Visual Studio
# here (2022, MSVC 14.44, 1944) is too new; the Visual Studio Installer's records name Build Tools
# elsewhere (MSVC 14.29). `cvm use` says it hands that cl.exe over, the nvcc shim adds -ccbin (never
# over the user's own), `cvm current` and `cvm doctor` say so. A too new cl.exe on PATH outside a
# toolset folder (a wrapper) is known by the banner it prints. nvcuda.dll's file version gives the
# driver where nothing else answers.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_windows.sh"

CVM_EXE="$WINDOWS_BIN/cvm.exe"
export CVM_ROOT="$WIN_C_WIN\\store" CVM_PYTHON="" CVM_NVIDIA_SMI="" CVM_LIBCUDA=""
STORE="$WIN_C/store"
TK="$WIN_C/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8"
make_win_toolkit "$TK" 11.8.0
mkdir -p "$TK/include/crt"
printf '%s\n' '#if defined(_WIN32)' '' '#if _MSC_VER < 1910 || _MSC_VER >= 1940' '' \
    '#error -- unsupported Microsoft Visual Studio version! Only the versions between 2017 and 2022 (inclusive) are supported!' \
    '#endif' '#endif' > "$TK/include/crt/host_config.h"

# fake_cl DIR VERSION: cl.exe printing the banner of VERSION.
fake_cl() {
    mkdir -p "$1"
    win_cc -DCL_VERSION="\"$2\"" -o "$1/cl.exe" "$WIN_FIXTURES_SRC/fake_cl.c"
}
VS="$WIN_C/VS" # stands for %ProgramFiles%\Microsoft Visual Studio
fake_cl "$VS/2022/Community/VC/Tools/MSVC/14.44.35207/bin/Hostx64/x64" 19.44.35211
BT="$WIN_C/Tools/BuildTools2019"
fake_cl "$BT/VC/Tools/MSVC/14.29.30133/bin/Hostx64/x64" 19.29.30159
BT_CL_WIN="$(winpath "$BT")\\VC\\Tools\\MSVC\\14.29.30133\\bin\\Hostx64\\x64\\cl.exe"
VS_CL_WIN="$(winpath "$VS")\\2022\\Community\\VC\\Tools\\MSVC\\14.44.35207\\bin\\Hostx64\\x64\\cl.exe"
INST="$WIN_C/Instances"
mkdir -p "$INST/4f2a9c1e"
bt_win=$(winpath "$BT")
printf '\xef\xbb\xbf{"installationName":"VisualStudio/16.11.46","installationPath":"%s","installationVersion":"16.11.35731.53"}\n' \
    "${bt_win//\\/\\\\}" > "$INST/4f2a9c1e/state.json"
export CVM_VISUAL_STUDIO_ROOTS="$(winpath "$VS")" CVM_VISUAL_STUDIO_INSTANCES="$(winpath "$INST")"

wexpect 0 "$CVM_EXE" import "$(winpath "$TK")"
PROJ="$WIN_C/proj"
mkdir -p "$PROJ" && cd "$PROJ"
wexpect 0 "$CVM_EXE" use 11.8
assert_contains "$ERR" "host compiler: $BT_CL_WIN is handed to nvcc (-ccbin, CUDAHOSTCXX): nvcc finds no host compiler (cl.exe is not on PATH); CUDA 11.8.0 supports MSVC 1910 to 1939"

# The shim adds -ccbin and CUDAHOSTCXX; the user's own -ccbin stays alone.
SHIM="$STORE/shims/nvcc.exe"
[[ -f $SHIM ]] || fail "no shim $SHIM: $(ls "$STORE/shims")"
wexpect 0 "$SHIM" -c x.cu
assert_eq "$(value_of args "$OUT")" "-ccbin|$BT_CL_WIN|-c|x.cu" "nvcc's arguments through the shim"
assert_eq "$(value_of CUDAHOSTCXX "$OUT")" "$BT_CL_WIN" "CUDAHOSTCXX for CMake"
assert_eq "$(value_of NVCC_CCBIN "$OUT")" "<unset>" "this nvcc does not read NVCC_CCBIN"
wexpect 0 "$SHIM" --compiler-bindir "C:\\VS\\bin" -c x.cu
assert_eq "$(value_of args "$OUT")" "--compiler-bindir|C:\\VS\\bin|-c|x.cu" "the user's --compiler-bindir"
# The environment is the selection's all the same (CUDAHOSTCXX is for CMake).
assert_eq "$(value_of CUDAHOSTCXX "$OUT")" "$BT_CL_WIN"
NVCC_PREPEND_FLAGS="-ccbin cl.exe" wexpect 0 "$SHIM" -c x.cu
assert_eq "$(value_of args "$OUT")" "-c|x.cu" "-ccbin in NVCC_PREPEND_FLAGS"

# cvm current says it once; doctor notes it.
wexpect 0 "$CVM_EXE" current
[[ $(grep -c "host compiler:" <<< "$OUT") == 1 ]] || fail "cvm current should name the host compiler once: $OUT"
assert_contains "$OUT" "host compiler: $BT_CL_WIN is handed to nvcc"
wrun "$CVM_EXE" doctor --json
codes=$(jq -r '[.findings[] | .severity + ":" + .code] | join(" ")' <<< "$OUT")
assert_contains "$codes" "note:host-compiler-auto"
assert_not_contains "$codes" "host-compiler-unsupported"
# The user's own unsupported compiler is an error naming where it was chosen.
NVCC_APPEND_FLAGS="-ccbin \"$VS_CL_WIN\"" wrun "$CVM_EXE" doctor --json
assert_eq "$RC" 1 "doctor with a too new cl.exe in NVCC_APPEND_FLAGS"
f=$(jq -r '.findings[] | select(.code == "host-compiler-unsupported") | .message + " | " + .fix' <<< "$OUT")
assert_contains "$f" "MSVC 19.44 (Visual Studio 2022) ($VS_CL_WIN, NVCC_APPEND_FLAGS) is newer than CUDA 11.8.0 supports"
assert_contains "$f" "name a supported compiler in NVCC_APPEND_FLAGS"

# A cl.exe on PATH (a developer prompt's wrapper, outside any toolset folder) is nvcc's pick: its
# banner names it.
fake_cl "$WIN_C/wrap" 19.44.35211
WINEPATH="$(winpath "$WIN_C/wrap")" wrun "$CVM_EXE" doctor --json
m=$(jq -r '.findings[] | select(.code == "host-compiler-auto") | .message' <<< "$OUT")
assert_contains "$m" "MSVC 19.44 (Visual Studio 2022) ($(winpath "$WIN_C/wrap")\\cl.exe, PATH) is newer than CUDA 11.8.0 supports"
assert_contains "$m" "hands over $BT_CL_WIN (-ccbin)"

# Without the Build Tools nothing fits: cvm says what to install, and the shim adds nothing.
rm -rf "$INST"
wexpect 0 "$CVM_EXE" use 11.8
assert_contains "$ERR" "no installed compiler fits: install the MSVC v14.39 build tools"
wexpect 0 "$SHIM" -c x.cu
assert_eq "$(value_of args "$OUT")" "-c|x.cu" "nothing handed over"

# The driver from nvcuda.dll's file version (32.0.15.3623 is driver 536.23) when nothing else answers.
mkdir -p "$WIN_C/sys"
build_stub_dll "$WIN_C/sys" nvcuda.dll 32.0.15.3623
CVM_LIBCUDA="$(winpath "$WIN_C/sys")\\nvcuda.dll" wrun "$CVM_EXE" doctor --json
assert_eq "$(jq -r '.driver.version' <<< "$OUT")" "536.23" "the driver version from nvcuda.dll"
assert_contains "$(jq -r '[.findings[] | .code] | join(" ")' <<< "$OUT")" "driver-library-only"
assert_not_contains "$(jq -r '[.findings[] | .code] | join(" ")' <<< "$OUT")" "no-driver"
echo "windows_host_compiler: ok"
