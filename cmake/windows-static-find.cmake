# Included after every project() by cmake/toolchain-mingw64.cmake (CMAKE_PROJECT_INCLUDE).
# Prefer static archives, so zlib resolves to libz.a and not to the libz.dll.a import library
# (which would make the .exe need zlib1.dll). The mingw system import libraries (libkernel32.a,
# libws2_32.a, ...) are plain .a files and are still found.
set(CMAKE_FIND_LIBRARY_SUFFIXES .a .lib)
