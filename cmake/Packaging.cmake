# Packages made with CPack from the install rules (scripts/package.sh drives it):
#   cvm_<version>_amd64.deb              programs in /usr/bin and /usr/libexec/cvm, the registry in
#                                        /usr/share/cvm/registry, completions and the man page
#   cvm-<version>-linux-x86_64.tar.gz    the same tree under one folder, to extract into a prefix
#                                        such as ~/.local (--strip-components=1)
# The Windows zip is put together by scripts/package.sh from the cross build.
set(CPACK_PACKAGE_NAME cvm)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "cvm developers")
set(CPACK_PACKAGE_CONTACT "cvm developers <cvm-dev@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Version manager for NVIDIA's CUDA toolkit and cuDNN")
set(CPACK_PACKAGE_DESCRIPTION "cvm keeps CUDA toolkits and cuDNN builds side by side in a user-level \
store, selects them per project (.cudaversion), runs CUDA's programs through shims and explains \
which cuDNN a program really loads (cvm doctor, cvm probe).")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_FILE_NAME "cvm-${PROJECT_VERSION}-linux-x86_64") # the .deb names itself (below)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # cvm_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The real dependencies: dpkg-shlibdeps reads them from the programs' shared libraries.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")
# The .deb installs under /usr; the tarball keeps bin/, libexec/, share/ at its top.
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/PackagingPerGenerator.cmake)
include(CPack)
