#pragma once
// NCCL's version as the library itself gives it, never as a file name says it:
//  - ncclGetVersion() at run time: X*1000+Y*100+Z up to 2.8 (2.8.4 -> 2804), X*10000+Y*100+Z
//    after (2.28.9 -> 22809), as nccl.h's NCCL_VERSION macro computes it;
//  - the text every libnccl carries in its read-only data, "NCCL version 2.28.9+cuda13.0", which
//    also names the CUDA it was built for.
// Standard C++ and the binary readers only: cvm-probe links it too.

#include "binary/byte_source.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace cvm::binary {

// 22809 -> {2, 28, 9}; 2804 -> {2, 8, 4}; nullopt for what no NCCL release returns.
std::optional<std::array<unsigned, 3>> decode_nccl_version_code(long long code);
// The inverse, as nccl.h's NCCL_VERSION(X, Y, Z).
long long nccl_version_code(unsigned major, unsigned minor, unsigned patch);

struct NcclBanner {
    std::array<unsigned, 3> version{};
    unsigned cuda_major = 0, cuda_minor = 0; // the CUDA it was built for; 0.0 when not said
    std::string text;                        // "NCCL version 2.28.9+cuda13.0"
    std::string version_text() const;        // "2.28.9"
    std::string cuda_text() const;           // "13.0", "" when not said
};

// The first "NCCL version X.Y.Z[suffix][+cudaM.m]" in `bytes`; nullopt when none.
std::optional<NcclBanner> find_nccl_banner(std::string_view bytes);
// The banner of a library file: its ELF read-only data sections, else the whole file, read in
// pieces (a libnccl is hundreds of MB, mostly GPU code that is never read).
std::optional<NcclBanner> read_nccl_banner(const ByteSource& file);
std::optional<NcclBanner> read_nccl_banner_file(const std::string& path);

} // namespace cvm::binary
