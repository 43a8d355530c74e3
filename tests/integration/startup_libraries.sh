#!/usr/bin/env bash
# What `cvm current`, `cvm env`, `cvm hook-env` and every command without downloads or archives
# start with: cvm itself loads neither libcurl nor libarchive nor what they pull in (GnuTLS,
# Kerberos, LDAP, libxml2, ICU, OpenSSL...); those live in the companion program cvm-install, which
# cvm hands install, verify, update and export --oci to (src/cli/CMakeLists.txt), and libcrypto,
# which doctor's hashes of cuDNN files need, is opened when the first one is made
# (install/sha256_openssl.cpp). Linux, dynamic
# builds: what the loader maps is what ldd lists. (How long a start takes is the bench's to say:
# scripts/bench-startup.sh.)
source "$(dirname "$0")/lib.sh"

[[ $(uname -s) == Linux ]] || skip "the libraries a program loads are checked on Linux"
need_tools ldd
libs=$(ldd "$CVM" 2>&1) || skip "$CVM is not a dynamic program: $libs"
for lib in libcurl libarchive libxml2 libicu libgnutls libssh libldap libkrb5 libgssapi libnghttp2 \
    librtmp libidn2 libpsl libzstd liblz4 libbz2 liblzma libssl libcrypto; do
    assert_not_contains "$libs" "$lib" "cvm links $lib, which only installing needs"
done
# They are still there for what needs them: the companion program links them.
if [[ -x $CVM_BIN/cvm-install ]]; then
    install_libs=$(ldd "$CVM_BIN/cvm-install" 2>&1)
    assert_contains "$install_libs" "libarchive" "cvm-install does not link libarchive"
fi

# And what a running `cvm current` has mapped: the same (the loader loads nothing later).
make_toolkit "$TEST_TMP/cuda-12.4" 12.4.1
expect_rc 0 "$CVM" import "$TEST_TMP/cuda-12.4"
expect_rc 0 "$CVM" use --global 12.4
for args in "current" "env --shell bash" "hook-env --shell bash" "list" "--version"; do
    # shellcheck disable=SC2086
    LD_DEBUG=files LD_DEBUG_OUTPUT=$TEST_TMP/ld "$CVM" $args > /dev/null 2>&1 ||
        fail "cvm $args failed"
    loaded=$(cat "$TEST_TMP"/ld.* 2>/dev/null || true)
    rm -f "$TEST_TMP"/ld.*
    [[ -n $loaded ]] || skip "this loader does not answer LD_DEBUG"
    assert_not_contains "$loaded" "libcurl" "cvm $args loaded libcurl"
    assert_not_contains "$loaded" "libarchive" "cvm $args loaded libarchive"
    assert_not_contains "$loaded" "libcrypto" "cvm $args loaded libcrypto"
done
# A command that hashes opens libcrypto when it does: compat_cudnn_owners checks its answers.
echo "ok"
