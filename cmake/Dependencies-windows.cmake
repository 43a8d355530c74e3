# Third-party libraries for the mingw-w64 cross build (cmake/toolchain-mingw64.cmake,
# scripts/build-windows.sh). Included from cmake/Dependencies.cmake instead of the Linux lookups.
# It defines the same targets the Linux build uses:
#   CLI11::CLI11, tomlplusplus::tomlplusplus, nlohmann_json::nlohmann_json   headers only
#   LibArchive::LibArchive   static libarchive + liblzma + zlib (+ bcrypt), LIBARCHIVE_STATIC
#   CURL::libcurl            static libcurl with Schannel (+ ws2_32, crypt32, ...), CURL_STATICLIB
#   Catch2::Catch2           Catch2 v2 single header (for CVM_TESTS=ON)
#   Threads::Threads
# There is no OpenSSL for Windows: hashing uses Windows' BCrypt (link `bcrypt`, a system DLL).
#
# Inputs (scripts/build-windows.sh sets both; else taken from the environment variables of the
# same names, which `eval "$(scripts/windows-deps.sh --env)"` exports):
#   CVM_WIN_DEPS_PREFIX   prefix-<key>/ made by scripts/windows-deps.sh
#   CVM_WIN_HEADERS_DIR   headers-<key>/include with CLI/, toml++/ and nlohmann/ from Debian

# <windows.h> without the min/max macros that break std::min/std::max.
add_compile_definitions(NOMINMAX)

if(NOT CVM_WIN_HEADERS_DIR AND DEFINED ENV{CVM_WIN_HEADERS_DIR})
  set(CVM_WIN_HEADERS_DIR "$ENV{CVM_WIN_HEADERS_DIR}")
endif()
set(CVM_WIN_HEADERS_DIR "${CVM_WIN_HEADERS_DIR}" CACHE PATH
    "Folder with the CLI/, toml++/ and nlohmann/ headers (scripts/windows-deps.sh)")

if(NOT CVM_WIN_DEPS_PREFIX OR NOT EXISTS "${CVM_WIN_DEPS_PREFIX}/.cvm-deps-complete")
  message(FATAL_ERROR "CVM_WIN_DEPS_PREFIX='${CVM_WIN_DEPS_PREFIX}' is not a complete Windows "
                      "dependency prefix; build with scripts/build-windows.sh (it runs "
                      "scripts/windows-deps.sh and passes the prefix)")
endif()
foreach(_cvm_dir CLI toml++ nlohmann)
  if(NOT IS_DIRECTORY "${CVM_WIN_HEADERS_DIR}/${_cvm_dir}")
    message(FATAL_ERROR "CVM_WIN_HEADERS_DIR='${CVM_WIN_HEADERS_DIR}' has no ${_cvm_dir}/ folder; "
                        "build with scripts/build-windows.sh")
  endif()
endforeach()
unset(_cvm_dir)

# A new prefix (other Debian source versions, a changed recipe) must not leave find results of
# the old one in the cache: forget every cache entry that points into the previous prefix.
if(DEFINED CACHE{_CVM_WIN_DEPS_PREFIX_USED}
   AND NOT "${_CVM_WIN_DEPS_PREFIX_USED}" STREQUAL "${CVM_WIN_DEPS_PREFIX}")
  get_property(_cvm_vars DIRECTORY PROPERTY CACHE_VARIABLES)
  foreach(_cvm_var IN LISTS _cvm_vars)
    get_property(_cvm_value CACHE ${_cvm_var} PROPERTY VALUE)
    string(FIND "${_cvm_value}" "${_CVM_WIN_DEPS_PREFIX_USED}" _cvm_pos)
    if(_cvm_pos GREATER -1)
      unset(${_cvm_var} CACHE)
    endif()
  endforeach()
  message(STATUS "Windows dependencies moved to ${CVM_WIN_DEPS_PREFIX}; old find results dropped")
  unset(_cvm_vars)
  unset(_cvm_var)
  unset(_cvm_value)
  unset(_cvm_pos)
endif()
set(_CVM_WIN_DEPS_PREFIX_USED "${CVM_WIN_DEPS_PREFIX}" CACHE INTERNAL "prefix of the last configure")

# Header-only libraries. Their own folder (never /usr/include, whose glibc headers would shadow
# the mingw ones); imported targets make them system includes, so their warnings stay quiet.
foreach(_cvm_target CLI11::CLI11 tomlplusplus::tomlplusplus nlohmann_json::nlohmann_json)
  if(NOT TARGET ${_cvm_target})
    add_library(${_cvm_target} INTERFACE IMPORTED)
    set_target_properties(${_cvm_target} PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${CVM_WIN_HEADERS_DIR}")
  endif()
endforeach()
unset(_cvm_target)
# toml++ compiled once, into cvm's own static library (src/toml/toml.cpp), as on Linux.
set_property(TARGET tomlplusplus::tomlplusplus APPEND PROPERTY
  INTERFACE_COMPILE_DEFINITIONS TOML_HEADER_ONLY=0)
add_library(cvm_toml STATIC ${PROJECT_SOURCE_DIR}/src/toml/toml.cpp)
target_link_libraries(cvm_toml PUBLIC tomlplusplus::tomlplusplus)

# LibArchive::LibArchive (with LibLZMA::LibLZMA, ZLIB::ZLIB) from the prefix.
find_package(CvmWindowsDeps REQUIRED CONFIG
  PATHS "${CVM_WIN_DEPS_PREFIX}/lib/cmake/CvmWindowsDeps"
  NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)

if(CVM_WITH_NETWORK)
  # curl's own package config (CURL::libcurl, CURL_STATICLIB, system libraries); it loads ZLIB
  # through FindZLIB, which finds the mingw libz.a (cmake/windows-static-find.cmake).
  find_package(CURL REQUIRED CONFIG
    PATHS "${CVM_WIN_DEPS_PREFIX}/lib/cmake/CURL"
    NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  # archive.h includes <windows.h>, which pulls in the old winsock.h unless WIN32_LEAN_AND_MEAN;
  # curl.h then warns "Please include winsock2.h before windows.h" (an error with -Werror).
  # Only the users of libcurl get the define (it also drops winioctl.h, shellapi.h, ...).
  set_property(TARGET CURL::libcurl APPEND PROPERTY
    INTERFACE_COMPILE_DEFINITIONS WIN32_LEAN_AND_MEAN)
endif()

# Catch2 v2 is one header too: unit tests can be cross-built (CVM_TESTS=ON) and run under Wine,
# ctest starting them through CMAKE_CROSSCOMPILING_EMULATOR (scripts/windows-wine.sh).
if(NOT TARGET Catch2::Catch2 AND IS_DIRECTORY "${CVM_WIN_HEADERS_DIR}/catch2")
  add_library(Catch2::Catch2 INTERFACE IMPORTED)
  set_target_properties(Catch2::Catch2 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${CVM_WIN_HEADERS_DIR}")
endif()

find_package(Threads REQUIRED)
