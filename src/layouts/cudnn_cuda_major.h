#pragma once
// The CUDA major a cuDNN build was made for, read from its libraries, for layouts that do not
// say it (NVIDIA's RPM packages, plain folders). cuDNN's libraries name the CUDA libraries of
// their major in two ways:
//  - linked: cuDNN 8's sub-libraries list libcublas.so.11 / libcublasLt.so.11 in DT_NEEDED, and
//    the DLLs import cublas64_11.dll / cublasLt64_11.dll;
//  - loaded at run time: cuDNN 9's sub-libraries keep the names they dlopen in their read-only
//    data ("libcublasLt.so.13" in libcudnn_adv and libcudnn_engines_precompiled, "libnvrtc.so.13"
//    in the latter; "cublasLt64_12.dll" in the DLLs' .rdata).
// Only the section headers and the read-only data sections are read, never a whole library.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cvm {

namespace fs = std::filesystem;

// The CUDA major a library name stands for: libcublasLt.so.12 -> 12, libnvrtc.so.11.2 -> 11,
// libcudart.so.10.0 -> 10, cublas64_11.dll -> 11, cublas64_100.dll -> 10, cudart64_110.dll -> 11,
// nvrtc64_120_0.dll -> 12, cudart64_92.dll -> 9 (any case). nullopt for other names
// (libcuda.so.1 is the driver's, libnvrtc.so.%d a pattern).
std::optional<unsigned> cuda_major_of_library_name(std::string_view name);

// The CUDA library names `file` (an ELF or PE library) links or keeps for loading, in the order
// found, without repeats. Empty when it names none or is neither ELF nor PE.
std::vector<std::string> cuda_libraries_named_by(const fs::path& file);

struct NamedCudaLibrary {
    fs::path file;    // the cuDNN library (its real path)
    std::string name; // the CUDA library it names: "libcublasLt.so.13"
    unsigned major = 0;
};

struct LibrariesCudaMajor {
    std::optional<unsigned> major;          // set when every name found agrees
    std::vector<NamedCudaLibrary> evidence; // every name found, by file
    // "libcudnn_adv.so.9 names libcublasLt.so.12 but libcudnn_ops.so.9 names libnvrtc.so.13"
    // when they disagree; "" otherwise.
    std::string disagreement;
    // "libcudnn_adv.so.9 loads libcublasLt.so.13": the first name of the major, for messages.
    std::string because() const;
};

// Reads every file (duplicates by real path are read once).
LibrariesCudaMajor cuda_major_of_libraries(const std::vector<fs::path>& files);

// The files of a cuDNN in `dir`: libcudnn*.so.<major>[.x.y.z] (any major when 0) and
// cudnn*.dll, as regular files or links to them.
std::vector<fs::path> cudnn_library_files(const fs::path& dir, unsigned major = 0);

} // namespace cvm
