#pragma once
// What a failed write says: a full disk names the space left where the install is written.
#include <archive.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace cvm::install {

// "12 MB", rounded up.
std::string megabytes(std::uint64_t bytes);
// The folder to name for the disk being written (the store when extracting into its .staging).
std::filesystem::path disk_folder(const std::filesystem::path& root);
// " (N MB free in FOLDER)", or nothing when the space cannot be read.
std::string space_note(const std::filesystem::path& root);
// Throws InstallError for a failed write of `entry` of `archive_path` by `w` into `root`.
[[noreturn]] void write_failed(archive* w, const std::filesystem::path& archive_path,
                               const std::filesystem::path& root, const std::string& entry);

} // namespace cvm::install
