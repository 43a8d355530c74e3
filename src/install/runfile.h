#pragma once
// NVIDIA's Linux runfiles are makeself archives: a shell script whose first N lines are the
// header, followed by one or more compressed tar payloads. makeself writes N into the script
// (`head -n N "$0"`) and the payloads' sizes into `filesizes="..."`. cvm reads both from the
// header text and never runs the script.
#include "install/extract.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace cvm::install {

// True when the file starts like a makeself archive (a shell script naming makeself).
bool is_makeself_archive(const std::filesystem::path& file);

struct MakeselfHeader {
    std::uint64_t header_lines = 0;   // N of `head -n N`
    std::uint64_t payload_offset = 0; // bytes of those N lines
    std::uint64_t payload_size = 0;   // the sum of filesizes
    std::string label;                // label="..." (e.g. "CUDA Installer")
};

// Parses the header of `header_text` (the file's first bytes) without looking at the payload.
// Throws InstallError (input) naming `display` when the header lacks what makeself writes.
MakeselfHeader parse_makeself_header(const std::string& header_text, const std::string& display);

// Reads the header of `file` and checks that its payload lies inside the file. Throws
// InstallError (input): not a makeself archive, an offset past the end, a truncated payload.
EmbeddedArchive find_runfile_payload(const std::filesystem::path& file);

} // namespace cvm::install
