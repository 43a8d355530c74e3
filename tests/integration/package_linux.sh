#!/usr/bin/env bash
# The Linux packages (scripts/package.sh, CPack from this build): the .deb's control data names
# its real dependencies, and cvm works from the extracted .deb and from the tarball extracted into
# a prefix: registry, companions (cvm-install, cvm-probe), shims that start the packaged cvm-shim,
# and shims that keep working when a newer package is extracted over the same prefix.
source "$(dirname "$0")/lib.sh"
need_tools cpack dpkg-deb dpkg-shlibdeps file tar
[[ -f ${CVM_BUILD_DIR:?}/CPackConfig.cmake ]] || fail "$CVM_BUILD_DIR has no CPackConfig.cmake (CMakeLists.txt includes cmake/Packaging.cmake on Linux)"

dist="$TEST_TMP/dist"
"$CVM_SOURCE_DIR/scripts/package.sh" --linux-only --build-dir "$CVM_BUILD_DIR" --out "$dist" >"$TEST_TMP/package.log" 2>&1 ||
    fail "scripts/package.sh failed: $(tail -5 "$TEST_TMP/package.log")"
version=$(sed -n 's/^project(cvm VERSION \([0-9.]*\).*/\1/p' "$CVM_SOURCE_DIR/CMakeLists.txt")
deb="$dist/cvm_${version}_amd64.deb"
tgz="$dist/cvm-${version}-linux-x86_64.tar.gz"
[[ -f $deb && -f $tgz ]] || fail "missing packages: $(ls "$dist")"

# The .deb's dependencies come from the programs' libraries (dpkg-shlibdeps).
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libarchive13 libcurl4 libc6; do assert_contains "$depends" "$lib" "Depends of the .deb"; done
assert_eq "$(dpkg-deb -f "$deb" Package)" cvm
assert_eq "$(dpkg-deb -f "$deb" Architecture)" amd64
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/cvm ./usr/libexec/cvm/cvm-shim ./usr/libexec/cvm/cvm-probe ./usr/share/cvm/registry/cuda.toml \
    ./usr/share/man/man1/cvm.1 ./usr/share/bash-completion/completions/cvm ./usr/share/zsh/vendor-completions/_cvm \
    ./usr/share/fish/vendor_completions.d/cvm.fish; do
    assert_contains "$contents" "$f" "the .deb's files"
done

# check_tree PREFIX: the core commands from an unpacked package.
check_tree() {
    local prefix=$1 root="$TEST_TMP/store-$2"
    local cvm="$prefix/bin/cvm"
    export CVM_ROOT=$root
    expect_rc 0 "$cvm" --version
    assert_contains "$OUT" "$version"
    # The registry beside the programs (share/cvm/registry), not the source tree's.
    expect_rc 0 "$cvm" list --available
    assert_contains "$OUT" "12.4.1"
    # cvm-install and cvm-probe are found in libexec/cvm.
    expect_rc 0 "$cvm" install --help
    expect_rc 0 "$cvm" probe --help
    make_toolkit "$TEST_TMP/cuda-$2" 12.4.1
    expect_rc 0 "$cvm" import "$TEST_TMP/cuda-$2"
    mkdir -p "$TEST_TMP/proj-$2"
    (cd "$TEST_TMP/proj-$2" && "$cvm" use 12.4 >/dev/null 2>&1) || fail "cvm use from $prefix"
    [[ $(readlink "$root/shims/nvcc") == "$prefix/libexec/cvm/cvm-shim" ]] ||
        fail "the nvcc shim should start $prefix/libexec/cvm/cvm-shim, not $(readlink "$root/shims/nvcc")"
    (cd "$TEST_TMP/proj-$2" && "$root/shims/nvcc" -c x.cu) >"$TEST_TMP/nvcc.out" || fail "the shim from $prefix failed"
    assert_contains "$(cat "$TEST_TMP/nvcc.out")" "fake nvcc 12.4.1"
}

mkdir -p "$TEST_TMP/deb"
dpkg-deb -x "$deb" "$TEST_TMP/deb"
check_tree "$TEST_TMP/deb/usr" deb
# The packaged completion script is the one the packaged cvm prints.
assert_eq "$(cat "$TEST_TMP/deb/usr/share/bash-completion/completions/cvm")" "$("$TEST_TMP/deb/usr/bin/cvm" completions bash)" \
    "the packaged bash completion"
grep -q '^\.TH' "$TEST_TMP/deb/usr/share/man/man1/cvm.1" || fail "the packaged man page has no .TH line"

# The tarball, extracted into a prefix as the README says.
mkdir -p "$TEST_TMP/prefix"
tar xzf "$tgz" --strip-components=1 -C "$TEST_TMP/prefix"
for f in share/man/man1/cvm.1 share/bash-completion/completions/cvm share/zsh/vendor-completions/_cvm \
    share/fish/vendor_completions.d/cvm.fish; do
    [[ -s $TEST_TMP/prefix/$f ]] || fail "the tarball has no $f"
done
check_tree "$TEST_TMP/prefix" tgz
# An upgrade: the package extracted again over the same prefix replaces cvm-shim in place; the
# shims made before still run the selection's nvcc.
tar xzf "$tgz" --strip-components=1 -C "$TEST_TMP/prefix"
(cd "$TEST_TMP/proj-tgz" && "$CVM_ROOT/shims/nvcc" -c x.cu) >"$TEST_TMP/nvcc2.out" || fail "the shim after the upgrade failed"
assert_contains "$(cat "$TEST_TMP/nvcc2.out")" "fake nvcc 12.4.1"
echo "package_linux: ok"
