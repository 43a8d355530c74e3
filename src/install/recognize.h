#pragma once
// Recognition of an extracted archive from its contents: which product (cuDNN, NCCL or a CUDA
// toolkit / component), which version, for which CUDA and which platform; cross-checked with
// what the file name claims, and a cuDNN build checked complete.
#include "install/archive_name.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cvm::install {

enum class ProductKind { Cuda, Cudnn, Nccl };

struct Recognized {
    ProductKind kind = ProductKind::Cudnn;
    std::optional<ArchiveFamily> family; // when the layout or the name tells it
    // cuDNN: four numbers when the build is known ("8.1.0.77"), else three from the header.
    // CUDA: the toolkit version ("11.8.0") when version.json tells it, else the component's.
    std::string version;
    std::string header_version; // cuDNN: MAJOR.MINOR.PATCHLEVEL from the header
    std::string
        cuda_variant; // cuDNN, NCCL: the CUDA it was built for ("11.2", "12", NCCL's "12.4")
    bool cuda_from_option = false; // cuda_variant is RecognizeOptions::cuda: nothing else said it
    std::string cuda_release;   // CUDA: MAJOR.MINOR of the toolkit ("11.8")
    std::string component;      // CUDA component key ("cuda_nvcc"), empty for a whole toolkit
    std::string platform;       // "linux-x86_64", ...
    std::filesystem::path content_root; // absolute: the folder that becomes the install root
    // Relative to content_root, '/'-separated, empty when absent.
    std::string include_dir, lib_dir, bin_dir;
    std::string evidence; // a short "from what" for messages ("include/cudnn_version.h")
};

// The platform a binary was built for (from its ELF or PE header), e.g. "linux-x86_64";
// nullopt when the file is neither. aarch64 ELF files report "linux-sbsa".
std::optional<std::string> binary_platform(const std::filesystem::path& file);

// True when two platform names describe the same OS and CPU ("linux-sbsa" ~ "linux-aarch64").
bool same_machine(const std::string& a, const std::string& b);

// Parses cudnn_version.h / cudnn.h text; returns "MAJOR.MINOR.PATCHLEVEL" or empty.
std::string parse_cudnn_header_version(const std::string& header_text);

// Sub-library file names a complete cuDNN of `major` holds on `os_windows` or Linux.
std::vector<std::string> cudnn_required_libraries(int major, bool windows);

struct RecognizeOptions {
    std::string host_platform;   // refuse builds for another machine; empty: no check
    std::string archive_display; // the archive's file name, for messages
    // `cvm install FILE --cuda 11.2`: the CUDA a cuDNN or NCCL build is for, where nothing of the
    // archive says it (a renamed legacy cuDNN); refused when the name, a library or the layout
    // says another. Empty: not given.
    std::string cuda;
};

// Inspects `extracted` (the folder an archive was extracted into) and the archive's name.
// Throws InstallError (input) when contents and name disagree, the build is for another
// platform, a cuDNN is incomplete, or nothing recognisable is inside.
Recognized recognize_extracted(const std::filesystem::path& extracted,
                               const std::optional<ArchiveName>& name,
                               const RecognizeOptions& options);

} // namespace cvm::install
