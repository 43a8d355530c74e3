#pragma once
// A zip's central directory, read from the complete file, and its comparison with what was
// extracted through the local headers while the file arrived (stream_extract.h). The two
// must agree on every name, type, size and CRC-32: a zip whose local headers say something
// else than its central directory (what other tools read) is refused.
#include "install/extract.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cvm::install {

struct ZipCentralEntry {
    std::string name; // as stored
    std::uint64_t size = 0;
    std::uint32_t crc32 = 0;
    bool directory = false;
    bool symlink = false;
    unsigned unix_mode = 0; // st_mode from the external attributes when made on Unix, else 0
};

// The entries of `zip`'s central directory (zip64 included). Throws InstallError (input) naming
// the file when it has none or it is malformed.
std::vector<ZipCentralEntry> read_zip_directory(const std::filesystem::path& zip);

enum class ZipAgreement {
    Same,         // every entry agrees; modes from the central directory were applied
    NeedsSeekable // symlinks (which a local header cannot show), or data whose size or CRC-32
                  // differs: to be extracted again through the central directory
};

// Compares what extract_archive_stream wrote below `root` from `zip` with its central directory;
// throws InstallError (input) naming the archive and the first entry whose name or type
// disagrees, or that only one of them lists.
ZipAgreement check_streamed_zip(const std::filesystem::path& zip, const std::filesystem::path& root,
                                const ExtractResult& streamed, const std::string& name);

// After a zip was extracted again through its central directory: every file on disk below
// `root` must have the size and CRC-32 the central directory gives; throws InstallError (input).
void check_zip_data(const std::filesystem::path& zip, const std::filesystem::path& root,
                    const ExtractResult& extracted, const std::string& name);

} // namespace cvm::install
