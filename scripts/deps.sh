# Sourced by the other scripts: installs the Debian packages a step needs, only when missing.
# usage: need_packages pkg...
# CVM_SKIP_PACKAGES=1 skips it (a machine with no package registry that has what is needed).
need_packages() {
    [ "${CVM_SKIP_PACKAGES:-}" = 1 ] && return 0
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "cvm: installing Debian packages: ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    # Another apt (unattended-upgrades on a fresh machine, another checkout's setup) holding dpkg's
    # lock is waited for, not a failure.
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

BUILD_PACKAGES=(build-essential cmake ninja-build pkg-config libcli11-dev libtomlplusplus-dev libarchive-dev
                libcurl4-openssl-dev nlohmann-json3-dev libssl-dev liblzma-dev zlib1g-dev catch2 ca-certificates python3
                musl-tools)
# What the tests run besides the build: real shells, a real Lmod, hyperfine-free (benchmarks are
# separate), archive tools to build test archives, clang for the fuzzers, mingw-w64 and Wine for
# the Windows build; the container clients that read `cvm export --oci`'s images (skopeo, umoci),
# the engines that run them where the machine allows (podman with runc, buildah), python3-venv for
# the virtual environments NVIDIA's wheels are installed into (tests/integration/lib_wheels.sh), and a static
# busybox for the tests' base image.
TEST_PACKAGES=(bash zsh fish tmux python3-venv patchelf man-db groff-base lmod meson jq xz-utils zip unzip libarchive-tools p7zip-full clang libclang-rt-dev file binutils dpkg-dev
               skopeo umoci podman buildah runc busybox-static)

# Debian's packaged CUDA 11.8 (the real scattered layout cvm first failed on) comes from the
# non-free component, which Debian 12's images leave out: the tests that import it (import_layouts,
# shim_real_cuda, compat_use_for) need it, and CI must not skip them. About 1.6 GB to download.
NONFREE_TEST_PACKAGES=(nvidia-cuda-toolkit)
# usage: need_nonfree_packages pkg...   (adds contrib and non-free to the machine's Debian archives
# when apt knows no candidate for them, then installs what is missing as need_packages does)
need_nonfree_packages() {
    [ "${CVM_SKIP_PACKAGES:-}" = 1 ] && return 0
    apt-cache policy "$@" 2>/dev/null | grep -q 'Candidate: [0-9]' && { need_packages "$@"; return; }
    local list=/etc/apt/sources.list.d/cvm-non-free.sources sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "cvm: adding Debian's contrib and non-free components ($list)" >&2
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        # The same archives (a mirror or snapshot included) and suites as the machine's entries.
        sed -e 's/^Components:.*/Components: contrib non-free/' /etc/apt/sources.list.d/debian.sources
    else
        local codename
        codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
        printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s %s-updates\nComponents: contrib non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$codename" "$codename"
    fi | $sudo tee "$list" >/dev/null
    need_packages "$@"
}
