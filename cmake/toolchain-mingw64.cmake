# CMake toolchain file: cross compile for 64-bit Windows with Debian's mingw-w64 (posix threads).
#
#   cmake -S . -B build-windows -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw64.cmake \
#         -DCVM_WIN_DEPS_PREFIX=$HOME/.cache/cvm/windows-deps/prefix-<key>
#
# scripts/build-windows.sh does all of this (and builds the prefix); see there.
# - Compilers: x86_64-w64-mingw32-gcc-posix / -g++-posix (the posix thread model gives
#   std::thread and std::mutex with GCC 12; winpthread is linked statically).
# - Every .exe is linked statically (-static -static-libgcc -static-libstdc++): it needs only
#   DLLs that ship with Windows.
# - Libraries are looked up only in the mingw sysroot and in CVM_WIN_DEPS_PREFIX (libarchive,
#   libcurl, liblzma built by scripts/windows-deps.sh), and static archives (.a) are preferred over
#   import libraries (.dll.a), see cmake/windows-static-find.cmake.
# - Test executables run through scripts/windows-wine.sh (CMAKE_CROSSCOMPILING_EMULATOR), which
#   is also what makes try_run() work (CMake 3.25 crashes in try_run when cross compiling
#   without an emulator).

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_VERSION 10)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CVM_MINGW_TRIPLE x86_64-w64-mingw32)

# Prefix with the cross-built libraries. A cache variable on the first configure; try_compile
# projects get it through CMAKE_TRY_COMPILE_PLATFORM_VARIABLES, and the environment variable
# works as a fallback.
if(NOT CVM_WIN_DEPS_PREFIX AND DEFINED ENV{CVM_WIN_DEPS_PREFIX})
  set(CVM_WIN_DEPS_PREFIX "$ENV{CVM_WIN_DEPS_PREFIX}")
endif()
set(CVM_WIN_DEPS_PREFIX "${CVM_WIN_DEPS_PREFIX}" CACHE PATH
    "Prefix with libarchive, libcurl and liblzma built for Windows (scripts/windows-deps.sh)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CVM_WIN_DEPS_PREFIX)

find_program(CMAKE_C_COMPILER NAMES ${CVM_MINGW_TRIPLE}-gcc-posix ${CVM_MINGW_TRIPLE}-gcc REQUIRED)
find_program(CMAKE_CXX_COMPILER NAMES ${CVM_MINGW_TRIPLE}-g++-posix ${CVM_MINGW_TRIPLE}-g++ REQUIRED)
find_program(CMAKE_RC_COMPILER NAMES ${CVM_MINGW_TRIPLE}-windres REQUIRED)
find_program(CMAKE_AR NAMES ${CVM_MINGW_TRIPLE}-gcc-ar-posix ${CVM_MINGW_TRIPLE}-ar REQUIRED)
find_program(CMAKE_RANLIB NAMES ${CVM_MINGW_TRIPLE}-gcc-ranlib-posix ${CVM_MINGW_TRIPLE}-ranlib
             REQUIRED)

set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/../scripts/windows-wine.sh")
get_filename_component(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CROSSCOMPILING_EMULATOR}" ABSOLUTE)

set(CMAKE_FIND_ROOT_PATH /usr/${CVM_MINGW_TRIPLE})
if(CVM_WIN_DEPS_PREFIX)
  list(PREPEND CMAKE_FIND_ROOT_PATH "${CVM_WIN_DEPS_PREFIX}")
  # Absolute prefix paths (CURL_DIR, pkg-config style results) are inside the root already.
  list(APPEND CMAKE_PREFIX_PATH "${CVM_WIN_DEPS_PREFIX}")
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Windows' GNU platform file resets CMAKE_FIND_LIBRARY_SUFFIXES to ".dll.a;.a;.lib" after this
# file runs; this hook runs after every project() and puts the static archives first.
set(CMAKE_PROJECT_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/windows-static-find.cmake")

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")
