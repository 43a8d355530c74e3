#pragma once
// A zip's central directory, read from the complete file, and the check of files extracted
// again through it against its sizes and CRC-32s (zip_streamed.h compares a zip streamed
// through its local headers with it).
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

// After a zip was extracted again through its central directory: every file on disk below
// `root` must have the size and CRC-32 the central directory gives; throws InstallError (input).
void check_zip_data(const std::filesystem::path& zip, const std::filesystem::path& root,
                    const ExtractResult& extracted, const std::string& name);
// The same with the central directory already read.
void check_zip_data(const std::vector<ZipCentralEntry>& central, const std::filesystem::path& root,
                    const ExtractResult& extracted, const std::string& name);

} // namespace cvm::install
