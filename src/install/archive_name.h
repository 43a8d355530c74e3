#pragma once
// What an archive's file name says: the family (legacy cuDNN, cuDNN redist, CUDA component,
// wheel), the product, its version, the CUDA it was built for and the platform.
// The name is a claim to check against the contents, never the only evidence.
#include <optional>
#include <string>
#include <string_view>

namespace cvm::install {

enum class ArchiveFamily {
    LegacyCudnn,   // cudnn-11.2-windows-x64-v8.1.0.77.zip, cudnn-11.2-linux-x64-v8.1.0.77.tgz
    CudnnRedist,   // cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz
    CudaComponent, // cuda_nvcc-linux-x86_64-11.8.89-archive.tar.xz
    CudnnWheel,    // nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl
    CudaWheel,     // nvidia_cuda_runtime_cu12-12.4.127-py3-none-manylinux2014_x86_64.whl
    NcclArchive,   // nccl_2.21.5-1+cuda12.4_x86_64.txz (NVIDIA's redist/nccl folder)
    NcclWheel,     // nvidia_nccl_cu12-2.21.5-py3-none-manylinux2014_x86_64.whl
};

const char* family_name(ArchiveFamily family);

struct ArchiveName {
    ArchiveFamily family = ArchiveFamily::CudnnRedist;
    std::string product; // "cudnn", "nccl", or the CUDA component ("cuda_nvcc", "cuda_runtime")
    std::string version;       // as written: "8.1.0.77", "11.8.89"
    std::string cuda_variant;  // the CUDA it is built for: "11.2", "12"; empty when not said
    std::string platform;      // NVIDIA's spelling: "linux-x86_64", "windows-x86_64", ...
    std::string extension;     // "tar.xz", "zip", "tgz", "whl", ...
    std::string wheel_project; // wheels: normalised project name, "nvidia-cudnn-cu12"
};

// Parses a file name (no folders). nullopt when it follows none of the known patterns.
std::optional<ArchiveName> parse_archive_name(std::string_view filename);

// The name of a redist archive's top folder ("cuda_nvcc-linux-x86_64-11.8.89-archive",
// "nccl_2.21.5-1+cuda12.4_x86_64") parses like the file name without its extension.
std::optional<ArchiveName> parse_archive_folder_name(std::string_view folder);

// "x64" / "windows10-x64" / "manylinux2014_x86_64" / "win_amd64" ... to NVIDIA's names.
std::string normalize_platform(std::string_view os, std::string_view arch);

// PEP 503 normalisation: lower case, runs of "-", "_", "." become "-".
std::string normalize_project_name(std::string_view name);

// The name a URL's download has in the cache: its last path segment, characters other than
// letters, digits, '.', '_' and '-' as '_' ("download" when nothing is left).
std::string basename_of_url(const std::string& url);

} // namespace cvm::install
