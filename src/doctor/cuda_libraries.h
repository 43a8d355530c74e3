#pragma once
// The file names of the CUDA and cuDNN libraries the doctor follows, and readers for the
// versions their files carry (the real file name of a Linux .so, the VS_VERSIONINFO of a DLL).

#include "binary/pe_reader.h"
#include "file_system_view.h"

#include <optional>
#include <string>
#include <vector>

namespace cvm::doctor {

enum class TargetOs { linux_gnu, windows };

struct LibraryName {
    std::string role;  // "cudnn", "cudnn_ops_infer", "cudart", "cublas", "cublasLt", ...
    std::string file;  // "libcudnn_ops_infer.so.8", "cudnn_ops_infer64_8.dll"
    bool main = false; // the library a program links; the others are loaded by it
};

// cuDNN's main library first, then its sub-libraries (store/cudnn_libraries.h): none for 7 and
// earlier; 8: ops/cnn/adv x infer/train; 9 on: ops, cnn, adv, graph, heuristic, engines_*.
std::vector<LibraryName> cudnn_libraries(int cudnn_major, TargetOs os);

// The CUDA runtime of a toolkit: libcudart.so.10.2, libcudart.so.11.0 (every 11.x),
// libcudart.so.12; cudart64_102.dll, cudart64_110.dll, cudart64_12.dll, cudart64_13.dll.
LibraryName cudart_library(int cuda_major, int cuda_minor, TargetOs os);

// cuBLAS and cuBLASLt of a toolkit (libcublas.so.11, cublas64_11.dll, cublasLt64_11.dll, ...).
std::vector<LibraryName> cublas_libraries(int cuda_major, int cuda_minor, TargetOs os);

// The version in a Linux library file name after ".so.": "libcudnn.so.8.1.0" gives "8.1.0",
// "libcudnn.so.8" gives "8", "libcudnn.so" gives nullopt.
std::optional<std::string> so_version_from_file_name(const std::string& file_name);
// The base name of a versioned .so: "libcudnn_ops.so.9.1.0" gives "libcudnn_ops".
std::string so_base_name(const std::string& file_name);

struct LinuxLibraryVersion {
    std::string real_path; // after following symbolic links
    std::string version;   // from the real file name, e.g. "8.1.0"
};
// Follows `path` (e.g. .../libcudnn.so.8 -> libcudnn.so.8.1.0) and reads the version from the
// real file's name; nullopt when the file is missing or its name carries no version.
std::optional<LinuxLibraryVersion> linux_library_version(const std::string& path,
                                                         const FileSystemView& fs);

// The fixed file version (VS_FIXEDFILEINFO) of a DLL, "a.b.c.d"; nullopt when the file has none.
std::optional<binary::FourPartVersion> dll_file_version(const std::string& path,
                                                        const FileSystemView& fs);

} // namespace cvm::doctor
