#!/usr/bin/env bash
# What a build sees is the selection: real CMake (both language orders, find_package(CUDAToolkit)
# with cuDNN found through the toolkit's folders and through CUDNN_PATH), real Meson
# (add_languages('cuda'), dependency('cuda')), a Makefile using $(CUDA_HOME) and plain
# `nvcc x.cu -lcudnn`, built with the real CUDA 13.0 in every way of starting a build through cvm:
# the shims alone, `cvm exec`, `eval "$(cvm env)"`, the prompt hook (`cd X && nvcc` on one line
# too), `cvm shell`, an activation script and an Lmod module.
#
# The machine is made as messy as users' are: the selected cuDNN (made here, version 9.77.3, a
# libcudnn.so.9 only, as the wheels ship it) lives apart from the toolkit, whose own folders hold
# cuDNN 9.19; beside the C++ compiler sits a distribution's nvcc (a wrong one), and the compiler's
# default include folder holds another release's cudnn.h (9.14), as Debian's /usr/bin and NVIDIA's
# apt packages in /usr/include do. Every program built must print the selection's header version
# and load the selection's library: 97703 97703.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_teams.sh"
CUDA13=/usr/local/cuda-13.0
[[ -x $CUDA13/bin/nvcc ]] || skip "the real CUDA 13.0 is not in $CUDA13"
need_tools cmake meson make g++ gcc
need_lmod
T=$TEST_TMP
WANT="header=97703 library=97703"

# The selected cuDNN, apart from the toolkit.
DNN=$T/cudnn-linux-x86_64-9.77.3.1_cuda13-archive
mkdir -p "$DNN/include" "$DNN/lib"
cat > "$DNN/include/cudnn_version.h" <<'EOS'
#define CUDNN_MAJOR 9
#define CUDNN_MINOR 77
#define CUDNN_PATCHLEVEL 3
#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)
EOS
# Its cudnn.h names a function only its library has: a build that compiles against this header
# and links another libcudnn fails to link.
cat > "$DNN/include/cudnn.h" <<'EOS'
#pragma once
#include <stddef.h>
#include "cudnn_version.h"
#ifdef __cplusplus
extern "C" {
#endif
size_t cudnnGetVersion(void);
size_t cudnnSelectedRelease(void);
#ifdef __cplusplus
}
#endif
#define CUDNN_SELECTED_RELEASE 1
EOS
printf '#include <stddef.h>\nsize_t cudnnGetVersion(void) { return 97703; }\nsize_t cudnnSelectedRelease(void) { return 1; }\n' > "$T/dnn.c"
gcc -shared -fPIC -Wl,-soname,libcudnn.so.9 -o "$DNN/lib/libcudnn.so.9" "$T/dnn.c"

# A distribution's folder beside the C++ compiler: its nvcc is not the selection's, and its
# compilers see another release's cudnn.h in a default include folder.
DIST=$T/dist
mkdir -p "$DIST/include"
sed -e 's/77/14/' -e 's/PATCHLEVEL 3/PATCHLEVEL 0/' "$DNN/include/cudnn_version.h" > "$DIST/include/cudnn_version.h"
grep -v -e Selected -e SELECTED "$DNN/include/cudnn.h" > "$DIST/include/cudnn.h"
for c in gcc:gcc cc:gcc g++:g++ c++:g++; do
    printf '#!/bin/sh\nexec /usr/bin/%s "$@" -idirafter %s\n' "${c#*:}" "$DIST/include" > "$DIST/${c%%:*}"
done
printf '#!/bin/sh\necho "the distribution nvcc ran: $*" >&2\nexit 1\n' > "$DIST/nvcc"
chmod +x "$DIST"/*

export PATH="$CVM_ROOT/shims:$DIST:/usr/bin:/bin"
expect_rc 0 "$CVM" import "$CUDA13"
expect_rc 0 "$CVM" import --cuda 13 "$DNN"
TK=$("$CVM" list --json | python3 -c 'import json,sys; print([e["id"] for e in json.load(sys.stdin)["cuda"]][0])')
SPEC="$TK+9.77.3"

# The sources (in the project, and a copy out of it): one program prints the cudnn.h it was
# compiled against and the library it loads.
SRC=$T/project/src
mkdir -p "$SRC"
cat > "$SRC/conv.cu" <<'EOS'
#include <cstdio>
#include <cudnn.h>
__global__ void k() {}
int main() {
#ifdef CUDNN_SELECTED_RELEASE
    cudnnSelectedRelease();
#endif
    std::printf("header=%d library=%zu\n", CUDNN_VERSION, cudnnGetVersion());
    return 0;
}
EOS
cat > "$SRC/main.cpp" <<'EOS'
#include <cstdio>
#include <cudnn.h>
#include <cuda_runtime_api.h>
int main() {
    int v = 0;
    cudaRuntimeGetVersion(&v);
#ifdef CUDNN_SELECTED_RELEASE
    cudnnSelectedRelease();
#endif
    std::printf("header=%d library=%zu\n", CUDNN_VERSION, cudnnGetVersion());
    return v > 0 ? 0 : 0;
}
EOS
# CMake, CXX first: the order in which CMake looks for nvcc beside the C++ compiler first.
mkdir -p "$SRC/cmake-cxx" "$SRC/cmake-cuda" "$SRC/meson"
cat > "$SRC/cmake-cxx/CMakeLists.txt" <<EOS
cmake_minimum_required(VERSION 3.18)
project(cxxfirst LANGUAGES CXX CUDA)
find_package(CUDAToolkit REQUIRED)
# cuDNN through the toolkit's own folders (cvm's CUDA_HOME shows it inside the toolkit)...
find_path(CUDNN_INCLUDE cudnn.h HINTS \${CUDAToolkit_INCLUDE_DIRS} NO_DEFAULT_PATH)
find_library(CUDNN_LIB cudnn HINTS \${CUDAToolkit_LIBRARY_DIR} NO_DEFAULT_PATH)
if(NOT CUDNN_INCLUDE OR NOT CUDNN_LIB)
  message(FATAL_ERROR "no cudnn.h or libcudnn in the toolkit's folders: \${CUDAToolkit_INCLUDE_DIRS} \${CUDAToolkit_LIBRARY_DIR}")
endif()
message(STATUS "nvcc=\${CMAKE_CUDA_COMPILER} include=\${CUDAToolkit_INCLUDE_DIRS} cudnn=\${CUDNN_LIB}")
add_executable(conv ../conv.cu)
target_link_libraries(conv PRIVATE \${CUDNN_LIB})
add_executable(host ../main.cpp)
target_link_libraries(host PRIVATE CUDA::cudart \${CUDNN_LIB})
EOS
cat > "$SRC/cmake-cuda/CMakeLists.txt" <<EOS
cmake_minimum_required(VERSION 3.18)
project(cudafirst LANGUAGES CUDA CXX)
find_package(CUDAToolkit REQUIRED)
# ...and through CUDNN_PATH, as frameworks' builds do.
find_path(CUDNN_INCLUDE cudnn.h HINTS \$ENV{CUDNN_PATH}/include NO_DEFAULT_PATH)
find_library(CUDNN_LIB NAMES cudnn libcudnn.so.9 HINTS \$ENV{CUDNN_PATH}/lib NO_DEFAULT_PATH)
if(NOT CUDNN_INCLUDE OR NOT CUDNN_LIB)
  message(FATAL_ERROR "no cuDNN under CUDNN_PATH=\$ENV{CUDNN_PATH}")
endif()
add_executable(conv ../conv.cu)
target_include_directories(conv PRIVATE \${CUDNN_INCLUDE})
target_link_libraries(conv PRIVATE \${CUDNN_LIB})
EOS
cat > "$SRC/meson/meson.build" <<'EOS'
project('mesonbuild', 'cpp')
add_languages('cuda')
cuda = dependency('cuda', modules: ['cudart'])
cudnn = meson.get_compiler('cuda').find_library('cudnn')
executable('conv', '../conv.cu', dependencies: [cuda, cudnn])
executable('host', '../main.cpp', dependencies: [cuda, cudnn])
EOS
cat > "$SRC/Makefile" <<'EOS'
# A Makefile as people write them: nvcc from CUDA_HOME (else PATH), no -I or -L of its own.
NVCC := $(if $(CUDA_HOME),$(CUDA_HOME)/bin/nvcc,nvcc)
conv-make: conv.cu
	$(NVCC) -o $@ conv.cu -lcudnn
EOS

# check WHAT PROGRAM: the program, run through cvm, prints the selection's header and library
# versions (it linked the selection's library, or it would not have linked).
check() {
    local out
    out=$("$CVM" exec "$SPEC" -- "$2" 2>&1) || fail "$1: $2 failed: $out"
    assert_eq "$out" "$WANT" "$1: the cudnn.h a build sees and the library it loads"
}
# build_in MODE PREFIX LEVEL [SOURCES]: runs the builds in a bash where PREFIX (shell code) has set
# things up. LEVEL: plain (nvcc and make), cmake (plus both CMake projects), all (plus Meson).
build_in() {
    local mode=$1 prefix=$2 level=$3 src=${4:-$SRC} out=$T/out-$1
    rm -rf "$out"
    mkdir -p "$out"
    local script="set -e; $prefix
cd '$src'
nvcc -o '$out/conv-plain' conv.cu -lcudnn
make -s -B -f Makefile conv-make && mv conv-make '$out/'"
    if [[ $level != plain ]]; then
        script+="
cmake -S cmake-cxx -B '$out/cxx' -G Ninja -DCMAKE_CXX_COMPILER=$DIST/c++ >'$out/cxx.log' 2>&1 || { cat '$out/cxx.log'; exit 1; }
cmake --build '$out/cxx' >>'$out/cxx.log' 2>&1 || { cat '$out/cxx.log'; exit 1; }
cmake -S cmake-cuda -B '$out/cuda' -G Ninja -DCMAKE_CXX_COMPILER=$DIST/c++ >'$out/cuda.log' 2>&1 || { cat '$out/cuda.log'; exit 1; }
cmake --build '$out/cuda' >>'$out/cuda.log' 2>&1 || { cat '$out/cuda.log'; exit 1; }"
    fi
    if [[ $level == all ]]; then
        script+="
CXX=$DIST/c++ meson setup '$out/meson' meson >'$out/meson.log' 2>&1 || { cat '$out/meson.log'; exit 1; }
ninja -C '$out/meson' >>'$out/meson.log' 2>&1 || { cat '$out/meson.log'; exit 1; }"
    fi
    local log
    log=$(cd "$T/project" && in_lmod "$T/modules" "$script" 2>&1) || fail "$mode: a build failed: $log"
    check "$mode nvcc" "$out/conv-plain"
    check "$mode make" "$out/conv-make"
    if [[ $level != plain ]]; then
        check "$mode cmake (CXX CUDA)" "$out/cxx/conv"
        check "$mode cmake (CXX CUDA), a C++ program" "$out/cxx/host"
        check "$mode cmake (CUDA CXX)" "$out/cuda/conv"
        grep -q "nvcc=.*/views/.*/bin/nvcc" "$out/cxx.log" || fail "$mode: CMake took another nvcc: $(grep nvcc= "$out/cxx.log")"
    fi
    if [[ $level == all ]]; then
        check "$mode meson" "$out/meson/conv"
        check "$mode meson, a C++ program" "$out/meson/host"
    fi
}

mkdir -p "$T/elsewhere"
cp -r "$SRC" "$T/elsewhere/src"
OUTSIDE=$T/elsewhere/src
(cd "$T/project" && "$CVM" use "$SPEC" >/dev/null 2>&1) || fail "cvm use $SPEC"

# The machine without cvm: the distribution's nvcc and cudnn.h win, which is what cvm changes.
rc=0; (cd "$SRC" && env PATH="$DIST:/usr/bin:/bin" cmake -S cmake-cxx -B "$T/nocvm" -DCMAKE_CXX_COMPILER="$DIST/c++" >"$T/nocvm.log" 2>&1) || rc=$?
[[ $rc != 0 ]] && grep -q "CMAKE_CUDA_COMPILER:FILEPATH=$DIST/nvcc" "$T/nocvm/CMakeCache.txt" ||
    fail "without cvm CMake did not take the distribution's nvcc: $(tail -20 "$T/nocvm.log")"

# The shims alone: a typed nvcc, and make calling nvcc from PATH.
build_in shims "" plain
# cvm exec, for each build tool.
build_in exec "nvcc() { '$CVM' exec -- nvcc \"\$@\"; }; make() { '$CVM' exec -- make \"\$@\"; }; cmake() { '$CVM' exec -- cmake \"\$@\"; }; meson() { '$CVM' exec -- meson \"\$@\"; }; ninja() { '$CVM' exec -- ninja \"\$@\"; }" all
# eval "$(cvm env)", then out of the project: the activation holds.
build_in env "eval \"\$('$CVM' env --shell bash)\"" all "$OUTSIDE"
# The prompt hook: the folder's selection is applied at the prompt (here: by calling the hook).
build_in hook "eval \"\$('$CVM' init bash)\"" cmake
# cvm shell in a folder without a .cudaversion.
build_in shell "cd '$T/elsewhere'; eval \"\$('$CVM' init bash)\"; cvm shell '$SPEC'" plain "$OUTSIDE"
# An activation script, run out of any project.
(cd "$T/project" && "$CVM" script --shell bash -o "$T/activate.sh" >/dev/null 2>&1) || fail "cvm script"
build_in script ". '$T/activate.sh'" cmake "$OUTSIDE"
# Lmod modules of the toolkit and the cuDNN build.
expect_rc 0 "$CVM" export lmod "$T/modules"
build_in lmod "module load cuda/$TK cudnn/9.77.3.1-cuda13" cmake "$OUTSIDE"

# With the hook, `cd X && nvcc` on one line runs X's nvcc before the next prompt: the shims stay
# ahead of the selection's folders. The shell starts in a project of the toolkit alone, whose own
# cudnn.h is 9.19's.
mkdir -p "$T/other"
echo "$TK" > "$T/other/.cudaversion"
out=$(cd "$T/other" && bash --norc -c "eval \"\$('$CVM' init bash)\"; cd '$SRC' && nvcc -o '$T/oneline' conv.cu -lcudnn" 2>&1) ||
    fail "cd X && nvcc with the hook: $out"
check "cd && nvcc" "$T/oneline"
