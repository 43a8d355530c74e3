#pragma once
// NVIDIA's Windows local installers are a 7-Zip archive behind an executable stub. libarchive
// looks for the 7-Zip signature behind a stub only between offsets 0x27000 and 0x60000, so
// cvm finds it itself, anywhere, and hands libarchive the file from the signature on.
#include "install/extract.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace cvm::install {

// True when the file starts with a DOS/PE executable header ("MZ").
bool is_windows_executable(const std::filesystem::path& file);

// The 7-Zip start header at `bytes` (at least 32 of them): true when the signature matches
// and its CRC holds; `next_end` is then where the archive ends, relative to the signature.
bool parse_7z_start_header(const unsigned char* bytes, std::uint64_t* next_end);

// The first 7-Zip archive in `file` whose start header is valid. Throws InstallError (input)
// naming the file: no 7-Zip archive inside, or one that runs past the end (truncated).
EmbeddedArchive find_7z_archive(const std::filesystem::path& file);

} // namespace cvm::install
