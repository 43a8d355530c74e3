#include "cuda_libraries.h"

#include <cctype>

#include "store/cudnn_libraries.h"

namespace cvm::doctor {

namespace {

LibraryName name_for(const std::string& role, const std::string& linux_base,
                     const std::string& linux_suffix, const std::string& windows_name, TargetOs os,
                     bool main) {
    LibraryName n;
    n.role = role;
    n.file = os == TargetOs::linux_gnu ? linux_base + ".so." + linux_suffix : windows_name;
    n.main = main;
    return n;
}

} // namespace

std::vector<LibraryName> cudnn_libraries(int cudnn_major, TargetOs os) {
    const std::string m = std::to_string(cudnn_major);
    std::vector<LibraryName> out;
    out.push_back(name_for("cudnn", "libcudnn", m, "cudnn64_" + m + ".dll", os, true));
    for (const auto& s : cudnn_sub_libraries(cudnn_major))
        out.push_back(name_for("cudnn_" + s, "libcudnn_" + s, m, "cudnn_" + s + "64_" + m + ".dll",
                               os, false));
    return out;
}

LibraryName cudart_library(int cuda_major, int cuda_minor, TargetOs os) {
    // The soname and DLL name changed scheme twice: per minor up to 10.x, one "11.0"/"110" for
    // all of 11.x, and the bare major from 12 on.
    std::string linux_suffix, windows;
    if (cuda_major <= 10) {
        linux_suffix = std::to_string(cuda_major) + "." + std::to_string(cuda_minor);
        windows = std::to_string(cuda_major) + std::to_string(cuda_minor);
    } else if (cuda_major == 11) {
        linux_suffix = "11.0";
        windows = "110";
    } else {
        linux_suffix = std::to_string(cuda_major);
        windows = std::to_string(cuda_major);
    }
    return name_for("cudart", "libcudart", linux_suffix, "cudart64_" + windows + ".dll", os, true);
}

std::vector<LibraryName> cublas_libraries(int cuda_major, int cuda_minor, TargetOs os) {
    std::string linux_suffix, windows;
    if (cuda_major == 10 && cuda_minor == 0) {
        linux_suffix = "10.0";
        windows = "100";
    } else if (cuda_major < 10) {
        linux_suffix = std::to_string(cuda_major) + "." + std::to_string(cuda_minor);
        windows = std::to_string(cuda_major) + std::to_string(cuda_minor);
    } else {
        linux_suffix = std::to_string(cuda_major);
        windows = std::to_string(cuda_major);
    }
    std::vector<LibraryName> out;
    out.push_back(
        name_for("cublas", "libcublas", linux_suffix, "cublas64_" + windows + ".dll", os, true));
    // cuBLASLt exists from CUDA 10.1 on.
    if (cuda_major > 10 || (cuda_major == 10 && cuda_minor >= 1))
        out.push_back(name_for("cublasLt", "libcublasLt", linux_suffix,
                               "cublasLt64_" + windows + ".dll", os, false));
    return out;
}

std::optional<std::string> so_version_from_file_name(const std::string& file_name) {
    const auto at = file_name.rfind(".so.");
    if (at == std::string::npos) return std::nullopt;
    const std::string version = file_name.substr(at + 4);
    if (version.empty() || version.front() == '.' || version.back() == '.') return std::nullopt;
    for (char c : version)
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return std::nullopt;
    if (version.find("..") != std::string::npos) return std::nullopt;
    return version;
}

std::string so_base_name(const std::string& file_name) {
    const auto at = file_name.find(".so");
    return at == std::string::npos ? file_name : file_name.substr(0, at);
}

std::optional<LinuxLibraryVersion> linux_library_version(const std::string& path,
                                                         const FileSystemView& fs) {
    auto real = fs.real_path(path);
    if (!real || !fs.is_file(*real)) return std::nullopt;
    auto version = so_version_from_file_name(path_basename(*real));
    if (!version) return std::nullopt;
    return LinuxLibraryVersion{*real, *version};
}

std::optional<binary::FourPartVersion> dll_file_version(const std::string& path,
                                                        const FileSystemView& fs) {
    auto src = fs.open(path);
    if (!src) return std::nullopt;
    auto pe = binary::read_pe(*src);
    if (!pe) return std::nullopt;
    return pe.info->file_version;
}

} // namespace cvm::doctor
