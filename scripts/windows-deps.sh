#!/usr/bin/env bash
# Build the third-party libraries of cvm for 64-bit Windows (mingw-w64), as static libraries, from
# Debian's source packages, and cache them:
#
#   liblzma    (xz-utils source package)   static, for .tar.xz
#   libarchive (libarchive source package) static, with zlib + liblzma, CNG (bcrypt) digests
#   libcurl    (curl source package)       static, Schannel TLS, zlib, no OpenSSL/ssh/idn
#   zlib       from Debian's libz-mingw-w64-dev (libz.a in /usr/x86_64-w64-mingw32)
#   CLI11, toml++, nlohmann-json, Catch2 v2: the headers of Debian's packages, copied into a
#              separate folder (never -I/usr/include: glibc headers would shadow mingw's)
#
# Usage: scripts/windows-deps.sh [--print-prefix|--print-headers|--env] [--force] [--no-install]
#   Default: prepare everything, log to stderr, print "PREFIX=..." and "HEADERS=..." lines.
#   --env: print "export CVM_WIN_DEPS_PREFIX=... CVM_WIN_HEADERS_DIR=..." lines for eval, e.g.
#          eval "$(scripts/windows-deps.sh --env)" && cmake --preset mingw && cmake --build --preset mingw
#   --force: rebuild the libraries even when cached. --no-install: never run apt-get.
#
# The cache lives in ${CVM_WIN_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/cvm/windows-deps}:
#   prefix-<key>/   installed libraries; <key> hashes the source package versions, the compiler
#                   and zlib package versions and the build functions of this script, so a
#                   change to any of them builds a new prefix.
#                   A complete prefix holds .cvm-deps-complete (and versions.txt).
#   headers-<key>/  CLI11, toml++, nlohmann, catch2 headers (keyed by their package versions)
#   src/, build-<key>/  apt-get source downloads and build trees, removed after a build
# A second run with a complete prefix only checks versions (no network, ~1 s).
#
# Runs as root on a fresh Debian 12 (CI): installs missing packages with apt-get and enables a
# deb-src entry for deb.debian.org if none exists. As another user it tells what to install.
set -euo pipefail

SCRIPT_PATH="$(readlink -f "${BASH_SOURCE[0]}")"
CACHE="${CVM_WIN_DEPS:-${XDG_CACHE_HOME:-$HOME/.cache}/cvm/windows-deps}"
TRIPLE=x86_64-w64-mingw32
JOBS="${CVM_JOBS:-$(nproc 2>/dev/null || echo 2)}"

mode=all
force=0
install_packages=1
for arg in "$@"; do
  case "$arg" in
    --print-prefix) mode=prefix ;;
    --print-headers) mode=headers ;;
    --env) mode="env" ;;
    --force) force=1 ;;
    --no-install) install_packages=0 ;;
    -h | --help)
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$SCRIPT_PATH"
      exit 0
      ;;
    *)
      echo "windows-deps.sh: unknown argument '$arg' (see --help)" >&2
      exit 2
      ;;
  esac
done

log() { echo "[windows-deps] $*" >&2; }
die() {
  echo "[windows-deps] error: $*" >&2
  exit 1
}

# ---------------------------------------------------------------------------------------------
# Host packages
# ---------------------------------------------------------------------------------------------
PACKAGES=(
  gcc-mingw-w64-x86-64-posix g++-mingw-w64-x86-64-posix binutils-mingw-w64-x86-64
  mingw-w64-x86-64-dev libz-mingw-w64-dev
  wine wine64
  dpkg-dev cmake ninja-build make xz-utils
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev catch2
)

as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}

apt_updated=0
apt_update() {
  if [[ $apt_updated -eq 0 ]]; then
    log "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 ||
      die "apt-get update failed (run as root, or install the packages yourself)"
    apt_updated=1
  fi
}

ensure_packages() {
  local missing=() p installed
  # One dpkg-query for all (unknown packages print nothing and make it fail: ignored).
  installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" 2>/dev/null |
    awk '$NF == "installed" { print $1 }' || true)"
  for p in "${PACKAGES[@]}"; do
    grep -qx "$p" <<<"$installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  if [[ $install_packages -eq 0 ]]; then
    die "missing packages: ${missing[*]} (apt-get install ${missing[*]})"
  fi
  log "installing: ${missing[*]}"
  apt_update
  # (another apt holding dpkg's lock is waited for)
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    "${missing[@]}" >&2 ||
    die "could not install ${missing[*]}; as root run: apt-get install ${missing[*]}"
}

# deb-src: Debian 12 images ship /etc/apt/sources.list.d/debian.sources with "Types: deb" only.
ensure_deb_src() {
  local target=/etc/apt/sources.list.d/cvm-deb-src.sources
  if [[ ! -e $target ]]; then
    [[ $install_packages -eq 1 ]] || die "no deb-src entry in /etc/apt (needed for apt-get source)"
    log "enabling deb-src entries in $target"
    local tmp
    tmp="$(mktemp)"
    if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
      # Same archives and suites as the binary entries, as source entries.
      sed -e 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources >"$tmp"
    else
      local codename
      # shellcheck disable=SC1091
      codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
      cat >"$tmp" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename $codename-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: $codename-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    as_root install -m 0644 "$tmp" "$target" || die "cannot write $target (run as root)"
    rm -f "$tmp"
  fi
  apt_updated=0
  apt_update
  source_versions || die "apt-get source finds no xz-utils/libarchive/curl even with $target"
}

# Versions of the source packages apt-get source would fetch: sets XZ_VER, LA_VER, CURL_VER
# (e.g. 3.6.2-1+deb12u5). One apt-get call: it only reads the local package lists.
# The answer is remembered until the Sources lists change (apt-get update), since apt re-reads
# the whole Sources index for it (seconds on a busy machine).
source_versions() {
  local uris lists memo=""
  lists="$(stat -c '%n %s %Y' /var/lib/apt/lists/*_Sources* 2>/dev/null | sha256sum | cut -c1-16)"
  [[ -n $lists ]] && memo="$CACHE/.source-versions-$lists"
  if [[ -n $memo && -f $memo ]]; then
    # shellcheck disable=SC1090
    source "$memo"
    [[ -n ${XZ_VER:-} && -n ${LA_VER:-} && -n ${CURL_VER:-} ]] && return 0
  fi
  uris="$(apt-get source --print-uris -qq xz-utils libarchive curl 2>/dev/null)" || return 1
  XZ_VER="$(dsc_version "$uris" xz-utils)" && LA_VER="$(dsc_version "$uris" libarchive)" &&
    CURL_VER="$(dsc_version "$uris" curl)" || return 1
  if [[ -n $memo ]]; then
    mkdir -p "$CACHE"
    rm -f "$CACHE"/.source-versions-*
    printf 'XZ_VER=%q\nLA_VER=%q\nCURL_VER=%q\n' "$XZ_VER" "$LA_VER" "$CURL_VER" >"$memo"
  fi
}
dsc_version() { # uris package
  local dsc
  dsc="$(echo "$1" | awk '{print $2}' | grep "^$2_.*\\.dsc\$" | head -n1)"
  [[ -n $dsc ]] || return 1
  dsc="${dsc%.dsc}"
  echo "${dsc#*_}"
}

pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo none; }

# ---------------------------------------------------------------------------------------------
# Header-only libraries
# ---------------------------------------------------------------------------------------------
prepare_headers() {
  local key dir
  key="$(printf '%s\n' "cli11=$(pkg_version libcli11-dev)" \
    "tomlplusplus=$(pkg_version libtomlplusplus-dev)" \
    "nlohmann=$(pkg_version nlohmann-json3-dev)" "catch2=$(pkg_version catch2)" |
    sha256sum | cut -c1-12)"
  dir="$CACHE/headers-$key"
  if [[ ! -f $dir/.complete ]]; then
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp/include"
    local d
    for d in CLI toml++ nlohmann catch2; do
      [[ -d /usr/include/$d ]] ||
        die "/usr/include/$d missing (apt-get install libcli11-dev libtomlplusplus-dev nlohmann-json3-dev catch2)"
      cp -a "/usr/include/$d" "$dir.tmp/include/"
    done
    touch "$dir.tmp/.complete"
    mv "$dir.tmp" "$dir"
    local other
    for other in "$CACHE"/headers-*; do
      [[ $other != "$dir" ]] && rm -rf "$other"
    done
  fi
  HEADERS="$dir/include"
}

# ---------------------------------------------------------------------------------------------
# Libraries
# ---------------------------------------------------------------------------------------------
cmake_cross() {
  # Common cross-compiling arguments for the dependency builds (their own toolchain, without
  # cvm's static-find hook, with explicit zlib/lzma paths).
  local src=$1 bld=$2
  shift 2
  cmake -S "$src" -B "$bld" -G Ninja \
    -DCMAKE_SYSTEM_NAME=Windows -DCMAKE_SYSTEM_PROCESSOR=x86_64 \
    -DCMAKE_C_COMPILER="$TRIPLE-gcc-posix" -DCMAKE_CXX_COMPILER="$TRIPLE-g++-posix" \
    -DCMAKE_RC_COMPILER="$TRIPLE-windres" \
    -DCMAKE_AR="$(command -v $TRIPLE-ar)" -DCMAKE_RANLIB="$(command -v $TRIPLE-ranlib)" \
    -DCMAKE_CROSSCOMPILING_EMULATOR="$WINE_WRAPPER" \
    -DCMAKE_FIND_ROOT_PATH="$PREFIX;/usr/$TRIPLE" \
    -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY \
    -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_PACKAGE=ONLY \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DCMAKE_C_FLAGS="-O2" \
    -DBUILD_SHARED_LIBS=OFF \
    -DZLIB_INCLUDE_DIR="/usr/$TRIPLE/include" -DZLIB_LIBRARY="/usr/$TRIPLE/lib/libz.a" \
    "$@" >"$bld.configure.log" 2>&1 || {
    tail -n 40 "$bld.configure.log" >&2
    die "configure of $(basename "$src") failed; log: $bld.configure.log"
  }
}

build_install() {
  local bld=$1
  cmake --build "$bld" -j "$JOBS" >"$bld.build.log" 2>&1 || {
    tail -n 40 "$bld.build.log" >&2
    die "build in $bld failed; log: $bld.build.log"
  }
  cmake --install "$bld" >>"$bld.build.log" 2>&1 || die "install from $bld failed"
}

fetch_source() { # package version -> prints the unpacked source dir
  local pkg=$1 ver=$2 dir="$CACHE/src/$1_$2"
  if [[ ! -f $dir/.complete ]]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    log "apt-get source $pkg=$ver"
    (cd "$dir" && apt-get source -qq "$pkg=$ver" >apt-source.log 2>&1) || {
      tail -n 20 "$dir/apt-source.log" >&2
      die "apt-get source $pkg=$ver failed"
    }
    touch "$dir/.complete"
  fi
  local unpacked
  unpacked="$(find "$dir" -mindepth 1 -maxdepth 1 -type d | head -n1)"
  [[ -n $unpacked ]] || die "no unpacked source in $dir"
  echo "$unpacked"
}

build_libs() {
  local work="$CACHE/build-$KEY"
  rm -rf "$PREFIX" "$work"
  mkdir -p "$PREFIX" "$work"

  local xz_src la_src curl_src
  xz_src="$(fetch_source xz-utils "$XZ_VER")"
  la_src="$(fetch_source libarchive "$LA_VER")"
  curl_src="$(fetch_source curl "$CURL_VER")"

  local t0=$SECONDS
  log "building liblzma (xz-utils $XZ_VER)"
  cmake_cross "$xz_src" "$work/xz" -DCMAKE_POLICY_DEFAULT_CMP0069=NEW
  # Only the library: the xz/xzdec programs are not needed.
  cmake --build "$work/xz" -j "$JOBS" --target liblzma >"$work/xz.build.log" 2>&1 || {
    tail -n 40 "$work/xz.build.log" >&2
    die "liblzma build failed; log: $work/xz.build.log"
  }
  mkdir -p "$PREFIX/lib" "$PREFIX/include"
  cp "$work/xz/liblzma.a" "$PREFIX/lib/liblzma.a"
  cp -r "$xz_src/src/liblzma/api/lzma" "$xz_src/src/liblzma/api/lzma.h" "$PREFIX/include/"
  log "liblzma done ($((SECONDS - t0)) s)"

  t0=$SECONDS
  log "building libarchive $LA_VER"
  # libarchive's configure check looks for "Bcrypt.h" (CNG digests); mingw-w64 on a
  # case-sensitive file system has bcrypt.h, which is what the sources include.
  mkdir -p "$work/compat"
  echo '#include <bcrypt.h>' >"$work/compat/Bcrypt.h"
  cmake_cross "$la_src" "$work/libarchive" \
    -DENABLE_ZLIB=ON -DENABLE_LZMA=ON \
    -DLIBLZMA_INCLUDE_DIR="$PREFIX/include" -DLIBLZMA_LIBRARY="$PREFIX/lib/liblzma.a" \
    -DLIBLZMA_HAS_AUTO_DECODER=ON -DLIBLZMA_HAS_EASY_ENCODER=ON -DLIBLZMA_HAS_LZMA_PRESET=ON \
    -DWINDOWS_VERSION=WIN7 -DENABLE_CNG=ON \
    -DPOSIX_REGEX_LIB=NONE -DCMAKE_C_FLAGS="-O2 -I$work/compat" \
    -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF -DENABLE_LIBB2=OFF \
    -DENABLE_LZ4=OFF -DENABLE_LZO=OFF -DENABLE_ZSTD=OFF -DENABLE_BZip2=OFF \
    -DENABLE_LIBXML2=OFF -DENABLE_EXPAT=OFF -DENABLE_PCREPOSIX=OFF -DENABLE_LIBGCC=OFF \
    -DENABLE_XATTR=OFF -DENABLE_ACL=OFF -DENABLE_ICONV=OFF \
    -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_TEST=OFF \
    -DENABLE_WERROR=OFF -DENABLE_INSTALL=ON
  cmake --build "$work/libarchive" -j "$JOBS" --target archive_static \
    >"$work/libarchive.build.log" 2>&1 || {
    tail -n 40 "$work/libarchive.build.log" >&2
    die "libarchive build failed; log: $work/libarchive.build.log"
  }
  local la_lib
  la_lib="$(find "$work/libarchive/libarchive" -maxdepth 1 -name 'libarchive*.a' ! -name '*.dll.a' |
    head -n1)"
  [[ -n $la_lib ]] || die "libarchive static library not found in $work/libarchive/libarchive"
  cp "$la_lib" "$PREFIX/lib/libarchive.a"
  cp "$la_src/libarchive/archive.h" "$la_src/libarchive/archive_entry.h" "$PREFIX/include/"
  log "libarchive done ($((SECONDS - t0)) s)"

  t0=$SECONDS
  log "building libcurl $CURL_VER (Schannel)"
  cmake_cross "$curl_src" "$work/curl" \
    -DBUILD_CURL_EXE=OFF -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF -DCURL_DISABLE_LDAP=ON \
    -DCURL_DISABLE_LDAPS=ON \
    -DCURL_USE_SCHANNEL=ON -DCURL_USE_OPENSSL=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF \
    -DCURL_USE_GSSAPI=OFF -DUSE_LIBIDN2=OFF -DUSE_NGHTTP2=OFF -DCURL_ZLIB=ON \
    -DCURL_BROTLI=OFF -DCURL_ZSTD=OFF -DENABLE_UNICODE=ON -DCURL_STATIC_CRT=OFF \
    -DPICKY_COMPILER=OFF -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none
  build_install "$work/curl"
  log "libcurl done ($((SECONDS - t0)) s)"

  # One CMake package for the two libraries: cmake/Dependencies-windows.cmake loads it.
  mkdir -p "$PREFIX/lib/cmake/CvmWindowsDeps"
  cat >"$PREFIX/lib/cmake/CvmWindowsDeps/CvmWindowsDepsConfig.cmake" <<'EOF'
# Generated by scripts/windows-deps.sh: static libarchive and liblzma for mingw-w64.
get_filename_component(_cvm_wd_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET ZLIB::ZLIB)
  add_library(ZLIB::ZLIB STATIC IMPORTED)
  set_target_properties(ZLIB::ZLIB PROPERTIES
    IMPORTED_LOCATION "/usr/x86_64-w64-mingw32/lib/libz.a"
    INTERFACE_INCLUDE_DIRECTORIES "/usr/x86_64-w64-mingw32/include")
endif()
if(NOT TARGET LibLZMA::LibLZMA)
  add_library(LibLZMA::LibLZMA STATIC IMPORTED)
  set_target_properties(LibLZMA::LibLZMA PROPERTIES
    IMPORTED_LOCATION "${_cvm_wd_prefix}/lib/liblzma.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_cvm_wd_prefix}/include"
    INTERFACE_COMPILE_DEFINITIONS "LZMA_API_STATIC")
endif()
if(NOT TARGET LibArchive::LibArchive)
  add_library(LibArchive::LibArchive STATIC IMPORTED)
  set_target_properties(LibArchive::LibArchive PROPERTIES
    IMPORTED_LOCATION "${_cvm_wd_prefix}/lib/libarchive.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_cvm_wd_prefix}/include"
    INTERFACE_COMPILE_DEFINITIONS "LIBARCHIVE_STATIC"
    INTERFACE_LINK_LIBRARIES "LibLZMA::LibLZMA;ZLIB::ZLIB;bcrypt")
endif()
set(LibArchive_FOUND TRUE)
set(LibLZMA_FOUND TRUE)
unset(_cvm_wd_prefix)
EOF
}

# ---------------------------------------------------------------------------------------------
main() {
  command -v dpkg-query >/dev/null 2>&1 || die "this script needs Debian (dpkg/apt)"
  ensure_packages
  source_versions || ensure_deb_src

  WINE_WRAPPER="$(dirname "$SCRIPT_PATH")/windows-wine.sh"
  WINE_WRAPPER="$(readlink -f "$WINE_WRAPPER")"
  [[ -x $WINE_WRAPPER ]] || die "$WINE_WRAPPER missing or not executable"

  local gcc_ver zlib_ver script_sum
  gcc_ver="$(pkg_version gcc-mingw-w64-x86-64-posix)"
  zlib_ver="$(pkg_version libz-mingw-w64-dev)"
  # The recipe: the build functions as bash sees them (comments and layout do not count).
  script_sum="$(declare -f cmake_cross build_install fetch_source build_libs | sha256sum |
    cut -c1-16)"
  VERSIONS="$(printf '%s\n' "xz-utils=$XZ_VER" "libarchive=$LA_VER" "curl=$CURL_VER" \
    "gcc-mingw-w64-x86-64-posix=$gcc_ver" "libz-mingw-w64-dev=$zlib_ver" \
    "recipe=$script_sum")"
  KEY="$(echo "$VERSIONS" | sha256sum | cut -c1-12)"
  PREFIX="$CACHE/prefix-$KEY"

  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"
  flock 9 # one builder at a time; a waiting run then finds the prefix complete

  prepare_headers
  if [[ $force -eq 1 || ! -f $PREFIX/.cvm-deps-complete ]]; then
    local t_start=$SECONDS
    log "building Windows libraries into $PREFIX"
    build_libs
    echo "$VERSIONS" >"$PREFIX/versions.txt"
    touch "$PREFIX/.cvm-deps-complete"
    # Sources and build trees are 100 MB; a rebuild fetches them again in seconds.
    rm -rf "$CACHE/build-$KEY" "$CACHE/src"
    log "done in $((SECONDS - t_start)) s"
    # Leftovers of failed or interrupted builds (other complete prefixes are kept).
    local d
    for d in "$CACHE"/build-* "$CACHE"/prefix-*; do
      [[ -e $d && ! -f $d/.cvm-deps-complete ]] && rm -rf "$d"
    done
  else
    log "cached: $PREFIX"
  fi

  case "$mode" in
    prefix) echo "$PREFIX" ;;
    headers) echo "$HEADERS" ;;
    env)
      printf 'export CVM_WIN_DEPS_PREFIX=%q\n' "$PREFIX"
      printf 'export CVM_WIN_HEADERS_DIR=%q\n' "$HEADERS"
      ;;
    all)
      echo "PREFIX=$PREFIX"
      echo "HEADERS=$HEADERS"
      ;;
  esac
}

main
